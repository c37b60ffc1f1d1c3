"""The late policy and due dates (#25, item 3): set from the CLI (and at hub set-up), shown to
students in the released notebook and by ``review``, applied by the real `gradtutor grade`, and
the same in nbgrader's gradebook (what the formgrader shows), the class report and the export.
"""

from __future__ import annotations

import csv
import datetime as dt
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from hostile import kit

from autograder.selfcheck import Review, due_passed, review
from gradtutor.authoring.build import REPO, release, write_source
from gradtutor.course import Course
from gradtutor.records import gradebook, term
from gradtutor.records.term import LatePolicy, PolicyError, parse_policy, read_policy, write_policy

BIN = Path(sys.executable).parent
UTC = dt.UTC


def _gradtutor(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "gradtutor"), *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"})


# --- the policy: words, arithmetic, the config block -----------------------------------------------

@pytest.mark.parametrize("words, policy", [
    ("none", LatePolicy("none")),
    ("zero", LatePolicy("zero")),
    ("zero grace 30m", LatePolicy("zero", grace_hours=0.5)),
    ("10%", LatePolicy("percent", 10.0)),
    ("12.5%/day, grace=2h", LatePolicy("percent", 12.5, 2.0)),
    ("25% grace 1d", LatePolicy("percent", 25.0, 24.0)),
    ("none grace 2h", LatePolicy("none")),  # no penalty: a grace period changes nothing
])
def test_policies_read_from_words_and_back(words: str, policy: LatePolicy) -> None:
    assert parse_policy(words) == policy
    assert parse_policy(policy.spec) == policy


@pytest.mark.parametrize("words", ["", "half", "0%", "150%", "10% zero", "zero grace soon", "5 %"])
def test_unreadable_policies_are_refused_with_what_to_write(words: str) -> None:
    with pytest.raises(PolicyError, match="write|percentage"):
        parse_policy(words)


def test_the_penalty_per_started_day_after_the_grace_period() -> None:
    hour, day = 3600.0, 86400.0
    ten = LatePolicy("percent", 10.0, grace_hours=2.0)
    assert ten.penalty(8.0, 0) is None and ten.penalty(8.0, -hour) is None  # on time
    assert ten.penalty(8.0, 2 * hour) is None  # within the grace period
    assert ten.penalty(8.0, 2 * hour + 1) == pytest.approx(0.8)  # one started day
    assert ten.penalty(8.0, day + 1) == pytest.approx(1.6)  # two started days
    assert ten.penalty(8.0, 30 * day) == pytest.approx(8.0)  # never more than the score
    assert LatePolicy("zero", grace_hours=1.0).penalty(8.0, 0.5 * hour) is None
    assert LatePolicy("zero", grace_hours=1.0).penalty(8.0, 1.5 * hour) == 8.0
    assert LatePolicy("none").penalty(8.0, 9 * day) is None


def test_the_config_block_round_trips_and_replaces_itself(tmp_path: Path) -> None:
    course = Course.at(tmp_path)
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()  # noqa: F821\nc.Execute.timeout = 7\n")
    assert read_policy(course) == LatePolicy("none")
    for policy in (LatePolicy("percent", 10.0, 2.0), LatePolicy("zero", grace_hours=0.5),
                   LatePolicy("zero"), LatePolicy("none"), LatePolicy("percent", 33.0)):
        write_policy(course, policy)
        assert read_policy(course) == policy
    text = (tmp_path / "nbgrader_config.py").read_text()
    assert text.count(term.BEGIN) == 1 and "c.Execute.timeout = 7" in text
    (tmp_path / "nbgrader_config.py").write_text(
        text.split(term.BEGIN)[0] + "c.AssignLatePenalties.plugin_class = 'mycourse.Plugin'\n")
    assert read_policy(course) == LatePolicy("custom", plugin="mycourse.Plugin")


