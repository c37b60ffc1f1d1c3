"""Real JupyterLab in Debian's Chromium: the demo notebook, every course notebook, the export.

One JupyterLab server for the whole session, on 127.0.0.1 with a token, in a temporary root.
Screenshots go to artifacts/browser/ (ignored by git) so a failure can be looked at.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
import torch
from browser.demo import EXERCISE, WIDGETS, write_demo
from browser.lab import (
    error_outputs,
    open_notebook,
    rendered_widgets,
    run_all,
    widget_failures,
    widget_outputs,
)

from autograder.visual.widgets import num
from gradtutor.key import registry

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = REPO / "artifacts" / "browser"
GRADTUTOR = Path(sys.executable).with_name("gradtutor")
COURSE_NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
# the session's `lab` and `browser` are in tests/conftest.py: one of each for every browser test


@pytest.fixture
def page(browser, lab):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    yield context.new_page()
    context.close()
    lab.shutdown_kernels()


def shot(target, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    target.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def widget(page, name: str):
    """The rendered widget of the demo cell that calls ``name``."""
    cell = page.locator(".jp-CodeCell", has_text=f"# widget: {name}")
    return cell.locator(".gradtutor-widget")


def readout_text(box) -> str:
    return re.sub(r"\s+", " ", box.locator(".widget-html-content").last.inner_text())


def settled_value(box, timeout: float = 30.0) -> float:
    """The slider's value once the kernel has answered it (the readout shows the same x)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        x = float(box.locator(".widget-readout").inner_text())
        if f" x {num(x)} f(x)" in readout_text(box):
            return x
        time.sleep(0.2)
    raise AssertionError(f"the widget never showed x = {x}: {readout_text(box)}")


