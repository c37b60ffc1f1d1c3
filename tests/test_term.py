"""nbgrader's whole term, through its own CLI and gradebook: due dates, extensions and late
penalties graded the way stock `nbgrader autograde` grades them.

Each course folder carries its own nbgrader_config.py (the repository's settings, then the
late-penalty setting under test), and both graders run with that folder as their working
directory, so they read the same configuration.
"""

from __future__ import annotations

import csv
import datetime as dt
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hostile import kit

from autograder.build.course import REPO

pytestmark = pytest.mark.slow
BIN = Path(sys.executable).parent
DUE = dt.datetime(2026, 1, 15, 9, 0)
# (student, hours after the due date, extension in hours)
STUDENTS = [("ontime", -2.0, 0), ("late", 32.5, 0), ("extended", 32.5, 48), ("very_late", 80.0, 48)]
PER_HOUR = '''
from nbgrader.plugins import LateSubmissionPlugin

class PerHour(LateSubmissionPlugin):
    """A custom plugin: a tenth of a point per started hour late."""
    def late_submission_penalty(self, student_id, score, total_seconds_late):
        return 0.1 * -(-total_seconds_late // 3600)
'''
METHODS = {
    "none": "",
    "zero": 'c.LateSubmissionPlugin.penalty_method = "zero"\n',
    "per_hour": 'c.AssignLatePenalties.plugin_class = "latepolicy.PerHour"\n',
}


def _env(course: Path) -> dict[str, str]:
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "PYTHONPATH": str(course)}


def _course(root: Path, method: str) -> Path:
    from nbgrader.api import Gradebook

    chapter = kit.first_chapter()
    course = root / method
    released = kit.make_course(course, chapter)
    config = (REPO / "nbgrader_config.py").read_text()
    (course / "nbgrader_config.py").write_text(
        f"{config}\nc.CourseDirectory.root = {str(course)!r}\n{METHODS[method]}")
    (course / "latepolicy.py").write_text(PER_HOUR)
    solved = kit.answered(released, kit.solution)
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        gb.update_or_create_assignment(chapter.slug, duedate=DUE)
        for student, hours, extension in STUDENTS:
            kit.submit(course, student, chapter, solved)
            stamp = DUE + dt.timedelta(hours=hours)
            (course / "submitted" / student / chapter.slug / "timestamp.txt").write_text(
                stamp.strftime("%Y-%m-%d %H:%M:%S.%f UTC"))
            gb.update_or_create_student(student)
            if extension:
                gb.add_submission(chapter.slug, student)
                gb.grant_extension(chapter.slug, student, hours=extension)
    return course


def _export(course: Path) -> dict[str, dict[str, str]]:
    out = course / "grades.csv"
    done = subprocess.run([str(BIN / "nbgrader"), "export", f"--to={out}"], cwd=course,
                          env=_env(course), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    with out.open() as f:
        return {row["student_id"]: row for row in csv.DictReader(f)}


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("term")
    runs = {}
    for method in METHODS:
        stock = _course(root / "stock", method)
        ours = root / "ours" / method
        shutil.copytree(stock, ours)
        (ours / "nbgrader_config.py").write_text(
            (stock / "nbgrader_config.py").read_text().replace(str(stock), str(ours)))
        slug = kit.first_chapter().slug
        done = subprocess.run([str(BIN / "nbgrader"), "autograde", slug, "--force"], cwd=stock,
                              env=_env(stock), capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-3000:]
        done = subprocess.run([str(BIN / "gradtutor"), "grade", str(ours)], cwd=ours,
                              env=_env(ours), capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-3000:]
        runs[method] = {"stock": _export(stock), "ours": _export(ours), "course": ours}
    return runs


@pytest.mark.parametrize("method", list(METHODS))
def test_late_penalties_are_nbgraders(graded: dict, method: str) -> None:
    stock, ours = graded[method]["stock"], graded[method]["ours"]
    assert set(stock) == set(ours) == {s for s, _, _ in STUDENTS}
    for student in stock:
        for column in ("raw_score", "late_submission_penalty", "score", "max_score", "timestamp"):
            assert ours[student][column] == stock[student][column], (method, student, column)
    penalties = {s: float(stock[s]["late_submission_penalty"]) for s in stock}
    assert penalties["ontime"] == penalties["extended"] == 0  # the extension covers 32.5 h
    if method == "zero":
        assert float(stock["late"]["score"]) == 0 and penalties["late"] == float(stock["late"]["raw_score"])
    if method == "per_hour":
        assert penalties["late"] == pytest.approx(3.3)  # 33 started hours
        assert penalties["very_late"] == pytest.approx(3.2)  # 80 h - 48 h of extension
    if method == "none":
        assert set(penalties.values()) == {0.0}


def test_results_files_carry_the_lateness(graded: dict) -> None:
    import json

    from autograder.grading.store import results_path

    course, slug = graded["zero"]["course"], kit.first_chapter().slug
    late = json.loads(results_path(course, slug, "late").read_text())
    ontime = json.loads(results_path(course, slug, "ontime").read_text())
    assert late["seconds_late"] == 32.5 * 3600 and late["penalty"] == late["score"] > 0
    assert ontime["seconds_late"] == 0 and ontime["penalty"] == 0
