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

import nbformat
import pytest
from hostile import kit

from gradtutor.authoring.build import REPO
from gradtutor.nbcells import grade_id
from gradtutor.records.results import read_result

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


# Every student hands in the same solved notebook. Stock nbgrader executes it once per student,
# in the first method's course; the other methods' stock courses are handed the notebooks that
# run produced and autograde them with its two executing steps off (ClearOutput, Execute): what
# is left is stock autograde itself, scoring those outputs (SaveAutoGrades) and applying the
# method's late policy (AssignLatePenalties). Eight kernel runs of an identical notebook saved.
REUSE_OUTPUTS = ("--ClearOutput.enabled=False", "--Execute.enabled=False")


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("term")
    runs: dict = {}
    slug = kit.first_chapter().slug
    executed: Path | None = None  # the first stock course, whose notebooks nbgrader ran
    for method in METHODS:
        stock = _course(root / "stock", method)
        ours = root / "ours" / method
        shutil.copytree(stock, ours)  # gradtutor grades the notebooks as the students sent them
        (ours / "nbgrader_config.py").write_text(
            (stock / "nbgrader_config.py").read_text().replace(str(stock), str(ours)))
        if executed is not None:
            for student, _, _ in STUDENTS:
                shutil.copy(executed / "autograded" / student / slug / f"{slug}.ipynb",
                            stock / "submitted" / student / slug / f"{slug}.ipynb")
        done = subprocess.run([str(BIN / "nbgrader"), "autograde", slug, "--force",
                               *(REUSE_OUTPUTS if executed is not None else ())], cwd=stock,
                              env=_env(stock), capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-3000:]
        for student, _, _ in STUDENTS:  # what stock scored ran in a kernel, every code cell
            nb = nbformat.read(stock / "autograded" / student / slug / f"{slug}.ipynb", as_version=4)
            counts = [c.execution_count for c in nb.cells if c.cell_type == "code"]
            assert counts and all(counts), (method, student)
        executed = executed or stock
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

    from gradtutor.course import Course
    from gradtutor.records.results import read_result

    course, slug = Course.at(graded["zero"]["course"]), kit.first_chapter().slug
    late = read_result(json.loads(course.results_path(slug, "late").read_text()))
    ontime = read_result(json.loads(course.results_path(slug, "ontime").read_text()))
    assert late.seconds_late == 32.5 * 3600 and late.penalty == late.score > 0
    assert ontime.seconds_late == 0 and ontime.penalty == 0


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
    full = sum(ex.points for ex in kit.exercises_of(released))
    assert "gradtutor feedback" in ann and f"{full:g} / {full:g}" in ann  # our block on nbgrader's page
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
    result = read_result(json.loads((course / "gradtutor" / "results" / slug / "gt_bob.json").read_text()))
    assert float(export["gt_bob"]["score"]) != result.score  # the hand grade changed it


def test_the_formgraders_notebook_shows_what_a_teaching_assistant_needs(tmp_path: Path) -> None:
    """Each grade cell of the autograded notebook holds the verdict, the misconception, the
    hint and the points; an answer cell that raised shows which error (never its text), and
    its exercise says the cell raised instead of "was the answer cell deleted?"."""
    chapter = kit.first_chapter()
    course = tmp_path / "course"
    released = kit.make_course(course, chapter)
    exs = kit.exercises_of(released)
    wrong = next(ex for ex in exs if ex.wrong)
    raiser = next(ex for ex in exs if ex is not wrong)

    def answer(ex):
        if ex is wrong:
            return kit.wrong(ex, 0)
        if ex is raiser:
            return f"{ex.answer} = undefined_name.grad_fn"
        return kit.solution(ex)

    kit.submit(course, "ta_view", chapter, kit.answered(released, answer))
    _instructor(course, "grade", str(course), tool="gradtutor")
    nb = nbformat.read(course / "autograded" / "ta_view" / chapter.slug / f"{chapter.slug}.ipynb", as_version=4)
    by_id = {grade_id(c): c for c in nb.cells}
    text = by_id[wrong.id].outputs[0]["text"]
    assert text.startswith("wrong: ") and "Likely misconception: " in text and "Hint: " in text
    assert f"Points: 0 of {wrong.points:g}" in text
    (error,) = by_id[f"{raiser.id}-answer"].outputs
    assert error["output_type"] == "error" and error["ename"] == "NameError"
    assert "undefined_name" not in str(error)  # the name of the error, not its text
    assert f"Your answer cell raised NameError before it set {raiser.answer!r}" in \
        by_id[raiser.id].outputs[0]["text"]


