"""WCAG 2.1 A and AA, measured with axe-core in Debian's Chromium, on what a student reads.

The class report and a feedback page (a graded demo class), `gradtutor export-html` of two
chapters, and a lesson in real JupyterLab in the light and the dark theme. A test fails on any
course-owned violation; JupyterLab's own (and ipywidgets' parts no widget option reaches) are
printed and saved to artifacts/browser/axe-*.json, not counted. tests/browser/axe.py says how
a node's owner is decided; docs/accessibility.md keeps the numbers.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from browser.axe import AXE, audit, counts, course_owned, report
from browser.lab import open_notebook, run_all
from test_browser import ARTIFACTS, GRADTUTOR, shot

from autograder.visual.widgets import num

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "gradtutor.cli"]
EXPORTED = ["ch01_graphs", "ch04_vjp"]
# lessons with widgets: ch01 (tangent explorer, chain-rule stepper), ch04 (vjp explorer)
LAB_LESSONS = ["ch01_graphs", "ch04_vjp"]
THEMES = {"light": "JupyterLab Light", "dark": "JupyterLab Dark"}


def checked(name: str, failures) -> None:
    """Print and save the audit; fail on the course's own violations."""
    print(report(name, failures))
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / f"axe-{name}.json").write_text(json.dumps(
        {"counts": counts(failures), "nodes": [f.__dict__ for f in failures]}, indent=1))
    mine = course_owned(failures)
    assert mine == [], f"{len(mine)} course-owned WCAG 2.1 AA failure(s) on {name}:\n" + \
        "\n".join(f.line() + "\n    " + f.summary.replace("\n", "\n    ") for f in mine[:25])


