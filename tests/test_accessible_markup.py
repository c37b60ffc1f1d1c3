"""The markup behind issue #29, without a browser: described figures, named and announced
widgets, colours set with their background, and an export with no tab stop per cell.

tests/test_accessibility.py measures the same pages with axe-core in Chromium (marked browser).
"""

from __future__ import annotations

import re
import sys
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import ipywidgets
import matplotlib.pyplot as plt
import pytest

from autograder import (
    accumulation_stepper,
    chain_rule_stepper,
    clip_explorer,
    descent_stepper,
    describe_plot,
    kink_explorer,
    meta_gradient_explorer,
    tangent_explorer,
    vjp_explorer,
)
from autograder.selfcheck import Review, check
from autograder.visual.widgets import STABLE_LIVE_HOOK, num
from gradtutor.authoring import export_html as export

REPO = Path(__file__).resolve().parents[1]
WIDGETS = (tangent_explorer, chain_rule_stepper, kink_explorer, accumulation_stepper,
           vjp_explorer, descent_stepper, meta_gradient_explorer, clip_explorer)


# ---------------------------------------------------------------- widgets

@pytest.mark.parametrize("make", WIDGETS, ids=lambda f: f.__name__)
def test_every_widget_plot_has_words_and_its_result_is_a_live_region(make):
    box = make()
    words = box.plot.tooltip
    assert words and not words.startswith("Plot: ")  # its own description, not the fallback
    # ipywidgets puts the tooltip on the <img> as its title only if description is "" (not None)
    assert box.plot.get_state()["description"] == ""
    assert box.readout.value.startswith('<div role="status" aria-live="polite">')
    named = [c for c in box.controls.values()
             if isinstance(c, ipywidgets.widgets.widget_description.DescriptionWidget)]
    assert all(c.description for c in named)  # each slider and drop-down has its label


SLIDERS = (ipywidgets.FloatSlider, ipywidgets.IntSlider, ipywidgets.FloatLogSlider)


@pytest.mark.parametrize("make", WIDGETS, ids=lambda f: f.__name__)
def test_every_slider_has_a_number_box_named_by_its_label_and_linked_to_it(make):
    box = make()
    sliders = {name: c for name, c in box.controls.items() if isinstance(c, SLIDERS)}
    assert sliders and set(box.entries) == set(sliders)
    bar = box.children[1]
    for name, slider in sliders.items():
        entry = box.entries[name]
        assert isinstance(entry, (ipywidgets.BoundedFloatText, ipywidgets.BoundedIntText))
        assert entry.description == slider.description  # its <label for=...>: the name
        assert entry.value == slider.value
        assert entry.link.source == (slider, "value") and entry.link.target == (entry, "value")
        assert any(w.children == (slider, entry) for w in bar.children
                   if isinstance(w, ipywidgets.HBox))  # side by side, wrapping together
        if isinstance(slider, ipywidgets.FloatLogSlider):
            assert (entry.min, entry.max) == (slider.base**slider.min, slider.base**slider.max)
        else:
            assert (entry.min, entry.max) == (slider.min, slider.max)


def test_the_result_carries_one_hook_that_makes_its_region_stable():
    box = tangent_explorer()
    box.controls["x"].value = 0.5
    assert box.readout.value.count(STABLE_LIVE_HOOK) == 1
    assert box.readout.value.endswith(STABLE_LIVE_HOOK + "</div>")  # inside the fallback region
    found: list[dict] = []

    class Tags(HTMLParser):
        def handle_starttag(self, tag, attrs):
            found.append({"tag": tag, **dict(attrs)})

    Tags().feed(STABLE_LIVE_HOOK)  # one hidden image whose handler survives HTML parsing whole
    (img,) = found
    assert img["tag"] == "img" and "hidden" in img and img["alt"] == "" and img["src"] == "data:,"
    assert img["onerror"].startswith("var c=this.closest('.widget-html-content');")
    assert img["onerror"].endswith("drop();")


