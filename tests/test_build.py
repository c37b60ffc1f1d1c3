"""The committed notebooks are exactly what the build makes from lessons and exercise units."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from gradtutor.authoring import build as course
from gradtutor.authoring.lesson import parse
from gradtutor.key import registry
from gradtutor.nbcells import grade_id

REPO = Path(__file__).resolve().parents[1]
CHAPTERS = registry.chapters()


@pytest.fixture(scope="module")
def fresh_build(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("build")
    course.build(solutions=False, notebooks=out, solutions_dir=out / "unused", log=lambda *_: None)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.slug for c in CHAPTERS])
def test_student_notebook_is_fresh(chapter, fresh_build):
    committed = REPO / "notebooks" / f"{chapter.slug}.ipynb"
    assert committed.exists(), f"run `gradtutor build {chapter.number}` and commit {committed.name}"
    built = json.loads((fresh_build / committed.name).read_text())
    assert json.loads(committed.read_text()) == built, (
        f"notebooks/{committed.name} is stale: run `gradtutor build {chapter.number}`")


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.slug for c in CHAPTERS])
def test_solution_notebook_is_fresh(chapter):
    committed = REPO / "solutions" / f"{chapter.slug}.ipynb"
    assert committed.exists(), f"run `gradtutor build {chapter.number}` and commit {committed.name}"
    executed = nbformat.read(committed, as_version=4)
    assert course.sources_of(executed) == course.sources_of(course.source_notebook(chapter)), (
        f"solutions/{committed.name} is stale: run `gradtutor build {chapter.number}`")
    for cell in executed.cells:
        assert not any(o.get("output_type") == "error" for o in cell.get("outputs", [])), cell.source


def test_no_orphan_generated_notebooks():
    slugs = {c.slug for c in CHAPTERS}
    for folder in ("notebooks", "solutions"):
        for nb in (REPO / folder).glob("*.ipynb"):
            assert nb.stem in slugs, f"{folder}/{nb.name} has no lesson; delete it"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.slug for c in CHAPTERS])
def test_source_notebook_metadata_is_generated_and_valid(chapter):
    nb = course.source_notebook(chapter)  # runs nbgrader's MetadataValidator
    assert "jupytext" not in nb.metadata
    grade_ids = [grade_id(c) for c in nb.cells if "nbgrader" in c.metadata]
    assert len(grade_ids) == len(set(grade_ids))
    exercises = chapter.exercise_ids()
    assert exercises, "a chapter poses exercises"
    for eid in exercises:
        ex = registry.get(eid)
        grade_cell = next(c for c in nb.cells if grade_id(c) == eid)
        assert grade_cell.metadata["nbgrader"]["points"] == ex.points
        assert "### BEGIN HIDDEN TESTS" in grade_cell.source


def test_lesson_parser_keeps_order_and_kinds():
    blocks = parse("# T\n\ntext\n\n```python\nx = 1\n```\n\n```exercise\nsum_rule\n```\nmore\n---\nnext\n")
    assert [b.kind for b in blocks] == ["markdown", "code", "exercise", "markdown", "markdown"]
    assert blocks[1].text == "x = 1" and blocks[2].text == "sum_rule"


def test_every_exercise_appears_in_exactly_one_lesson():
    posed = [eid for ch in CHAPTERS for eid in ch.exercise_ids()]
    assert sorted(posed) == sorted(registry.ids()), "each exercise unit is posed once by its lesson"
