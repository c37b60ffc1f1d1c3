"""#26, must-show 6, in real JupyterLab and Chromium: the by-hand refusal is one clear line, and
review() lists a chapter's exercises in the notebook's order with their numbers.

A student's steps in chapter 1's notebook (a copy): run everything, answer a by-hand exercise
with ``backward()``, then answer it by hand, run its check, and run the chapter's review cell.
Cells are filled through JupyterLab's own model and run with its own command, so the kernel
gets each cell's id as it does when a student presses Shift+Enter.
"""

from __future__ import annotations

import re

import pytest
from browser.lab import open_notebook, run_all, wait_idle

from gradtutor.key import registry

pytestmark = pytest.mark.browser

CHAPTER = registry.chapters()[0]
BY_HAND = "sum_rule"  # 1.2, done by hand
CHEAT = "x = torch.tensor(x0, requires_grad=True)\n(x**2 + 5 * x).backward()\ndz_dx = x.grad"

_CELL_INDEX = """id => window.jupyterapp.shell.currentWidget.content.widgets
    .findIndex(c => c.model.id === id)"""
_RUN = """([i, source]) => {
    const panel = window.jupyterapp.shell.currentWidget;
    const cell = panel.content.widgets[i];
    if (source !== null) cell.model.sharedModel.setSource(source);
    panel.content.activeCellIndex = i;
    return window.jupyterapp.commands.execute('notebook:run-cell');
}"""
_OUTPUTS = """i => {
    const outputs = window.jupyterapp.shell.currentWidget.content.widgets[i].model.outputs;
    return [...Array(outputs.length).keys()].map(k => outputs.get(k).toJSON());
}"""


def _run_cell(page, cell_id: str, source: str | None = None) -> list[dict]:
    """Run the notebook's cell with this id (its source replaced first, if given); its outputs."""
    index = page.evaluate(_CELL_INDEX, cell_id)
    assert index >= 0, f"no cell {cell_id}"
    page.evaluate(_RUN, [index, source])
    wait_idle(page)
    page.wait_for_function("i => window.jupyterapp.shell.currentWidget.content.widgets[i]"
                           ".model.executionCount !== null", arg=index)
    return page.evaluate(_OUTPUTS, index)


def _text(outputs: list[dict]) -> str:
    parts = []
    for o in outputs:
        parts.append(o.get("text", "") if isinstance(o.get("text"), str) else "".join(o.get("text", [])))
        plain = o.get("data", {}).get("text/plain", "")
        parts.append(plain if isinstance(plain, str) else "".join(plain))
    return "".join(parts)


@pytest.fixture
def chapter_page(browser, lab):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    open_notebook(page, lab, f"course/{CHAPTER.slug}.ipynb")
    run_all(page)
    yield page
    context.close()
    lab.shutdown_kernels()


def test_the_refusal_is_one_line_and_review_lists_the_notebook_in_order(chapter_page) -> None:
    page = chapter_page
    ex = registry.get(BY_HAND)
    assert ex.by_hand
    refused = [o for o in _run_cell(page, f"{BY_HAND}-answer", CHEAT) if o["output_type"] == "error"]
    assert len(refused) == 1 and refused[0]["ename"] == "ByHand", refused
    lines = refused[0]["traceback"]
    assert len(lines) == 1 and "done by hand" in lines[0], lines  # one line: no torch traceback
    assert "site-packages" not in lines[0] and "Traceback" not in lines[0]

    assert not [o for o in _run_cell(page, f"{BY_HAND}-answer", ex.solution) if o["output_type"] == "error"]
    assert "Correct" in _text(_run_cell(page, BY_HAND))

    review_cell = page.evaluate("""() => window.jupyterapp.shell.currentWidget.content.widgets
        .map(c => c.model).filter(m => m.type === 'code' && m.sharedModel.getSource()
        .includes('review(')).map(m => m.id).pop()""")
    shown = _text(_run_cell(page, review_cell))
    ids = CHAPTER.exercise_ids()
    assert shown.splitlines()[0] == f"1 of {len(ids)} exercises right", shown
    rows = [re.search(r"\s(\d+\.\d+)\s.*\[(\w+)\]$", line) for line in shown.splitlines()[1:len(ids) + 1]]
    assert [(m.group(1), m.group(2)) for m in rows] == [(f"1.{n}", e) for n, e in enumerate(ids, start=1)]
    right = next(line for line in shown.splitlines() if line.endswith(f"[{BY_HAND}]"))
    assert "Correct" in right