def test_the_words_change_with_the_plot():
    box = tangent_explorer()
    box.controls["x"].value = 1.75
    assert f"x = {num(1.75)}" in box.plot.tooltip
    assert f"slope is {num(box.numbers['grad'])}" in box.plot.tooltip
    stepper = chain_rule_stepper(x0=2.0, y0=3.0)
    assert "x·y not computed yet" in stepper.plot.tooltip
    for _ in range(8):
        stepper.controls["Next ▶"].click()
    assert "step 8 of 8" in stepper.plot.tooltip and "x.grad = 3.0 + 4.0 = 7.0" in stepper.plot.tooltip
    assert "Step 8 of 8." in stepper.readout.value  # the step text is in the live region


def _bare_colours(markup: str) -> list[str]:
    """Text colours that are neither the theme's variable nor set with their own background."""
    found = []
    for style in re.findall(r"style=[\"']([^\"']*)[\"']", markup):
        colour = re.search(r"(?<![-\w])color:\s*([^;]+)", style)
        if colour and not colour.group(1).startswith("var(--jp-") and "background" not in style:
            found.append(style)
    return found


@pytest.mark.parametrize("make", WIDGETS, ids=lambda f: f.__name__)
def test_widget_text_reads_in_light_and_dark_themes(make):
    box = make()
    header = box.children[0].value
    assert _bare_colours(box.readout.value + header) == []


def test_a_verdict_colour_comes_with_its_background():
    wrong = tangent_explorer(lambda t: t**2, df=lambda x: 3 * x, x0=1.0)  # a wrong hand derivative
    assert "They differ" in wrong.readout.value
    assert re.search(r"color:#a40e26;background:#ffebe9[^>]*>They differ", wrong.readout.value)


# ---------------------------------------------------------------- lesson plots

def test_describe_plot_shows_the_words_as_alt_text_once():
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    shown = describe_plot(fig, 'a line from (0, 0) to (1, 1) & "up"')
    assert fig.number not in plt.get_fignums()  # the inline backend will not show it again
    bundle = shown._repr_mimebundle_()
    assert 'alt="a line from (0, 0) to (1, 1) &amp; &quot;up&quot;"' in bundle["text/html"]
    assert "The plot in words" in bundle["text/html"] and bundle["image/png"]
    assert bundle["text/plain"] == repr(shown) == 'a line from (0, 0) to (1, 1) & "up"'


def test_every_lesson_plot_is_described():
    for lesson in sorted((REPO / "exercises").glob("ch*/lesson.md")):
        text = lesson.read_text()
        assert "plt.show()" not in text, f"{lesson.parent.name} shows a plot without words"
        plots = len(re.findall(r"plt\.(?:subplots|figure)\(", text))
        assert text.count("describe_plot(") >= plots, lesson.parent.name


# ---------------------------------------------------------------- review() and feedback

def test_review_rows_set_their_text_colour_with_their_background():
    table = Review([check("leaves_xy", ...)])._repr_html_()
    rows = re.findall(r'<tr style="([^"]*)"', table)
    assert rows and all("background:" in r and "color:" in r for r in rows)


def test_review_late_warning_sets_its_colour_with_its_background():
    late = Review([check("leaves_xy", ...)])
    late.late = datetime(2026, 1, 1, tzinfo=UTC)
    (style,) = re.findall(r'<p class="gradtutor-late" style="([^"]*)"', late._repr_html_())
    assert "background:" in style and "color:" in style


# ---------------------------------------------------------------- the students' JupyterLab

STUDENT = REPO / "jupyter" / "student"
THEMES = Path(sys.prefix) / "share" / "jupyter" / "lab" / "themes" / "@jupyterlab"
NAMED = {"white": "#ffffff", "red": "#ff0000", "green": "#008000", "blue": "#0000ff"}


