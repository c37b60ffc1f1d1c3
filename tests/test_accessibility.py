"""WCAG 2.1 A and AA, measured with axe-core in Debian's Chromium, on what a student reads.

The class report and a feedback page (a graded demo class), `gradtutor export-html` of two
chapters, and a lesson in real JupyterLab in the light and the dark theme. A test fails on any
course-owned violation; JupyterLab's own (and ipywidgets' parts no widget option reaches) are
printed and saved to artifacts/browser/axe-*.json, not counted. tests/browser/axe.py says how
a node's owner is decided; docs/accessibility.md keeps the numbers.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from browser.axe import AXE, audit, counts, course_owned, report
from browser.lab import open_notebook, run_all
from test_browser import ARTIFACTS, GRADTUTOR

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "gradtutor.cli"]
EXPORTED = ["ch01_graphs", "ch04_vjp"]
LAB_LESSON = "ch01_graphs"
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


def test_lesson_in_jupyterlab_in_both_themes(browser, lab):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    try:
        open_notebook(page, lab, f"course/{LAB_LESSON}.ipynb")
        run_all(page)
        page.locator(".gradtutor-widget").first.wait_for(timeout=60_000)
        audits = {}
        for name, theme in THEMES.items():
            set_theme(page, theme)
            page.screenshot(path=str(ARTIFACTS / f"a11y-lab-{name}.png"))
            audits[name] = audit(page, lab=True)
        set_theme(page, THEMES["light"])  # the server's settings outlive this test
        for name, failures in audits.items():
            print(report(f"lab-{LAB_LESSON}-{name}", failures))
        for name, failures in audits.items():
            checked(f"lab-{LAB_LESSON}-{name}", failures)
    finally:
        context.close()
        lab.shutdown_kernels()
