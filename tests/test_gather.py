"""``gradtutor grade --gather``: the shards' results files into the gradebook (issue #28, item 4).

The results files come from other machines, so each is read as hostile: one that is not a
results file, names another student, or carries points a grade cell cannot hold is refused
with the reason, and every other one is stored, each exactly once, a batch
(``recorder.MAX_BATCH``) per gradebook transaction.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook
from nbgrader.api import Gradebook

from gradtutor.course import Course
from gradtutor.grading import gather, recorder
from gradtutor.records import gradebook, store
from gradtutor.records.results import ExerciseResult, SubmissionResult

CELLS = {"c1": 2.0, "c2": 3.0}


def _course(tmp_path: Path, students: list[str], monkeypatch) -> Course:
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")  # alembic
    monkeypatch.chdir(tmp_path)  # no nbgrader_config.py of the working directory
    course = Course.at(tmp_path)
    source = new_notebook(cells=[new_code_cell("x = 1", metadata={"nbgrader": {
        "grade": True, "solution": False, "locked": True, "grade_id": gid, "points": points,
        "schema_version": 3}}) for gid, points in CELLS.items()])
    course.source_dir("a").mkdir(parents=True)
    nbformat.write(source, course.source_dir("a") / "nb.ipynb")
    with Gradebook(course.db_url) as gb:
        gb.update_or_create_assignment("a")
        gb.update_or_create_notebook("nb", "a")
        for gid, points in CELLS.items():
            gb.update_or_create_grade_cell(gid, "nb", "a", max_score=points, cell_type="code")
        gb.update_or_create_solution_cell("c2", "nb", "a")  # its comment row too
    for s in students:
        course.submission_dir(s, "a").mkdir(parents=True)
        nbformat.write(source, course.submission_dir(s, "a") / "nb.ipynb")
    return course


def _result(student: str, c1: float = 2.0, c2: float = 1.5) -> SubmissionResult:
    return SubmissionResult(student=student, assignment="a", score=c1 + c2, max_score=5.0,
                            exercises=[ExerciseResult("c1", c1, 2.0, verdict="correct", score=c1 / 2),
                                       ExerciseResult("c2", c2, 3.0, verdict="partial", score=c2 / 3)])


def _scores(course: Course) -> dict[tuple[str, str], float | None]:
    return {(s, g): score for (s, _, g), score in gradebook.scores(course).items()}


def test_gather_stores_every_result_exactly_once_a_batch_per_transaction(tmp_path: Path,
                                                                          monkeypatch) -> None:
    students = [f"s{i:03d}" for i in range(recorder.MAX_BATCH + 6)]  # two batches
    course = _course(tmp_path, students, monkeypatch)
    for i, s in enumerate(students):
        store.write_result(course, _result(s, c2=float(i % 4) / 2))
    batches: list[list[str]] = []
    save_all = store.save_all_grades

    def counted(gb, course, batch, late=None):
        batches.append([r.student for r, _ in batch])
        return save_all(gb, course, batch, late)

    monkeypatch.setattr(store, "save_all_grades", counted)
    assert gather.gather(course, None, None) == 0
    assert [len(b) for b in batches] == [recorder.MAX_BATCH, 6]
    assert sorted(s for b in batches for s in b) == students  # each once
    scores = _scores(course)
    assert len(scores) == 2 * len(students)
    for i, s in enumerate(students):
        assert scores[(s, "c1")] == 2.0 and scores[(s, "c2")] == float(i % 4) / 2
        again = json.loads(course.results_path("a", s).read_text())  # rewritten with the lateness
        assert again["seconds_late"] == 0.0 and again["manual_grades"] == 0


def _damage(course: Course, student: str, how: str) -> None:
    path = course.results_path("a", student)
    good = _result(student).to_json()
    if how == "not json":
        path.write_text("{not json")
    elif how == "another student":
        path.write_text(json.dumps({**good, "student": "s000"}))
    elif how == "not finite":
        good["exercises"][0]["points"] = float("nan")
        path.write_text(json.dumps(good))
    elif how == "too many points":
        good["exercises"][1]["points"] = 1e9
        path.write_text(json.dumps(good))
    elif how == "huge int":
        good["exercises"][1]["points"] = 10**400
        path.write_text(json.dumps(good))
    elif how == "score not a number":
        path.write_text(json.dumps({**good, "score": {"a": 1}}))
    elif how == "a link":
        path.unlink()
        path.symlink_to(course.results_path("a", "s000"))
    elif how == "a list":
        path.write_text("[1, 2]")


DAMAGE = {"not json": "not readable as a results file",
          "another student": "it names 's000'/'a'",
          "not finite": "not finite numbers",
          "too many points": "outside 0 to 3",
          "huge int": "OverflowError",
          "score not a number": "score or maximum is not a finite number",
          "a link": "symbolic link",
          "a list": "not a results file"}


def test_a_malformed_shard_result_is_refused_with_the_reason_and_the_rest_stored(
        tmp_path: Path, monkeypatch, capsys) -> None:
    damaged = {f"bad{i}": how for i, how in enumerate(DAMAGE)}
    good = [f"s{i:03d}" for i in range(5)]
    course = _course(tmp_path, good + sorted(damaged), monkeypatch)
    for s in good + sorted(damaged):
        store.write_result(course, _result(s))
    for s, how in damaged.items():
        _damage(course, s, how)
    (course.results_dir / "nope").mkdir()  # an assignment the course does not have
    (course.results_dir / "nope" / "s000.json").write_text(json.dumps(_result("s000").to_json()))
    store.write_result(course, _result("ghost"))  # no submission of that student

    assert gather.gather(course, None, None) == 1
    err = capsys.readouterr().err
    assert f"{len(damaged) + 2} results file(s) were NOT gathered" in err
    for s, why in DAMAGE.items():
        line = next(line for line in err.splitlines() if f"a/bad{list(DAMAGE).index(s)}.json" in line)
        assert why in line, (s, line)
    assert "nope is not an assignment" in err and "ghost has no submitted notebook" in err
    assert {s for s, _ in _scores(course)} == set(good)  # the rest stored, nothing of the refused
    assert course.results_path("a", "bad0").read_text() == "{not json"  # left as it was


def test_a_result_the_gradebook_refuses_costs_that_result_only(tmp_path: Path, monkeypatch,
                                                               capsys) -> None:
    students = ["ann", "bob", "cid"]
    course = _course(tmp_path, students, monkeypatch)
    for s in students:
        store.write_result(course, _result(s))
    save_all = gradebook.save_all

    def fails_for_bob(gb, course, batch, late=None):
        if any(s == "bob" for s, _, _, _ in batch):
            raise RuntimeError("a database error")
        return save_all(gb, course, batch, late)

    monkeypatch.setattr(gradebook, "save_all", fails_for_bob)
    assert gather.gather(course, None, None) == 1
    assert "a/bob.json: the gradebook refused it (RuntimeError: a database error)" in capsys.readouterr().err
    assert {s for s, _ in _scores(course)} == {"ann", "cid"}
    assert "seconds_late" not in json.loads(course.results_path("a", "bob").read_text())  # not rewritten


@pytest.mark.parametrize("late_first", [False, True])
def test_new_submissions_made_in_one_flush_hold_the_rows_nbgraders_calls_make(
        tmp_path: Path, monkeypatch, late_first: bool) -> None:
    """``gradebook.save_all`` makes a new class's students and submissions itself, flushed
    once (``_add_new``); nbgrader's ``update_or_create_student``/``_submission`` (the path an
    authenticator takes) make the same rows."""
    students = ["ann", "bob", "cid"]
    rows = {}
    for way in ("batch", "nbgrader"):
        root = tmp_path / way
        root.mkdir()
        course = _course(root, students, monkeypatch)
        if late_first:  # bob late: the penalty step flushes and reads the new rows back
            (course.submission_dir("bob", "a") / "timestamp.txt").write_text("2026-01-02 03:04:05.000000 UTC")
            (root / "nbgrader_config.py").write_text(
                "c = get_config()  # noqa: F821\nc.LateSubmissionPlugin.penalty_method = 'zero'\n")
            with Gradebook(course.db_url) as gb:
                gb.update_or_create_assignment("a", duedate="2026-01-01 00:00:00 UTC")
        with gradebook.open_gradebook(course) as gb:
            if way == "nbgrader":
                gb.authenticator = _Told()  # _add_new then calls nbgrader for each
            with gradebook.one_transaction(gb):
                saved = gradebook.save_all(gb, course, [(s, "a", {"c1": ("correct", 2.0)},
                                                         {"nb": list(CELLS)}) for s in students])
        assert [s["penalty"] for s in saved] == [0.0, 2.0 if late_first else 0.0, 0.0]
        rows[way] = _rows(course)
    assert rows["batch"] == rows["nbgrader"]
    assert len(rows["batch"]["grade"]) == 2 * len(students)


class _Told:
    """An authenticator that hears of each student and does nothing."""

    def add_student_to_course(self, student_id: str, course_id: str) -> None:
        pass


def _rows(course: Course) -> dict[str, list]:
    import sqlite3

    queries = {
        "student": "SELECT * FROM student",
        "submission": "SELECT sa.student_id, a.name, sa.timestamp, sa.extension FROM submitted_assignment sa "
                      "JOIN assignment a ON sa.assignment_id = a.id",
        "notebook": "SELECT sa.student_id, n.name, sn.flagged, sn.late_submission_penalty "
                    "FROM submitted_notebook sn JOIN notebook n ON sn.notebook_id = n.id "
                    "JOIN submitted_assignment sa ON sn.assignment_id = sa.id",
        "grade": "SELECT sa.student_id, bc.name, g.auto_score, g.manual_score, g.extra_credit, "
                 "g.needs_manual_grade FROM grade g JOIN submitted_notebook sn ON g.notebook_id = sn.id "
                 "JOIN submitted_assignment sa ON sn.assignment_id = sa.id "
                 "JOIN base_cell bc ON g.cell_id = bc.id",
        "comment": "SELECT sa.student_id, bc.name, c.auto_comment, c.manual_comment FROM comment c "
                   "JOIN submitted_notebook sn ON c.notebook_id = sn.id "
                   "JOIN submitted_assignment sa ON sn.assignment_id = sa.id "
                   "JOIN base_cell bc ON c.cell_id = bc.id",
    }
    with sqlite3.connect(course.gradebook) as db:
        return {k: sorted(map(repr, db.execute(q))) for k, q in queries.items()}


def test_a_results_file_with_a_number_too_large_for_a_float_is_skipped_not_fatal(
        tmp_path: Path, monkeypatch) -> None:
    course = _course(tmp_path, ["ann", "bob"], monkeypatch)
    for s in ("ann", "bob"):
        store.write_result(course, _result(s))
    _damage(course, "bob", "huge int")
    unreadable: list[str] = []
    assert [r.student for r in store.load_results(course, unreadable=unreadable)] == ["ann"]
    assert unreadable == [str(course.results_path("a", "bob"))]
