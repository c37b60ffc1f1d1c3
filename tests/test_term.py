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


# --- a round trip through nbgrader's own exchange ---------------------------------------------

STUDENTS_X = ("gt_ann", "gt_bob")  # real Unix accounts, made by the test


def _as_student(user: str, *args: str, cwd: Path, exchange: Path) -> subprocess.CompletedProcess:
    """An nbgrader command run as the student's own account (a user namespace mapping their
    uid onto this one, so nbgrader's username is theirs)."""
    import pwd

    entry = pwd.getpwnam(user)
    cmd = ["unshare", "-U", f"--map-user={entry.pw_uid}", f"--map-group={entry.pw_gid}",
           str(BIN / "nbgrader"), *args, "--course=gradtutor", f"--Exchange.root={exchange}"]
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "HOME": str(cwd)}
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return done


def _instructor(course: Path, *args: str, tool: str = "nbgrader") -> subprocess.CompletedProcess:
    done = subprocess.run([str(BIN / tool), *args], cwd=course, env=_env(course), capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


@pytest.mark.skipif(shutil.which("useradd") is None or shutil.which("unshare") is None
                    or os.geteuid() != 0, reason="needs root, useradd and unshare")
def test_feedback_reaches_students_through_nbgraders_exchange(tmp_path: Path) -> None:
    """release -> fetch -> submit -> collect -> gradtutor grade -> a manual grade and a comment
    in the gradebook (what the formgrader writes) -> generate_feedback -> gradtutor feedback ->
    release_feedback -> fetch_feedback: each student receives nbgrader's page with gradtutor's
    verdicts, misconceptions and hints on top, and the hand grade and comment in it."""
    import json

    from nbgrader.api import Gradebook

    chapter = kit.first_chapter()
    slug = chapter.slug
    for user in STUDENTS_X:
        subprocess.run(["useradd", "-M", "-s", "/usr/sbin/nologin", user], capture_output=True)
    exchange = tmp_path / "exchange"
    exchange.mkdir(mode=0o777)
    exchange.chmod(0o777)
    course = tmp_path / "course"
    released = kit.make_course(course, chapter)
    (course / "nbgrader_config.py").write_text(
        (REPO / "nbgrader_config.py").read_text()
        + f"\nc.CourseDirectory.root = {str(course)!r}\nc.Exchange.root = {str(exchange)!r}\n")
    _instructor(course, "release_assignment", slug)
    answers = {"gt_ann": kit.solution, "gt_bob": lambda ex: kit.wrong(ex, 0) or kit.solution(ex)}
    for user in STUDENTS_X:
        home = tmp_path / user
        home.mkdir()
        _as_student(user, "fetch_assignment", slug, cwd=home, exchange=exchange)
        fetched = home / slug / f"{slug}.ipynb"
        import nbformat

        nbformat.write(kit.answered(nbformat.read(fetched, as_version=4), answers[user]), fetched)
        _as_student(user, "submit", slug, cwd=home, exchange=exchange)
    _instructor(course, "collect", slug)
    _instructor(course, "grade", str(course), tool="gradtutor")
    first = kit.exercises_of(released)[0]
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:  # what the formgrader does
        grade = gb.find_grade(first.id, slug, slug, "gt_bob")
        grade.manual_score = 0.5
        comment = gb.find_comment(f"{first.id}-answer", slug, slug, "gt_bob")
        comment.manual_comment = "Close: check the sign of the second term."
        gb.db.commit()
    _instructor(course, "generate_feedback", slug)
    _instructor(course, "feedback", str(course), tool="gradtutor")
    _instructor(course, "release_feedback", slug)
    pages = {}
    for user in STUDENTS_X:
        home = tmp_path / user
        _as_student(user, "fetch_feedback", slug, cwd=home, exchange=exchange)
        (page,) = (home / slug / "feedback").glob(f"*/{slug}.html")
        pages[user] = page.read_text()
    ann, bob = pages["gt_ann"], pages["gt_bob"]
    assert "gradtutor feedback" in ann and "8 / 8" in ann  # gradtutor's block on nbgrader's page
    assert "Setup (read-only)" in ann.split("<!-- /gradtutor feedback -->")[1]  # nbgrader's own page
    assert "Likely misconception" in bob and "Hint:" in bob
    assert "Graded by hand:</b> 0.5" in bob and "check the sign of the second term" in bob
    # the numbers agree with nbgrader's own export and the report
    export = _export(course)
    _instructor(course, "report", str(course), tool="gradtutor")
    with (course / "reports" / "submissions.csv").open() as f:
        report = {row["student"]: row for row in csv.DictReader(f)}
    for user in STUDENTS_X:
        assert float(export[user]["score"]) == float(report[user]["total"]), user
    result = json.loads((course / "gradtutor" / "results" / slug / "gt_bob.json").read_text())
    assert float(export["gt_bob"]["score"]) != result["score"]  # the hand grade changed it
