"""`gradtutor roster import FILE.csv`: the class list into nbgrader's gradebook, checked whole
first. A non-submitter then shows in the report, and the Canvas export has the LMS ids and
sections; a bad file is refused with every bad line named, and changes nothing."""

from __future__ import annotations

import csv
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hostile import kit

from gradtutor.course import Course
from gradtutor.records import gradebook, roster
from gradtutor.records.gradebook import Student

GRADTUTOR = str(Path(sys.executable).parent / "gradtutor")
HEADER = "id,first_name,last_name,email,lms_user_id,section\n"
GOOD = HEADER + ("alice,Alice,Archer,alice@example.edu,1001,A\n"
                 "bob,Bob,Baker,,1002,B\n"
                 "carol,Carol,Cruz,carol@example.edu,1003,B\n")


def test_a_good_roster_reads_as_students() -> None:
    text = "\ufeffSection,ID,email,first_name,last_name,lms_user_id\r\nA, s1 ,s1@x.org,Ada,Lovelace,77\r\n\r\n"
    assert roster.parse_roster(text) == {"s1": Student("Ada", "Lovelace", "s1@x.org", "77", "A")}


@pytest.mark.parametrize(("text", "says"), [
    ("", "the file is empty"),
    (HEADER, "a header and no students"),
    ("id,name\nalice,Alice\n", "missing: first_name, last_name, email, lms_user_id, section; unknown: 'name'"),
    (HEADER.replace("section", "id"), "names a column twice: id"),
    (HEADER + "alice,Alice\n", "line 2: 2 fields, the header has 6"),
    (HEADER + "../../etc,A,B,,1,\n", "line 2: id '../../etc' must be"),
    (HEADER + ",A,B,,1,\n", "line 2: id '' must be"),
    (HEADER + "a b,A,B,,1,\n", "line 2: id 'a b' must be"),
    (HEADER + "al,A,B,,1,\nal,C,D,,2,\n", "line 3: id 'al' appears twice"),
    (HEADER + "al,A,B,not-an-email,1,\n", "line 2: email 'not-an-email' is not an email address"),
    (HEADER + "al,A\x07,B,,1,\n", "line 2: first_name holds a control character"),
    (HEADER + f"al,{'x' * 201},B,,1,\n", "line 2: first_name is longer than 200 characters"),
    (HEADER + "".join(f"../{i},A,B,,1,\n" for i in range(30)), "... and 10 more"),
    (HEADER + 'al,"A\nB",C,,1,\nbo,"x,y\n', "line 4: not readable as CSV"),
])
def test_a_bad_roster_is_refused_with_the_reason(text: str, says: str) -> None:
    with pytest.raises(roster.RosterError) as e:
        roster.parse_roster(text)
    assert says in str(e.value)


def test_an_unreadable_or_huge_file_is_refused(tmp_path: Path) -> None:
    latin = tmp_path / "latin.csv"
    latin.write_bytes((HEADER + "al,Zoë,B,,1,\n").encode("latin-1"))
    with pytest.raises(roster.RosterError, match="not UTF-8"):
        roster.read_roster(latin)
    with pytest.raises(roster.RosterError, match="cannot read"):
        roster.read_roster(tmp_path / "missing.csv")
    huge = tmp_path / "huge.csv"
    huge.write_text(HEADER + "x" * roster.MAX_BYTES)
    with pytest.raises(roster.RosterError, match="at most"):
        roster.read_roster(huge)


def _run(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run([GRADTUTOR, *map(str, args)], capture_output=True, text=True)


def _gradebook_rows(course: Course) -> list:
    with sqlite3.connect(course.gradebook) as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return [sorted(tables), db.execute("SELECT * FROM student ORDER BY id").fetchall()]


@pytest.mark.slow
def test_a_roster_fills_the_gradebook_report_and_canvas_export(tmp_path: Path) -> None:
    chapter = kit.first_chapter()
    root = tmp_path / "course"
    released = kit.make_course(root, chapter)
    kit.submit(root, "alice", chapter, kit.answered(released, kit.solution))
    kit.submit(root, "bob", chapter, released)
    done = _run("grade", root, "--workers", "1")
    assert done.returncode == 0, done.stderr
    course = Course.at(root)

    bad = tmp_path / "bad.csv"
    bad.write_text(GOOD + "dave,Dave,Dunn,dave@,1004,A\n../eve,Eve,Evans,,1005,A\n")
    before = _gradebook_rows(course)
    done = _run("roster", "import", bad, "--course", root)
    assert done.returncode == 2
    assert "was not imported, nothing changed" in done.stderr
    assert "line 5: email 'dave@'" in done.stderr and "line 6: id '../eve'" in done.stderr
    assert _gradebook_rows(course) == before

    good = tmp_path / "roster.csv"
    good.write_text(GOOD)
    done = _run("roster", "import", good, "--course", root)
    assert done.returncode == 0, done.stderr
    assert "Imported 3 student(s)" in done.stderr and "1 new, 2 updated" in done.stderr
    people = gradebook.students(course)
    assert people["carol"] == Student("Carol", "Cruz", "carol@example.edu", "1003", "B")
    assert people["bob"] == Student("Bob", "Baker", "", "1002", "B")

    canvas = tmp_path / "canvas.csv"
    assert _run("export", root, "--canvas", canvas, "--section", "fallback").returncode == 0
    rows = {r["SIS User ID"]: r for r in csv.DictReader(canvas.open()) if r["Student"] != "Points Possible"}
    assert {sid: (r["Student"], r["ID"], r["Section"]) for sid, r in rows.items()} == {
        "alice": ("Archer, Alice", "1001", "A"), "bob": ("Baker, Bob", "1002", "B"),
        "carol": ("Cruz, Carol", "1003", "B")}
    assert rows["carol"][chapter.slug] == "0" and float(rows["alice"][chapter.slug]) > 0

    done = _run("report", root, "--out", tmp_path / "report")
    assert done.returncode == 0, done.stdout + done.stderr
    page = (tmp_path / "report" / "report.html").read_text()
    assert "Not submitted" in page
    missing = page[page.index("Not submitted"):]
    assert f"<td>carol</td><td>{chapter.slug}</td>" in missing and "<td>alice</td>" not in missing
    submissions = list(csv.DictReader((tmp_path / "report" / "submissions.csv").open()))
    assert [(r["student"], r["status"]) for r in submissions if r["status"] == "not submitted"] == [
        ("carol", "not submitted")]
