"""Trusted side: ``gradtutor export COURSE_DIR --canvas FILE --csv FILE``, the scores for an LMS.

Scores are the gradebook's as they are now (``store.reconcile``): manual grades from the
formgrader over auto scores, extra credit added, the late penalty taken off, as ``nbgrader
export`` counts them. A student of the gradebook who submitted nothing gets 0, as in
``nbgrader export``.

Canvas (Grades > Import): the header ``Student,ID,SIS User ID,SIS Login ID,Section`` then one
column per assignment; the second row is ``Points Possible`` with each assignment's maximum.
Canvas matches a row to a student by ``ID`` (the Canvas user id: nbgrader's ``lms_user_id``,
where the roster has one) or by ``SIS User ID`` / ``SIS Login ID`` (the nbgrader student id).
``Student`` is "Last, First" where the gradebook has names, else the id. ``Section`` is the
student's from the roster (``gradtutor roster import``), else ``--section``.

Every text cell goes through ``sheet``: nothing a spreadsheet would run as a formula.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from gradtutor.course import Course
from gradtutor.records import gradebook, sheet, store
from gradtutor.records.gradebook import Student
from gradtutor.records.results import SubmissionResult
from gradtutor.reports.report import SUBMISSION_COLUMNS, submission_rows

CANVAS_HEADER = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")


def export_cli(*, course_dir: Path, canvas: Path | None = None, csv: Path | None = None,
               assignment: list[str] | None = None, section: str = "") -> int:
    if canvas is None and csv is None:
        print("gradtutor export: say where: --canvas FILE and/or --csv FILE.", file=sys.stderr)
        return 2
    course = Course.at(course_dir)
    results = store.reconcile(course, [r for r in store.load_results(course)
                                       if not assignment or r.assignment in assignment])
    people = gradebook.students(course)
    names = assignments(course, results, assignment)
    if not names:
        print(f"gradtutor export: nothing graded under {course.root}: run gradtutor grade first.",
              file=sys.stderr)
        return 1
    expected = gradebook.roster(course, assignment) or {}
    for r in results:  # a results file of a student the gradebook does not list still counts
        expected.setdefault(r.student, [])
        people.setdefault(r.student, Student())
    handed = {(r.student, r.assignment) for r in results}
    missing = sorted((st, a) for st in expected for a in names if (st, a) not in handed)
    if canvas is not None:
        write_canvas(canvas, results, people, names, missing, section)
        print(f"Wrote the Canvas gradebook import {canvas}: {len(people)} student(s), "
              f"{len(names)} assignment(s).", file=sys.stderr)
    if csv is not None:
        sheet.write(csv, SUBMISSION_COLUMNS, submission_rows(results, missing))
        print(f"Wrote {csv}: one row per student and assignment.", file=sys.stderr)
    return 0


def assignments(course: Course, results: list[SubmissionResult], only: list[str] | None) -> dict[str, float]:
    """assignment -> points possible (its source notebooks', else the largest maximum graded),
    in name order."""
    found = sorted({r.assignment for r in results})
    out: dict[str, float] = {}
    for name in found:
        if only and name not in only:
            continue
        try:
            points = course.max_points(name)
        except Exception:
            points = 0.0
        out[name] = points or max(float(r.max_score or 0.0) for r in results
                                  if r.assignment == name)
    return out


def write_canvas(path: Path, results: list[SubmissionResult], people: dict[str, Student],
                 names: dict[str, float], missing: list[tuple[str, str]], section: str) -> Path:
    totals: dict[tuple[str, str], float] = {(r.student, r.assignment):
                                            float(r.score if r.total is None else r.total)
                                            for r in results}
    for key in missing:
        totals.setdefault(key, 0.0)
    rows: list[list[Any]] = [["Points Possible", "", "", "", "", *(_number(p) for p in names.values())]]
    for sid, who in sorted(people.items()):
        label = f"{who.last}, {who.first}" if who.last or who.first else sid
        scores = [_number(totals[(sid, a)]) if (sid, a) in totals else "" for a in names]
        rows.append([label, who.lms, sid, sid, who.section or section, *scores])
    return sheet.write(path, [*CANVAS_HEADER, *names], rows)


def _number(value: float) -> float | int:
    value = round(float(value), 6)
    return int(value) if value.is_integer() else value
