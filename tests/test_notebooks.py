"""Notebooks run top to bottom on a fresh kernel: students see "not answered yet" under every
exercise and no error; the solutions pass every check, with full points from the grade cell."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from notebook_runs import executed_student

from gradtutor.key import registry
from gradtutor.nbcells import grade_id

REPO = Path(__file__).resolve().parents[1]
CHAPTERS = registry.chapters()
pytestmark = pytest.mark.slow


def run(path: Path) -> nbformat.NotebookNode:
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    return nb


def text_of(cell) -> str:
    parts = []
    for out in cell.get("outputs", []):
        parts.append(out.get("text", ""))
        parts.append(out.get("data", {}).get("text/plain", ""))
        parts.append(out.get("data", {}).get("text/html", ""))
    return "\n".join(parts)


def check_cells(nb) -> dict[str, object]:
    ids = set(registry.ids())
    return {grade_id(c): c for c in nb.cells
            if grade_id(c) in ids}


def assert_no_errors(nb) -> None:
    for cell in nb.cells:
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        assert not errors, f"cell failed:\n{cell.source}\n{errors[0].get('evalue')}"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.slug for c in CHAPTERS])
def test_student_notebook_runs_and_every_check_says_not_answered(chapter):
    nb = executed_student(chapter.slug)  # the same run tests/test_giveaways.py reads
    assert_no_errors(nb)
    checks = check_cells(nb)
    assert set(checks) == set(chapter.exercise_ids())
    for eid, cell in checks.items():
        assert "Not answered yet" in text_of(cell), f"{eid}: {text_of(cell)[:300]}"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.slug for c in CHAPTERS])
def test_solution_notebook_runs_and_every_check_is_correct(chapter):
    source = REPO / "solutions" / f"{chapter.slug}.ipynb"
    nb = run(source)
    assert_no_errors(nb)
    for eid, cell in check_cells(nb).items():
        results = [o for o in cell.outputs if o.get("output_type") == "execute_result"]
        assert results, f"{eid}: the grade cell gave no score"
        points = float(results[-1]["data"]["text/plain"])
        assert points == registry.get(eid).points, f"{eid}: {text_of(cell)[:400]}"
        assert "Correct" in text_of(cell)