def wait_for_text(box, fragment: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while fragment not in readout_text(box):
        if time.monotonic() > deadline:
            raise AssertionError(f"{fragment!r} never appeared in: {readout_text(box)}")
        time.sleep(0.2)


def assert_widgets_rendered(page) -> int:
    """Every widget output holds a live widget view; none shows a failure message."""
    expected = widget_outputs(page)
    assert rendered_widgets(page) == expected, "a widget output did not render"
    assert widget_failures(page) == []
    return expected


@pytest.fixture(scope="module")
def demo(browser, lab):
    """The demo notebook, opened and run once for the tests below (they go on from there)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    open_notebook(page, lab, "demo.ipynb")
    run_all(page)
    shot(page, "demo-after-run-all")
    yield page
    context.close()
    lab.shutdown_kernels()


def test_demo_runs_and_every_widget_and_the_graph_render(demo):
    page = demo
    assert error_outputs(page) == []
    assert assert_widgets_rendered(page) == len(WIDGETS)
    for name in WIDGETS:
        box = widget(page, name)
        assert box.count() == 1, f"{name} did not render"
        img = box.locator("img.widget-image")
        assert img.evaluate("i => i.complete && i.naturalWidth > 100"), f"{name} has no plot"
        box.scroll_into_view_if_needed()
        shot(box, f"widget-{name}")

    graph = page.locator(".gradtutor-graph img")
    assert graph.get_attribute("alt").startswith("In words: the graph has 5 boxes.")
    assert graph.evaluate("i => i.naturalWidth > 100")


def test_filling_an_answer_turns_the_self_check_green(demo):
    page = demo
    # the self-check first says "not answered"; fill the answer with the unit's solution
    ex = registry.get(EXERCISE)
    assert page.locator(".gradtutor-feedback.gradtutor-not_answered").count() == 1
    answer = page.locator(".jp-CodeCell", has_text=ex.starter().splitlines()[0])
    editor = answer.locator(".cm-content")
    editor.click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(ex.solution)  # like a paste: no auto-indent
    page.keyboard.press("Shift+Enter")  # run the answer cell, land on the check cell
    page.keyboard.press("Shift+Enter")  # run the self-check
    verdict = page.locator(".gradtutor-feedback.gradtutor-correct")
    verdict.wait_for(timeout=60_000)
    assert "Correct" in verdict.inner_text()
    verdict.scroll_into_view_if_needed()
    shot(page.locator(".jp-CodeCell", has_text=f'check("{ex.id}"'), "self-check-correct")


def test_moving_a_slider_changes_the_plot_and_the_numbers(demo):
    page = demo
    box = widget(page, "tangent_explorer")
    box.scroll_into_view_if_needed()
    img = box.locator("img.widget-image")
    before_src, before_text = img.get_attribute("src"), readout_text(box)
    handle = box.locator(".noUi-handle")
    handle.focus()
    for _ in range(6):
        handle.press("ArrowRight")
    x = settled_value(box)
    assert img.get_attribute("src") != before_src  # a new plot
    assert x == pytest.approx(1.0 + 6 * 6.0 / 240)  # six steps of the slider from x0 = 1
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    (t**3 - 2 * t).backward()
    after = readout_text(box)
    assert after != before_text
    shown_grad = float(re.search(r"autograd f′\(x\) (\S+)", after).group(1))
    shown_analytic = float(re.search(r"analytic f′\(x\) (\S+)", after).group(1))
    assert shown_grad == pytest.approx(t.grad.item(), abs=1e-3)  # four digits on screen
    assert shown_analytic == pytest.approx(3 * x**2 - 2, abs=1e-3)
    shot(box, "tangent-after-slider")


def test_clicking_a_button_takes_a_step(demo):
    page = demo
    descent = widget(page, "descent_stepper")
    descent.scroll_into_view_if_needed()
    descent.get_by_role("button", name="Step", exact=True).click()
    w = torch.tensor(1.0, requires_grad=True)
    ((w - 3) ** 2).backward()
    expected = num((w - 0.1 * w.grad).item())
    wait_for_text(descent, "steps taken 1 ")
    assert f"w {expected} " in readout_text(descent)
    shot(descent, "descent-after-one-step")


@pytest.mark.parametrize("notebook", COURSE_NOTEBOOKS, ids=lambda p: p.stem)
def test_course_notebook_runs_in_lab(lab, page, notebook: Path):
    open_notebook(page, lab, f"course/{notebook.name}")
    run_all(page)
    shot(page, f"course-{notebook.stem}")
    errors = error_outputs(page)
    assert errors == [], f"{notebook.name} shows errors:\n" + "\n---\n".join(errors)[:3000]
    assert_widgets_rendered(page)


def test_exported_page_shows_the_widgets_offline(browser, tmp_path):
    """`gradtutor export-html --execute` -> a page that works from file:// with no network."""
    write_demo(tmp_path)
    done = subprocess.run([str(GRADTUTOR), "export-html", str(tmp_path / "demo.ipynb"),
                           "--execute", "-o", str(tmp_path / "page" / "demo.html")],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    page_file = tmp_path / "page" / "demo.html"
    assert "cdn." not in page_file.read_text()  # no CDN script left in the page

    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    blocked: list[str] = []

    def offline(route) -> None:  # the network is gone: only the page's own files load
        if route.request.url.startswith(("file:", "data:", "blob:")):
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    context.route("**/*", offline)
    page = context.new_page()
    try:
        page.goto(page_file.as_uri())
        page.locator(".gradtutor-widget").first.wait_for(timeout=60_000)
        boxes = page.locator(".gradtutor-widget")
        assert boxes.count() == len(WIDGETS)
        slider = page.locator(".gradtutor-widget .widget-slider").first
        slider.wait_for(state="visible")
        assert slider.locator(".widget-readout").inner_text() == "1.00"  # tangent_explorer's x0
        for i in range(boxes.count()):
            img = boxes.nth(i).locator("img.widget-image")
            assert img.evaluate("i => i.complete && i.naturalWidth > 100"), f"widget {i} plot"
        page.locator("mjx-container").first.wait_for(timeout=30_000)  # local MathJax typeset
        assert page.locator("text=Error displaying widget").count() == 0
        assert blocked == [], f"the page tried the network: {blocked[:5]}"
        shot(page, "export-offline")
    finally:
        context.close()


def _saved(page, path: Path, before: bytes, timeout: float = 30.0) -> bytes:
    """Ctrl+S in the open notebook, then the file's bytes once the server has written them."""
    page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell").first.click()
    page.keyboard.press("Escape")  # command mode: Ctrl+S saves the notebook
    page.keyboard.press("Control+s")
    deadline = time.monotonic() + timeout
    while path.read_bytes() == before:
        assert time.monotonic() < deadline, f"{path.name} was not saved"
        time.sleep(0.2)
    return path.read_bytes()


def test_an_opened_and_saved_notebook_takes_the_next_release(lab, page):
    """`make lab`'s rule (hub/keepwork.py) in real JupyterLab: chapter 1 is opened and saved
    untouched (JupyterLab rewrites its metadata), chapter 2 gets an answer typed in and saved;
    a new release of both replaces the untouched copy and files chapter 2's under updates/."""
    sys.path.insert(0, str(REPO / "hub"))
    import keepwork  # hub/ is not a package: the script make lab runs

    release, work = lab.root / "keep-release", lab.root / "keep-work"
    untouched, edited = "ch01_graphs.ipynb", "ch02_numerics.ipynb"
    release.mkdir()
    for name in (untouched, edited):
        shutil.copy(REPO / "notebooks" / name, release / name)
    keepwork.refresh(release, work, work / ".base")

    open_notebook(page, lab, f"keep-work/{untouched}")
    saved = _saved(page, work / untouched, (release / untouched).read_bytes())
    assert keepwork.same_work(work / untouched, release / untouched)  # only metadata changed

    open_notebook(page, lab, f"keep-work/{edited}")
    answer = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell").filter(
        has_text="YOUR CODE HERE").first
    answer.locator(".cm-content").click()
    page.keyboard.press("Control+End")
    page.keyboard.insert_text("\nmy_work = 'typed in the lab'")
    page.keyboard.press("Escape")
    page.keyboard.press("Control+s")
    deadline = time.monotonic() + 30
    while "typed in the lab" not in (work / edited).read_text():
        assert time.monotonic() < deadline, f"{edited} was not saved"
        time.sleep(0.2)
    mine = (work / edited).read_bytes()

    for name in (untouched, edited):  # the next release changes a lesson cell of each
        nb = nbformat.read(release / name, as_version=4)
        next(c for c in nb.cells if c.cell_type == "markdown").source += "\n\nAdded in a new release."
        nbformat.write(nb, release / name)
    said = keepwork.refresh(release, work, work / ".base")
    assert f"updated: {untouched} (you had not changed it)" in said, said
    assert (work / untouched).read_bytes() == (release / untouched).read_bytes() != saved
    assert not (work / "updates" / untouched).exists()
    assert (work / edited).read_bytes() == mine
    assert (work / "updates" / edited).read_bytes() == (release / edited).read_bytes()
