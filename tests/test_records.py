"""The records' reading of the gradebook, the course folder as a value, and the results files
as records (#23).

Reads of ``gradebook.db`` are plain SQL (opening nbgrader's ``Gradebook`` writes to it): they
must leave the file as it was, and a course without a gradebook reads as empty.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nbgrader.api import Gradebook

from gradtutor.course import Course
from gradtutor.grading import forkserver
from gradtutor.records import gradebook
from gradtutor.records.files import dumps_indented
from gradtutor.records.results import read_result

REPO = Path(__file__).resolve().parents[1]


def _course(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Course:
    # nbgrader runs the venv's ``alembic`` to create a new gradebook
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    course = Course.at(tmp_path)
    with Gradebook(course.db_url, "autograd101") as gb:
        gb.update_or_create_assignment("ch02")
        gb.update_or_create_assignment("ch01")
        gb.update_or_create_student("bob", first_name="Bob", last_name="Li", lms_user_id="42")
        gb.update_or_create_student("ann")
    return course


def test_gradebook_reads_leave_the_file_as_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    course = _course(tmp_path, monkeypatch)
    before = course.gradebook.read_bytes()
    assert gradebook.course_id(course) == "autograd101"
    assert gradebook.assignment_names(course) == ["ch01", "ch02"]
    assert gradebook.students(course) == {"ann": gradebook.Student(),
                                          "bob": gradebook.Student("Bob", "Li", "", "42")}
    assert gradebook.roster(course, ["ch02"]) == {"ann": ["ch02"], "bob": ["ch02"]}
    recorded = gradebook.recorded(course)
    assert recorded is not None and recorded.grades == {} and recorded.penalties == {}
    assert course.gradebook.read_bytes() == before


def test_a_course_without_a_gradebook_reads_as_empty(tmp_path: Path) -> None:
    course = Course.at(tmp_path)
    assert gradebook.students(course) == {} and gradebook.roster(course) == {}
    assert gradebook.recorded(course) is None
    assert not course.gradebook.exists()


def test_the_course_names_its_paths_once(tmp_path: Path) -> None:
    course = Course.at(tmp_path)
    root = tmp_path.resolve()
    assert course.results_path("ch01", "ann") == root / "gradtutor" / "results" / "ch01" / "ann.json"
    assert course.root.joinpath(*course.submitted_parts("ann", "ch01", "ch01.ipynb")) == \
        course.submission_dir("ann", "ch01") / "ch01.ipynb"
    assert course.db_url == f"sqlite:///{tmp_path.resolve() / 'gradebook.db'}"


def test_the_zygotes_runtime_copy_holds_no_data_and_no_packaging(tmp_path: Path) -> None:
    tree = forkserver.runtime_tree(tmp_path)
    names = {p.name for p in tree.rglob("*")}
    assert (tree / "__init__.py").is_file() and (tree / "sandbox" / "zygote.py").is_file()
    assert not names & {"pyproject.toml", "_data", "__pycache__", "checks.json"}


ANSWER = {"t": "array", "shape": [2], "dtype": "float", "v": [1.0, 2.0]}
ENTRY = {"id": "chain_xyz", "points": 0.5, "max_points": 1.0, "verdict": "partial", "score": 0.5,
         "misconception": None, "message": "Close.", "answers": [ANSWER, ANSWER],
         "unit": "0123456789abcdef", "inputs": "fedcba9876543210"}
GRADED = {"student": "ann", "assignment": "ch01", "status": "graded", "reason": "", "score": 0.5,
          "max_score": 1.0, "graded_at": "2026-01-15T10:00:00+00:00", "duration_s": 1.25,
          "exercises": [ENTRY], "grader": "00112233445566aa", "seconds_late": 0.0, "penalty": 0.0,
          "manual_grades": 0}


@pytest.mark.parametrize("written", [
    GRADED,  # as `grade` writes it, with the gradebook's lateness
    {**GRADED, "regraded_at": "2026-01-16T10:00:00+00:00"},  # as `regrade` rewrites it
    {k: v for k, v in GRADED.items() if k not in ("seconds_late", "penalty", "manual_grades")},  # a shard
])
def test_a_results_file_reads_back_and_writes_out_as_it_was(written: dict) -> None:
    result = read_result(json.loads(json.dumps(written)), student="x", assignment="y")
    assert result is not None and result.exercises[0].answers == [ANSWER, ANSWER]
    assert json.dumps(result.to_json(), indent=1) == json.dumps(written, indent=1)


def test_an_old_results_file_gets_its_defaults_and_the_gradebooks_view_is_never_written() -> None:
    old = {"exercises": [{"id": "chain_xyz", "points": 1, "max_points": 1}]}
    result = read_result(old, student="ann", assignment="ch01")
    assert result is not None and (result.student, result.assignment) == ("ann", "ch01")
    assert (result.status, result.reason, result.score, result.max_score) == ("graded", "", 1, 1)
    (e,) = result.exercises
    assert (e.verdict, e.message, e.answers, e.unit, e.inputs) == ("error", "", None, None, None)
    e.manual, e.auto_points, e.extra_credit, e.comment = True, 0.0, 1.0, "well done"
    result.total = 2.0
    assert result.to_json() == {
        "student": "ann", "assignment": "ch01", "status": "graded", "reason": "", "score": 1,
        "max_score": 1, "exercises": [{"id": "chain_xyz", "points": 1, "max_points": 1,
                                       "verdict": "error", "misconception": None, "message": "",
                                       "answers": None, "unit": None, "inputs": None}],
        "grader": None}


# --- the records' JSON text: the same bytes as json's and nbformat's writers, faster -----------

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.tuples(inner, inner)
    | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=40)


@given(value=_JSON, sort_keys=st.booleans(), ensure_ascii=st.booleans())
@settings(max_examples=400, deadline=None)
def test_indented_json_is_jsons_own_text(value, sort_keys: bool, ensure_ascii: bool) -> None:
    """``files.dumps_indented``: what ``json.dumps(indent=1)`` writes, byte for byte (results
    files and notebooks keep their layout), NaN, infinities and any string included."""
    assert dumps_indented(value, sort_keys=sort_keys, ensure_ascii=ensure_ascii) == \
        json.dumps(value, indent=1, sort_keys=sort_keys, ensure_ascii=ensure_ascii)


def test_indented_json_leaves_what_is_not_plain_json_to_json() -> None:
    odd = {1: "int key", "x": [1, {None: 2}]}
    assert dumps_indented(odd) == json.dumps(odd, indent=1)
    with pytest.raises(TypeError):
        dumps_indented({"a": object()})


def test_an_autograded_notebook_is_nbformats_own_text() -> None:
    """``store.notebook_text`` writes what ``nbformat.v4.nbjson.writes`` writes: every lesson
    notebook, and one with outputs of each kind, attachments and transient keys."""
    import nbformat
    from nbformat.v4 import nbjson

    from gradtutor.records.store import notebook_text

    books = [nbformat.read(p, as_version=4) for p in sorted((REPO / "notebooks").glob("*.ipynb"))]
    assert books
    odd = nbformat.v4.new_notebook(metadata={"signature": "x", "orig_nbformat": 3, "kept": {"a": [1]}})
    odd.cells = [
        nbformat.v4.new_markdown_cell("# T\nline\n", attachments={"i.png": {"image/png": "AA==",
                                                                             "text/plain": "a\nb"}}),
        nbformat.v4.new_code_cell("x = 1\ny = 2", metadata={"trusted": True, "tags": ["t"]}, outputs=[
            nbformat.v4.new_output("stream", name="stdout", text="one\ntwo\n"),
            nbformat.v4.new_output("execute_result", {"text/plain": "3\n4", "image/svg+xml": "<s>\n</s>",
                                                      "application/json": {"k": "v\nw"}}, execution_count=1),
            nbformat.v4.new_output("display_data", {"text/html": "<b>\n</b>"}),
            nbformat.v4.new_output("error", ename="E", evalue="v", traceback=["a\nb"])])]
    for nb in [*books, odd]:
        before = json.dumps(nb, sort_keys=True)
        assert notebook_text(nb) == nbjson.writes(nb)
        assert json.dumps(nb, sort_keys=True) == before  # the notebook itself left as it was
