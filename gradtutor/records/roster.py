"""Trusted side: ``gradtutor roster import FILE.csv``: the class list into the nbgrader gradebook.

The file is a CSV with a header row and the columns ``id, first_name, last_name, email,
lms_user_id, section`` (any order; ``id`` required in every row, the others may be empty), as an
LMS or a registrar exports it. The whole file is read and checked first: any bad row (an id that
is not a safe folder name, a duplicate, a control character, a field too long, a malformed
email) stops the import with every problem listed by line, and nothing is written.

Students go into nbgrader's gradebook through its API (``records.gradebook.add_students``), so
the formgrader shows their names, the class report lists those who submitted nothing, and the
Canvas export fills its ID column from ``lms_user_id``. nbgrader has no section: gradtutor keeps
it in its own table in the gradebook file, and the Canvas export writes it in its Section column.
"""

from __future__ import annotations

import csv
import io
import re
import sys
from pathlib import Path

from gradtutor.course import Course
from gradtutor.records import gradebook
from gradtutor.records.gradebook import Student

COLUMNS = ("id", "first_name", "last_name", "email", "lms_user_id", "section")
MAX_BYTES = 5_000_000  # a 300-student roster is ~30 kB; this leaves room for a whole university
MAX_ROWS = 50_000
MAX_FIELD = 200
MAX_PROBLEMS = 20  # listed; the count says how many more
# a student id becomes a folder under submitted/ and autograded/: no path tricks, no spaces
SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]{0,99}")
EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class RosterError(ValueError):
    """The file cannot be imported; ``problems`` says why, one line each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


def read_roster(path: Path) -> dict[str, Student]:
    """student id -> Student, from the CSV at ``path``; RosterError if anything is wrong."""
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise RosterError([f"{path} is {size} bytes; a roster may be at most {MAX_BYTES}."])
        text = path.read_bytes().decode("utf-8-sig")  # a spreadsheet's byte-order mark is fine
    except OSError as e:
        raise RosterError([f"cannot read {path}: {e.strerror or e}"]) from None
    except UnicodeDecodeError:
        raise RosterError([f"{path} is not UTF-8 text: save it as CSV UTF-8."]) from None
    return parse_roster(text)


def parse_roster(text: str) -> dict[str, Student]:
    """student id -> Student, from the CSV's text; RosterError naming every bad line."""
    reader = csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline=""), strict=True)
    rows: list[tuple[int, list[str]]] = []
    try:
        for row in reader:  # line_num: the file's line where the row ends (a quoted field may span)
            if any(cell.strip() for cell in row):
                rows.append((reader.line_num, row))
    except csv.Error as e:
        raise RosterError([f"line {reader.line_num}: not readable as CSV: {e}"]) from None
    if not rows:
        raise RosterError(["the file is empty: it needs a header row " + ",".join(COLUMNS)])
    header = [h.strip().lower() for h in rows[0][1]]
    problems = _header_problems(header)
    if problems:
        raise RosterError(problems)
    if len(rows) == 1:
        raise RosterError(["the file has a header and no students"])
    if len(rows) - 1 > MAX_ROWS:
        raise RosterError([f"{len(rows) - 1} rows: a roster may have at most {MAX_ROWS}"])
    people: dict[str, Student] = {}
    for line, row in rows[1:]:
        problems += _row_problems(line, row, header, people)
    if problems:
        more = len(problems) - MAX_PROBLEMS
        raise RosterError(problems[:MAX_PROBLEMS] + ([f"... and {more} more"] if more > 0 else []))
    return people


def _header_problems(header: list[str]) -> list[str]:
    missing = [c for c in COLUMNS if c not in header]
    unknown = [h for h in header if h not in COLUMNS]
    repeated = sorted({h for h in header if header.count(h) > 1})
    problems = []
    if missing or unknown:
        problems.append("line 1 must be the header " + ",".join(COLUMNS)
                        + (f"; missing: {', '.join(missing)}" if missing else "")
                        + (f"; unknown: {', '.join(repr(u[:40]) for u in unknown)}" if unknown else ""))
    if repeated:
        problems.append(f"line 1 names a column twice: {', '.join(repeated)}")
    return problems


def _row_problems(line: int, row: list[str], header: list[str], people: dict[str, Student]) -> list[str]:
    if len(row) != len(header):
        return [f"line {line}: {len(row)} fields, the header has {len(header)}"]
    fields = {h: cell.strip() for h, cell in zip(header, row, strict=True)}
    problems = [f"line {line}: {name} is longer than {MAX_FIELD} characters"
                for name, value in fields.items() if len(value) > MAX_FIELD]
    problems += [f"line {line}: {name} holds a control character"
                 for name, value in fields.items() if CONTROL.search(value)]
    sid = fields["id"]
    if not SAFE_ID.fullmatch(sid):
        problems.append(f"line {line}: id {sid[:40]!r} must be 1-100 letters, digits or ._@+- "
                        "(starting with a letter or digit)")
    elif sid in people:
        problems.append(f"line {line}: id {sid!r} appears twice")
    if fields["email"] and not EMAIL.fullmatch(fields["email"]):
        problems.append(f"line {line}: email {fields['email'][:60]!r} is not an email address")
    if not problems:
        people[sid] = Student(first=fields["first_name"], last=fields["last_name"], email=fields["email"],
                              lms=fields["lms_user_id"], section=fields["section"])
    return problems


def import_roster(course: Course, path: Path) -> dict[str, Student]:
    """Check the whole file, then write it: a bad file changes nothing."""
    people = read_roster(path)
    gradebook.add_students(course, people)
    return people


def import_cli(*, file: Path, course_dir: Path) -> int:
    course = Course.at(course_dir)
    if not gradebook.exists(course):
        print(f"gradtutor roster import: no gradebook at {course.gradebook}: release an assignment "
              "first (nbgrader generate_assignment), or name the course folder with --course.", file=sys.stderr)
        return 1
    before = set(gradebook.students(course))
    try:
        people = import_roster(course, file)
    except RosterError as e:
        print(f"gradtutor roster import: {file} was not imported, nothing changed:", file=sys.stderr)
        for problem in e.problems:
            print(f"  {problem}", file=sys.stderr)
        return 2
    new = len(set(people) - before)
    kept = len(before - set(people))
    others = f"; {kept} already there and not in the file were kept" if kept else ""
    print(f"Imported {len(people)} student(s) into {course.gradebook}: {new} new, "
          f"{len(people) - new} updated{others}.", file=sys.stderr)
    return 0
