"""Trusted side: a submission as data: its notebook, its sanitised cells, and the two small
files nbgrader keeps beside it (``timestamp.txt``, ``submission_secret.txt``).

Found and read by ``gradtutor.grading.submission`` (the only reader of a student's notebook);
stored by ``gradtutor.records.store`` and ``gradtutor.records.gradebook``. The small files are
the student's too: read beneath the course without following a link, a few bytes at most.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from gradtutor.course import Course
from gradtutor.records.files import read_small


@dataclass(frozen=True)
class Submission:
    student: str
    assignment: str
    notebook: str  # notebook id (file stem), as in the gradebook
    path: Path
    problem: str = ""  # why the file must not be read at all (a link, a device...), for the student


@dataclass(frozen=True)
class Cell:
    kind: str  # "code" or "markdown" / "raw"
    source: str
    grade_id: str | None  # only for cells the source notebook knows
    exercise: str | None  # set on grade cells of registered exercises: collect answers here


def submitted_at(course: Course, student: str, assignment: str) -> datetime | None:
    """nbgrader's own rule: the submission folder's timestamp.txt, if there is one."""
    from nbgrader.utils import parse_utc  # nbgrader takes seconds to import; the reports never need it

    text = read_small(course.root, course.submitted_parts(student, assignment, "timestamp.txt"))
    try:
        return parse_utc(text.strip()) if text is not None else None
    except (ValueError, TypeError, OverflowError):
        return None


_SECRET = re.compile(r"[0-9a-f]{16,256}")


def submission_secret(course: Course, student: str, assignment: str) -> str | None:
    """The token nbgrader's submit wrote (hex), or None."""
    text = read_small(course.root, course.submitted_parts(student, assignment, "submission_secret.txt"))
    text = text.strip() if text is not None else ""
    return text if _SECRET.fullmatch(text) else None