def _variables(css: str, known: dict[str, str] | None = None) -> dict[str, str]:
    """--name: value pairs; var(--x) is read as x's value here (or in ``known``), else as its
    fallback, as the theme's page has no --md-* palette set."""
    found = dict(re.findall(r"--([\w-]+):\s*([^;}]+)", css))
    scope = {**(known or {}), **found}

    def value(v: str) -> str:
        ref = re.fullmatch(r"var\(--([\w-]+)(?:,\s*([^)]+))?\)", v.strip())
        if ref is None:
            return NAMED.get(v.strip(), v.strip())
        name, fallback = ref.groups()
        return value(scope[name]) if name in scope else value(fallback or "")
    return {k: value(v) for k, v in found.items()}


def _ratio(a: str, b: str) -> float:
    def lum(h: str) -> float:
        h = h.lstrip("#")
        h = "".join(c * 2 for c in h) if len(h) == 3 else h
        rgb = [int(h[i:i + 2], 16) / 255 for i in (0, 2, 4)]
        lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
    x, y = sorted((lum(a), lum(b)))
    return (y + 0.05) / (x + 0.05)


@pytest.mark.parametrize("theme,name", [("theme-light-extension", "JupyterLab Light"),
                                        ("theme-dark-extension", "JupyterLab Dark")])
def test_code_colours_read_at_4_5_in_the_students_jupyterlab(theme, name):
    """Every --jp-mirror-editor-* colour of the installed theme, with the course's stylesheet
    over it, against the theme's page and code-cell backgrounds (editors and Markdown code)."""
    ours = (STUDENT / "custom" / "custom.css").read_text()
    block = re.search(re.escape(f'data-jp-theme-name="{name}"]') + r"\s*{([^}]*)}", ours).group(1)
    base = _variables((THEMES / theme / "index.css").read_text())
    colours = {k: v for k, v in {**base, **_variables(block, base)}.items()
               if k.startswith("jp-mirror-editor-") and k.endswith("-color")}
    assert len(colours) >= 20 and all(v.startswith("#") for v in colours.values()), colours
    papers = (base["jp-layout-color0"], base["jp-cell-editor-background"])
    low = {k: round(min(_ratio(v, p) for p in papers), 2) for k, v in colours.items()
           if min(_ratio(v, p) for p in papers) < 4.5}
    assert low == {}, f"{name}: below 4.5:1 on {papers}: {low}"


def test_the_students_jupyterlab_loads_the_course_stylesheet():
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("jupyter_server_config.py", str(STUDENT)).load_config()
    assert config.LabApp.custom_css is True
    (folder,) = config.ServerApp.static_custom_path
    assert (Path(folder) / "custom.css").samefile(STUDENT / "custom" / "custom.css")


# ---------------------------------------------------------------- export-html

def test_untabbed_drops_only_the_tab_stop_per_cell():
    page = ('<div class="jp-Cell-inputWrapper" tabindex="0"><div class="x" tabindex="0">'
            '<div class="jp-OutputArea-output jp-RenderedText" data-mime-type="text/plain" '
            'tabindex="0">')
    assert export.untabbed(page) == (
        '<div class="jp-Cell-inputWrapper"><div class="x" tabindex="0">'
        '<div class="jp-OutputArea-output jp-RenderedText" data-mime-type="text/plain">')


def test_exported_page_has_no_tab_stop_per_cell_and_readable_prompts(tmp_path):
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

    cells = [new_markdown_cell("# A lesson"),
             new_code_cell("1 + 1", execution_count=1, outputs=[new_output(
                 "execute_result", {"text/plain": "2"}, execution_count=1)])]
    nb = tmp_path / "lesson.ipynb"
    nbformat.write(new_notebook(cells=cells), nb)
    page, _ = export.export_html(nb)
    text = page.read_text()
    assert "jp-Cell-inputWrapper" in text and "jp-OutputArea-output" in text
    assert 'tabindex="0"' not in text
    assert "<main>" in text
    assert "color: #616161" in text  # the prompts: 6.2:1 instead of #b0b0b0's 2.16:1
    assert "setAttribute('aria-label'" in text  # slider handles get their widget's label