def test_the_late_policy_command_round_trips(tmp_path: Path) -> None:
    course = tmp_path / "course"
    course.mkdir()
    done = _gradtutor("late-policy", "set", "15%", "--grace", "90m", "--course", str(course))
    assert done.returncode == 0, done.stderr
    shown = _gradtutor("late-policy", "show", "--course", str(course))
    assert shown.returncode == 0 and shown.stdout.splitlines()[0] == "late policy: 15%/day grace 1.5h"
    assert "15% of the score is taken off per started day late" in shown.stdout
    assert "grace period of 1 h 30 min" in shown.stdout
    assert read_policy(Course.at(course)) == LatePolicy("percent", 15.0, 1.5)
    bad = _gradtutor("late-policy", "set", "soon", "--course", str(course))
    assert bad.returncode == 2 and "zero (a late submission scores 0)" in bad.stderr
    assert read_policy(Course.at(course)) == LatePolicy("percent", 15.0, 1.5)  # unchanged
    assert "grace period" in _gradtutor("late-policy", "--help").stdout


def test_hub_set_up_takes_the_policy_or_nbgraders_default(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("classroom_under_test", REPO / "hub" / "classroom.py")
    classroom = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = classroom  # its dataclasses look their module up there
    spec.loader.exec_module(classroom)
    asked: list[str] = []
    with open(os.devnull) as quiet:  # not a terminal: nothing is asked
        sys_stdin, sys.stdin = sys.stdin, quiet
        try:
            assert classroom.ask_late_policy(None, ask=asked.append) == "none"
            assert classroom.ask_late_policy("10% grace 2h", ask=asked.append) == "10%/day grace 2h"
            with pytest.raises(SystemExit, match="late-policy"):
                classroom.ask_late_policy("sometimes")
        finally:
            sys.stdin = sys_stdin
    assert asked == []
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()  # noqa: F821\n")
    assert "10%" in classroom.write_late_policy(tmp_path, "10%/day grace 2h")
    assert read_policy(Course.at(tmp_path)) == LatePolicy("percent", 10.0, 2.0)


# --- the student side: the warning of review() ---------------------------------------------------

def test_review_warns_past_the_due_date_the_notebook_holds(tmp_path: Path) -> None:
    past, future = dt.datetime(2026, 1, 15, 9, 0, tzinfo=UTC), dt.datetime(2999, 1, 1, tzinfo=UTC)
    for name, due in (("past", past), ("future", future)):
        nb = nbformat.v4.new_notebook(metadata={"gradtutor": {"due": due.isoformat()}})
        nbformat.write(nb, tmp_path / f"{name}.ipynb")
    assert due_passed(str(tmp_path / "past.ipynb")) == past
    assert due_passed(str(tmp_path / "future.ipynb")) is None
    assert due_passed(str(tmp_path / "past.ipynb"), now=past - dt.timedelta(seconds=1)) is None
    nbformat.write(nbformat.v4.new_notebook(), tmp_path / "plain.ipynb")
    (tmp_path / "broken.ipynb").write_text("{not json")
    for other in ("plain.ipynb", "broken.ipynb", "missing.ipynb"):
        assert due_passed(str(tmp_path / other)) is None
    assert due_passed(None) is None and due_passed(str(tmp_path)) is None
    warned = review(1, {"__session__": str(tmp_path / "past.ipynb")})
    assert "The due date (2026-01-15 09:00 UTC) has passed" in str(warned)
    assert "has passed" in warned._repr_html_()
    quiet = review(1, {"__session__": str(tmp_path / "future.ipynb")})
    assert isinstance(quiet, Review) and "due date" not in str(quiet) + quiet._repr_html_()
    assert len(quiet) == len(warned) > 0


# --- a term, end to end: due date, late submissions, the real `gradtutor grade` ------------------

DUE = dt.datetime(2026, 1, 15, 9, 0)
# (student, hours after the due date): the policy below is 25% per started day after 1 h of grace
LATENESS = {"ontime": -2.0, "in_grace": 0.5, "late": 30.0, "very_late": 24 * 5.0}
PENALTY_SHARE = {"ontime": 0.0, "in_grace": 0.0, "late": 0.5, "very_late": 1.0}


@pytest.fixture(scope="module")
def term_course(tmp_path_factory: pytest.TempPathFactory) -> dict:
    chapter = kit.first_chapter()
    course = tmp_path_factory.mktemp("late") / "course"
    kit.make_course(course, chapter)
    (course / "nbgrader_config.py").write_text(
        (REPO / "nbgrader_config.py").read_text() + f"\nc.CourseDirectory.root = {str(course)!r}\n")
    for args in (("late-policy", "set", "25%", "--grace", "1h"),
                 ("due-date", "set", chapter.slug, "2026-01-15", "10:00", "+01:00")):
        done = _gradtutor(*args, "--course", str(course))
        assert done.returncode == 0, done.stderr
    released = nbformat.read(release(chapter, course), as_version=4)  # nbgrader generate_assignment
    solved = kit.answered(released, kit.solution)
    for student, hours in LATENESS.items():
        kit.submit(course, student, chapter, solved)
        stamp = DUE + dt.timedelta(hours=hours)
        (course / "submitted" / student / chapter.slug / "timestamp.txt").write_text(
            stamp.strftime("%Y-%m-%d %H:%M:%S.%f UTC"))
    done = _gradtutor("grade", str(course), cwd=course)
    assert done.returncode == 0, done.stderr[-3000:]
    for args in (("report", str(course)),
                 ("export", str(course), "--csv", str(course / "export.csv"),
                  "--canvas", str(course / "canvas.csv"))):
        done = _gradtutor(*args, cwd=course)
        assert done.returncode == 0, done.stderr[-3000:]
    stock = subprocess.run([str(BIN / "nbgrader"), "export", f"--to={course / 'nbgrader.csv'}"],
                           cwd=course, capture_output=True, text=True,
                           env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"})
    assert stock.returncode == 0, stock.stderr[-2000:]
    return {"course": course, "chapter": chapter, "released": released,
            "full": sum(ex.points for ex in kit.exercises_of(released))}


def _rows(path: Path, key: str) -> dict[str, dict[str, str]]:
    with path.open() as f:
        return {row[key]: row for row in csv.DictReader(f)}


@pytest.mark.slow
def test_the_released_notebook_shows_its_due_date_and_the_policy(term_course: dict) -> None:
    nb = term_course["released"]
    first = nb.cells[0].source
    assert first.startswith("# Chapter 1")  # the title stays first
    assert "**Due: 2026-01-15 09:00 UTC.**" in first  # 10:00 at +01:00
    assert "25% of the score is taken off per started day late" in first and "1 h" in first
    assert nb.metadata["gradtutor"] == {"due": "2026-01-15T09:00:00+00:00"}
    assert sum(term.BEGIN in c.source or "Due:" in c.source for c in nb.cells) == 1
    shown = _gradtutor("due-date", "show", "--course", str(term_course["course"]))
    assert f"{term_course['chapter'].slug}" in shown.stdout and "2026-01-15 09:00 UTC" in shown.stdout


@pytest.mark.slow
def test_grading_applies_the_policy_in_the_gradebook(term_course: dict) -> None:
    """nbgrader's own export (the gradebook the formgrader shows) has the policy's penalty."""
    full = term_course["full"]
    stock = _rows(term_course["course"] / "nbgrader.csv", "student_id")
    for student, share in PENALTY_SHARE.items():
        row = stock[student]
        assert float(row["raw_score"]) == pytest.approx(full), student
        assert float(row["late_submission_penalty"]) == pytest.approx(share * full), student
        assert float(row["score"]) == pytest.approx((1 - share) * full), student


@pytest.mark.slow
def test_the_report_and_the_export_show_the_same_lateness(term_course: dict) -> None:
    course, full = term_course["course"], term_course["full"]
    stock = _rows(course / "nbgrader.csv", "student_id")
    report = _rows(course / "reports" / "submissions.csv", "student")
    export = _rows(course / "export.csv", "student")
    with (course / "canvas.csv").open() as f:
        canvas = {row["SIS User ID"]: row for row in csv.DictReader(f)}
    slug = term_course["chapter"].slug
    for student, hours in LATENESS.items():
        for rows in (report, export):
            assert float(rows[student]["total"]) == pytest.approx(float(stock[student]["score"]))
            assert float(rows[student]["late_penalty"]) == pytest.approx(
                float(stock[student]["late_submission_penalty"]))
            assert float(rows[student]["seconds_late"]) == max(hours, 0) * 3600
        assert float(canvas[student][slug]) == pytest.approx(float(stock[student]["score"]))
    page = (course / "reports" / "report.html").read_text()
    section = page.split("<h2>Late submissions</h2>")[1].split("<h2>")[0]
    assert "25% of the score is taken off per started day late" in section
    assert f"{slug} 2026-01-15 09:00 UTC" in section
    rows = {r.split("</td>")[0].split("<td>")[-1]: r for r in section.split("<tr>")[2:]}
    assert set(rows) == {"in_grace", "late", "very_late"}  # on time is not listed
    assert "<td>1 d 6 h</td>" in rows["late"] and "<td>30 min</td>" in rows["in_grace"]
    assert f">{full / 2:g}</td>" in rows["late"]  # the penalty
    assert f">{full:g} / {full:g}</td>" in rows["late"]  # before
    assert f">{full / 2:g} / {full:g}</td>" in rows["late"]  # after
    assert f">0 / {full:g}</td>" in rows["very_late"]
    assert f">0</td><td class='n'>{full:g} / {full:g}</td><td class='n'>{full:g} / {full:g}" in rows["in_grace"]
    result = json.loads((course / "gradtutor" / "results" / slug / "late.json").read_text())
    assert result["seconds_late"] == 30 * 3600 and result["penalty"] == pytest.approx(full / 2)


@pytest.mark.parametrize("text, utc", [
    ("2026-01-15 10:00", "2026-01-15 10:00"),  # no zone: UTC, nbgrader's rule
    ("2026-01-15 10:00 +01:00", "2026-01-15 09:00"),
    ("2026-01-15T10:00+0100", "2026-01-15 09:00"),
    ("2026-07-15 10:00 Europe/Berlin", "2026-07-15 08:00"),  # summer time
    ("2026-01-15 10:00Z", "2026-01-15 10:00"),
])
def test_due_dates_are_read_in_utc(text: str, utc: str) -> None:
    assert term.when_text(term.parse_when(text)) == f"{utc} UTC"


@pytest.mark.parametrize("text", ["tomorrow", "2026-01-15 10:00 Mars/Base", "2026-13-01 10:00"])
def test_unreadable_due_dates_are_refused_never_taken_for_utc(text: str) -> None:
    with pytest.raises(PolicyError):
        term.parse_when(text)


def test_a_due_date_set_before_the_first_release_makes_the_gradebook(tmp_path: Path) -> None:
    """Set before `nbgrader generate_assignment` ever ran: the gradebook is made with the date
    (nbgrader's generate keeps it); an assignment the course does not have is refused."""
    chapter = kit.first_chapter()
    write_source(chapter, tmp_path)
    done = _gradtutor("due-date", "set", chapter.slug, "2026-02-01T12:00+01:00", "--course", str(tmp_path))
    assert done.returncode == 0, done.stderr
    noon_at_plus_one = dt.datetime(2026, 2, 1, 11, 0, tzinfo=UTC)
    assert gradebook.due_dates(Course.at(tmp_path)) == {chapter.slug: noon_at_plus_one}
    typo = _gradtutor("due-date", "set", "ch01_graph", "2026-02-01", "--course", str(tmp_path))
    assert typo.returncode == 2 and "no assignment 'ch01_graph'" in typo.stderr
    assert _gradtutor("due-date", "clear", chapter.slug, "--course", str(tmp_path)).returncode == 0
    assert gradebook.due_dates(Course.at(tmp_path)) == {chapter.slug: None}
    assert f"{chapter.slug}" in _gradtutor("due-date", "show", "--course", str(tmp_path)).stdout
