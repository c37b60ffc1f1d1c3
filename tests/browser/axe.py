"""axe-core (pinned in package.json) in a Playwright page: WCAG 2.1 A and AA, and who owns each failure.

Ownership is decided per failing node, by where it sits in the page:
- on a page the course writes whole (the class report, a feedback page, `gradtutor
  export-html`: our templates and our CSS on top of nbconvert's), every node is the course's;
- in JupyterLab, a node inside a notebook's rendered Markdown (the lesson text) or inside a code
  cell's output area (our feedback, review() table, graph drawings, plots and widgets) is the
  course's, except the parts ipywidgets draws that no widget option reaches (UPSTREAM); every
  other node (editors, prompts, toolbars, side bars, menus, the status bar) is JupyterLab's.
axe reads text contrast only for what is on screen (it looks through elementsFromPoint), and
JupyterLab scrolls the notebook inside a panel, so in JupyterLab the colour contrast is read
screen by screen while the notebook is scrolled from top to bottom. Even so axe leaves text in
JupyterLab's output areas "to review" rather than failing it (the chain-rule stepper's dark
text on the dark theme's background passed unflagged), so the course's own text in JupyterLab
is also measured directly (``own-color-contrast``): each text node's computed colour against
the background its ancestors paint, WCAG's formula, 4.5:1 (3:1 for large text).
Course-owned failures fail the tests; the others are listed in the test's output (and in
docs/accessibility.md), not counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
AXE = REPO / "node_modules" / "axe-core" / "axe.min.js"
WCAG21_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]

# Where in JupyterLab the course's own content lives (rendered lesson Markdown, cell outputs).
COURSE_IN_LAB = ".jp-MarkdownOutput, .jp-OutputArea-output"
# Nodes inside the course's content whose failing part only upstream can change: the slider
# handle noUiSlider draws (ipywidgets passes it no aria-label / aria-labelledby; each slider has
# a named number box beside it, see docs/accessibility.md).
UPSTREAM = {".noUi-handle": "ipywidgets: a slider's handle gets no accessible name"}

_RUN_JS = """async ([only, course, upstream]) => {
    const result = await axe.run(document, {runOnly: only, resultTypes: ['violations']});
    const owner = (target) => {
        if (course === null) return 'course';
        let el = null;
        try { el = document.querySelector(target[target.length - 1]); } catch (e) {}
        if (el === null || !el.closest(course)) return 'jupyterlab';
        for (const [selector, why] of Object.entries(upstream)) {
            if (el.matches(selector) || el.closest(selector)) return 'upstream: ' + why;
        }
        return 'course';
    };
    return result.violations.map(v => ({
        id: v.id, impact: v.impact,
        nodes: v.nodes.map(n => ({target: n.target.join(' '), owner: owner(n.target),
                                  html: n.html.slice(0, 200), summary: n.failureSummary}))}));
}"""


@dataclass(frozen=True)
class Failure:
    rule: str
    impact: str
    target: str
    owner: str
    html: str
    summary: str

    def line(self) -> str:
        return f"{self.rule} ({self.impact}) [{self.owner}] {self.target}: {self.html[:120]}"


# the open notebook's scrolling panel
_SCROLLER = "() => document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer')"


_OWN_CONTRAST_JS = "\n".join(line for line in (Path(__file__).parent / "contrast.js").read_text()
                             .splitlines() if not line.startswith("//"))


def _own_contrast(page: Any) -> list[Failure]:
    return [Failure("own-color-contrast", "serious", f["html"][:80], f["owner"], f["html"],
                    f["summary"]) for f in page.evaluate(_OWN_CONTRAST_JS, [COURSE_IN_LAB, UPSTREAM])]


def _run(page: Any, only: dict, lab: bool) -> list[Failure]:
    found = page.evaluate(_RUN_JS, [only, COURSE_IN_LAB if lab else None, UPSTREAM])
    return [Failure(v["id"], v["impact"], n["target"], n["owner"], n["html"], n["summary"] or "")
            for v in found for n in v["nodes"]]


def _contrast_screen_by_screen(page: Any) -> list[Failure]:
    """color-contrast at each screenful of the open notebook, from the top down."""
    found: list[Failure] = []
    top, steps = 0, 0
    while True:
        page.evaluate(f"top => ({_SCROLLER})().scrollTop = top", top)
        page.wait_for_timeout(150)  # let the browser lay the new screen out
        found += _run(page, {"type": "rule", "values": ["color-contrast"]}, lab=True)
        at, most, screen = page.evaluate(f"() => {{ const s = ({_SCROLLER})(); return "
                                         "[s.scrollTop, s.scrollHeight - s.clientHeight, s.clientHeight]; }")
        steps += 1
        if at >= most or steps > 400:
            break
        top = at + max(100, screen - 50)
    page.evaluate(f"() => {{ ({_SCROLLER})().scrollTop = 0; }}")
    return found


def audit(page: Any, *, lab: bool) -> list[Failure]:
    """Every WCAG 2.1 A/AA violation axe finds in the page, one Failure per node."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    failures = _run(page, {"type": "tag", "values": WCAG21_AA}, lab)
    if lab:
        failures += _contrast_screen_by_screen(page) + _own_contrast(page)
    unique = {(f.rule, f.target, f.html): f for f in failures}  # a node seen on two screens
    return list(unique.values())


def course_owned(failures: list[Failure]) -> list[Failure]:
    return [f for f in failures if f.owner == "course"]


def counts(failures: list[Failure]) -> dict[str, int]:
    """'owner: rule (impact)' -> nodes, for the test's output and the docs' table."""
    out: dict[str, int] = {}
    for f in failures:
        key = f"{f.owner.split(':')[0]}: {f.rule} ({f.impact})"
        out[key] = out.get(key, 0) + 1
    return dict(sorted(out.items()))


def report(name: str, failures: list[Failure]) -> str:
    lines = [f"axe WCAG 2.1 AA on {name}: {len(failures)} failing node(s)"]
    lines += [f"  {k}: {n}" for k, n in counts(failures).items()]
    lines += ["  " + f.line() for f in course_owned(failures)[:40]]
    return "\n".join(lines)