def test_build_writes_the_course_sources_where_it_runs(tmp_path: Path) -> None:
    """`gradtutor build` in a folder (a copy of the course's config) writes notebooks/ and
    course/source/<chapter>/ there, and `nbgrader generate_assignment` then works as written."""
    shutil.copy(REPO / "nbgrader_config.py", tmp_path / "nbgrader_config.py")
    slug = kit.first_chapter().slug
    _instructor(tmp_path, "build", "1", "--no-solutions", tool="gradtutor")
    assert (tmp_path / "course" / "source" / slug / f"{slug}.ipynb").is_file()
    assert (tmp_path / "notebooks" / f"{slug}.ipynb").is_file()
    _instructor(tmp_path, "generate_assignment", slug)
    assert (tmp_path / "course" / "release" / slug / f"{slug}.ipynb").is_file()


@pytest.mark.skipif(shutil.which("useradd") is None or shutil.which("runuser") is None
                    or os.geteuid() != 0, reason="needs root, useradd and runuser")
def test_teaching_assistants_read_and_grade_through_a_group() -> None:
    """The set-up of docs/grading.md: the course folder belongs to a group of teaching
    assistants (setgid folders, group read and write, nothing for others). After `gradtutor
    grade` and `report`, a member reads the report and results and can write the gradebook
    (the formgrader); an account outside the group reads nothing."""
    import tempfile

    subprocess.run(["groupadd", "-f", "gt_tas"], check=True)
    for user, extra in (("gt_ta", ["-G", "gt_tas"]), ("gt_ann", [])):
        subprocess.run(["useradd", "-M", "-s", "/usr/sbin/nologin", *extra, user], capture_output=True)
    root = Path(tempfile.mkdtemp(prefix="gradtutor-tas-"))
    root.chmod(0o755)
    course = root / "course"
    chapter = kit.first_chapter()
    released = kit.make_course(course, chapter)
    kit.submit(course, "student1", chapter, kit.answered(released, kit.solution))
    subprocess.run(["chgrp", "-R", "gt_tas", str(course)], check=True)
    subprocess.run(["chmod", "-R", "g+rwX,o-rwx", str(course)], check=True)
    subprocess.run(["find", str(course), "-type", "d", "-exec", "chmod", "g+s", "{}", "+"], check=True)
    _instructor(course, "grade", str(course), tool="gradtutor")
    _instructor(course, "report", str(course), tool="gradtutor")
    result = course / "gradtutor" / "results" / chapter.slug / "student1.json"

    def can(user: str, *cmd: str) -> bool:
        return subprocess.run(["runuser", "-u", user, "--", *cmd], capture_output=True).returncode == 0

    assert can("gt_ta", "cat", str(course / "reports" / "report.html"))
    assert can("gt_ta", "cat", str(result))
    assert can("gt_ta", "cat", str(course / "autograded" / "student1" / chapter.slug / f"{chapter.slug}.ipynb"))
    assert can("gt_ta", "test", "-w", str(course / "gradebook.db"))
    assert not can("gt_ann", "cat", str(course / "reports" / "report.html"))
    assert not can("gt_ann", "ls", str(course / "submitted"))
    assert course.stat().st_mode & 0o777 == 0o770  # grading left the folder as it was set up
    shutil.rmtree(root, ignore_errors=True)