@pytest.fixture(scope="module")
def context(browser):
    assert AXE.is_file(), f"{AXE} is missing: run make node_modules (npm ci)"
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    yield ctx
    ctx.close()


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory) -> Path:
    """A demo class of three students, graded, with its report and feedback pages."""
    course = tmp_path_factory.mktemp("a11y") / "course"
    for args in (["demo-class", str(course), "--students", "3", "--seed", "7",
                  "--assignment", "ch01_graphs"], ["grade", str(course), "--workers", "1"],
                 ["report", str(course)], ["feedback", str(course)]):
        done = subprocess.run(CLI + args, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, f"{args[0]}: {done.stderr[-2000:]}"
    return course


def test_class_report_has_no_violations(context, graded_class):
    page = context.new_page()
    page.goto((graded_class / "reports" / "report.html").as_uri())
    checked("report", audit(page, lab=False))
    page.close()


def test_feedback_pages_have_no_violations(context, graded_class):
    pages = sorted((graded_class / "feedback").glob("*/ch01_graphs/*.html"))
    assert pages, "no feedback pages were written"
    page = context.new_page()
    for path in pages[:2]:  # our own feedback.html and our block in nbgrader's page
        page.goto(path.as_uri())
        checked(f"feedback-{path.parent.parent.name}-{path.stem}", audit(page, lab=False))
    page.close()


@pytest.mark.parametrize("chapter", EXPORTED)
def test_exported_chapter_has_no_violations(context, tmp_path, chapter: str):
    out = tmp_path / f"{chapter}.html"
    done = subprocess.run([str(GRADTUTOR), "export-html", str(REPO / "solutions" / f"{chapter}.ipynb"),
                           "--execute", "-o", str(out)], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    page = context.new_page()
    page.goto(out.as_uri())
    page.locator(".gradtutor-widget").first.wait_for(timeout=60_000)
    page.locator("mjx-container").first.wait_for(timeout=60_000)
    checked(f"export-{chapter}", audit(page, lab=False))
    page.close()


def set_theme(page, theme: str) -> None:
    page.evaluate("t => window.jupyterapp.commands.execute('apputils:change-theme', {theme: t})",
                  theme)
    page.wait_for_function("t => document.body.dataset.jpThemeName === t", arg=theme,
                           timeout=60_000)
    page.wait_for_timeout(1000)  # the theme's stylesheet applies after the attribute changes


@pytest.mark.parametrize("lesson", LAB_LESSONS)
def test_lesson_in_jupyterlab_in_both_themes(browser, lab, lesson: str):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    try:
        open_notebook(page, lab, f"course/{lesson}.ipynb")
        run_all(page)
        page.locator(".gradtutor-widget").first.wait_for(timeout=60_000)
        # what the contrast walk must have read in both themes, shown: not a pass by absence
        for part in (".gradtutor-review tr", ".gradtutor-feedback", ".gradtutor-widget",
                     ".gradtutor-widget .widget-html-content[aria-live]", ".gradtutor-entry input"):
            assert page.locator(part).first.is_visible(), f"{lesson}: no {part} to audit"
        audits = {}
        for name, theme in THEMES.items():
            set_theme(page, theme)
            page.screenshot(path=str(ARTIFACTS / f"a11y-lab-{lesson}-{name}.png"))
            audits[name] = audit(page, lab=True)
        set_theme(page, THEMES["light"])  # the server's settings outlive this test
        for name, failures in audits.items():
            print(report(f"lab-{lesson}-{name}", failures))
        for name, failures in audits.items():
            checked(f"lab-{lesson}-{name}", failures)
    finally:
        context.close()
        lab.shutdown_kernels()


def _same_region_after(box, act, fragment: str, timeout: float = 30.0) -> str:
    """Mark the widget's live region, act, wait for ``fragment`` in it: the marked node still
    holds the text (updated in place, not re-created), live, with no region nested inside."""
    region = box.locator(".widget-html-content[aria-live='polite'][role='status']")
    region.wait_for(timeout=30_000)
    assert box.locator("[aria-live]").count() == 1, "one live region per widget"
    region.evaluate("e => { e.dataset.probe = 'before'; }")
    act()
    deadline = time.monotonic() + timeout
    while fragment not in (text := re.sub(r"\s+", " ", region.inner_text())):
        assert time.monotonic() < deadline, f"{fragment!r} never appeared in: {text}"
        time.sleep(0.2)
    assert box.locator("[data-probe='before']").count() == 1  # the same node, now with the new text
    assert region.evaluate("e => e.querySelectorAll('[aria-live], [role], img').length") == 0
    return text


def test_sliders_have_named_boxes_and_results_update_one_live_region(browser, lab):
    """The number box beside a slider is named by the slider's label and moves it; a widget's
    result and the stepper's step text change inside one live region that stays in the page."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    try:
        open_notebook(page, lab, "demo.ipynb")
        run_all(page)
        tangent = page.locator(".jp-CodeCell", has_text="# widget: tangent_explorer") \
            .locator(".gradtutor-widget")
        entry = tangent.get_by_role("spinbutton", name="x", exact=True)
        assert float(entry.input_value()) == float(tangent.locator(".widget-readout").inner_text())

        def type_x() -> None:
            entry.fill("1.5")
            entry.press("Enter")

        text = _same_region_after(tangent, type_x, f" x {num(1.5)} f(x)")
        assert f"f(x) {num(1.5**3 - 2 * 1.5)} " in text  # the kernel computed at the typed x
        assert tangent.locator(".widget-readout").inner_text() == "1.50"  # the slider followed

        stepper = page.locator(".jp-CodeCell", has_text="# widget: chain_rule_stepper") \
            .locator(".gradtutor-widget")
        for name in ("x", "y", "step"):
            assert stepper.get_by_role("spinbutton", name=name, exact=True).count() == 1, name
        assert "Step 0 of 8." in stepper.locator("[aria-live]").inner_text()
        _same_region_after(stepper, lambda: stepper.get_by_role("button", name="Next ▶").click(),
                           "Step 1 of 8.")
        assert stepper.get_by_role("spinbutton", name="step", exact=True).input_value() == "1"
        shot(stepper, "a11y-stepper-after-next")
    finally:
        context.close()
        lab.shutdown_kernels()
