"""Trusted side: nbgrader cell factories, the only place that writes nbgrader metadata."""

from __future__ import annotations

from nbformat import NotebookNode
from nbformat.v4 import new_code_cell, new_markdown_cell

from autograder.answer_cells import SETUP_HEADER
from gradtutor.key.exercise import Exercise


def _meta(grade_id: str, *, grade: bool = False, solution: bool = False, locked: bool = False,
          points: float | None = None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3,
            "solution": solution, "task": False}
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


def prose(source: str, cell_id: str) -> NotebookNode:
    return new_markdown_cell(source, id=cell_id)


def code(source: str, cell_id: str) -> NotebookNode:
    return new_code_cell(source, id=cell_id)


BY_HAND = ("*By hand.* Autograd is switched off while your answer cell runs: work it out on "
           "paper, then write it as an expression of the parameters in the setup cell.")
WITH_AUTOGRAD = ("*With autograd.* Use torch to compute or find out the answer; the check re-runs "
                 "your cell with other values.")
NO_AUTOGRAD_INSIDE = ("*By hand, in code.* The grader runs your code with autograd refused (no "
                      "`backward()`, `torch.autograd.grad`, `torch.func` or forward-mode AD inside "
                      "it): derive each derivative on paper, then write it with tensor operations.")
NO_TORCH_INSIDE = ("*By hand, in plain Python.* The grader runs your code with torch refused: "
                   "numbers and the `math` module only, each derivative worked out on paper.")
# the banner of each mode (Exercise.mode): what the student may use, said once, above the prompt
BANNERS = {"by_hand": BY_HAND, "refuse_autograd": NO_AUTOGRAD_INSIDE, "refuse_torch": NO_TORCH_INSIDE,
           "autograd": WITH_AUTOGRAD}


def exercise_cells(ex: Exercise, number: str) -> list[NotebookNode]:
    """Prompt, setup, answer and check/grade cells for one exercise."""
    points = f"{ex.points:g} point" + ("" if ex.points == 1 else "s")
    mode = BANNERS[ex.mode]
    cells = [new_markdown_cell(f"### Exercise {number} · {ex.title} ({points})\n\n{mode}\n\n"
                               + ex.prompt_text().strip(),
                               id=f"{ex.id}-prompt", metadata=_meta(f"{ex.id}-prompt", locked=True))]
    if ex.setup.strip():
        cells.append(new_code_cell(f"{SETUP_HEADER} The grader re-runs your answer with other values.\n"
                                   + ex.setup_code(ex.params),
                                   id=f"{ex.id}-setup", metadata=_meta(f"{ex.id}-setup", locked=True)))
    answer = f"{ex.starter()}\n### BEGIN SOLUTION\n{ex.solution.strip()}\n### END SOLUTION"
    cells.append(new_code_cell(answer, id=f"{ex.id}-answer", metadata=_meta(f"{ex.id}-answer", solution=True)))
    check = (f'check("{ex.id}", {ex.answer})\n'
             "### BEGIN HIDDEN TESTS\n"
             "from autograder import grade\n"
             f'grade("{ex.id}", {ex.answer})\n'
             "### END HIDDEN TESTS")
    cells.append(new_code_cell(check, id=ex.id,
                               metadata=_meta(ex.id, grade=True, locked=True, points=ex.points)))
    return cells
