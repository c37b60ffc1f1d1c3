// The course's own text in JupyterLab: computed colour against the background its ancestors
// paint, WCAG 2.1's contrast formula (tests/browser/axe.py reads this file); each failing node's
// owner: 'course', or 'upstream: why' inside a node of the upstream map (selector -> why).
([course, upstream]) => {
    const parse = c => { const m = c.match(/rgba?\(([^)]+)\)/); if (!m) return null;
                         const p = m[1].split(',').map(Number); return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1]; };
    const over = (top, under) => [0, 1, 2].map(i => top[i] * top[3] + under[i] * (1 - top[3])).concat([1]);
    const lum = rgb => { const f = c => { c /= 255; return c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4); };
                         return 0.2126 * f(rgb[0]) + 0.7152 * f(rgb[1]) + 0.0722 * f(rgb[2]); };
    const paper = el => {
        const layers = [];
        for (let e = el; e; e = e.parentElement) {
            const c = parse(getComputedStyle(e).backgroundColor);
            if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
        }
        return layers.reverse().reduce((under, top) => over(top, under), [255, 255, 255, 1]);
    };
    const out = new Map();
    const measure = (el, text) => {
        const st = getComputedStyle(el);
        if (st.visibility === 'hidden' || el.getClientRects().length === 0) return;
        const bg = paper(el), fg = over(parse(st.color), bg);
        const [a, b] = [lum(fg), lum(bg)];
        const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
        const size = parseFloat(st.fontSize), bold = parseInt(st.fontWeight) >= 700;
        const need = (size >= 24 || (bold && size >= 18.66)) ? 3 : 4.5;
        const why = Object.entries(upstream).find(([sel]) => el.matches(sel) || el.closest(sel));
        if (ratio < need) out.set(el, {html: el.outerHTML.slice(0, 200), owner: why ? 'upstream: ' + why[1] : 'course',
            summary: `contrast ${ratio.toFixed(2)}:1 < ${need}:1, text ${st.color} on rgb(${bg.slice(0, 3).map(Math.round)}): ` + text.slice(0, 60)});
    };
    for (const root of document.querySelectorAll(course)) {
        const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
        for (let t = walk.nextNode(); t; t = walk.nextNode()) {
            const el = t.parentElement;
            if (!t.textContent.trim() || !el || out.has(el) || el.closest('svg, mjx-container')) continue;
            measure(el, t.textContent.trim());
        }
        // what a student types into a widget's box is text too (its value is no text node)
        for (const box of root.querySelectorAll('input[type=number], input[type=text], textarea')) {
            if (box.value.trim()) measure(box, box.value.trim());
        }
    }
    return [...out.values()];
}
