"""Trusted side: ``gradtutor grade COURSE_DIR --gather``: the results files of sharded runs
(``--shard I/N``, one per machine) into the gradebook, by one process.

A results file here was written on another machine and copied in, so it is read as hostile:
beneath the course folder without following a link, size-capped, checked field by field
(``read_result``), and refused with the reason when it names another student or assignment
than its place, an assignment or a submission this course does not have, or points that are
not finite or not within the grade cell's maximum. A refused file is reported and left as it
is; every other one is stored. Stored as grading stores them: ``MAX_BATCH`` results in one
gradebook transaction (``store.save_batch``: each alone when the batch fails), then their
results files, with the lateness the gradebook gave them, after the commit.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from gradtutor.course import Course, grade_cells, grade_ids
from gradtutor.records import gradebook, store
from gradtutor.records.files import read_beneath
from gradtutor.records.gradebook import MAX_BATCH
from gradtutor.records.results import SubmissionResult, read_result

MAX_RESULT_BYTES = 64 * 2**20  # a results file keeps at most 1 MiB of answers per exercise
STATUSES = ("graded", "failed")


@dataclass(frozen=True)
class Refused:
    path: str  # beneath the course folder
    why: str


def gather_cli(*, course_dir: Path, assignment: list[str] | None = None, csv: Path | None = None,
               **_: Any) -> int:
    """``gradtutor grade --gather``: without the grading run's imports (torch, the judge)."""
    course = Course.at(course_dir)
    problem = check_course(course, assignment)
    if problem:
        print(f"gradtutor grade: {problem}", file=sys.stderr)
        return 2
    return gather(course, assignment, csv)


def check_course(course: Course, assignment: list[str] | None) -> str:
    """Why ``gradtutor grade`` (or ``--gather``) cannot go ahead in this course, or ""."""
    if not course.submitted.is_dir():
        return (f"{course.root} has no submitted/ folder. Collect submissions first "
                "(nbgrader collect), or make a synthetic class with `gradtutor demo-class`.")
    if not gradebook.exists(course):
        return (f"{course.root} has no gradebook.db: run `nbgrader generate_assignment "
                "<assignment>` in the course first.")
    known = set(course.source_assignments())
    missing = sorted(set(assignment or []) - known)
    if missing:
        return f"no source notebook for {', '.join(missing)} (known: {', '.join(sorted(known))})."
    in_db = set(gradebook.assignment_names(course))
    needed = sorted(course.submitted_assignments() & known - in_db)
    if assignment:
        needed = [a for a in needed if a in assignment]
    if needed:
        return (f"assignment(s) {', '.join(needed)} are not in the gradebook: run "
                f"`nbgrader generate_assignment {needed[0]}` first.")
    return ""


def gather(course: Course, assignment: list[str] | None, csv: Path | None) -> int:
    """Store every admissible results file; 1 when some were refused (each said, with why)."""
    results, refused = admissible(course, assignment)
    late = gradebook.LatePenalties(course)
    stored: list[SubmissionResult] = []
    with gradebook.open_gradebook(course) as gb, \
            tqdm(total=len(results), unit="student", desc="gathering", file=sys.stderr,
                 dynamic_ncols=True) as bar:
        for start in range(0, len(results), MAX_BATCH):  # one transaction per batch, as grading
            batch = results[start:start + MAX_BATCH]
            failed = store.save_batch(gb, course, [(r, notebooks) for _, r, notebooks in batch], late)
            for index, (where, result, _) in enumerate(batch):
                if index in failed:
                    e = failed[index]
                    refused.append(Refused(where, f"the gradebook refused it ({type(e).__name__}: "
                                                  f"{str(e)[:200]})"))
                    continue
                try:  # the lateness found, after the commit
                    store.write_result(course, result)
                except OSError as e:
                    refused.append(Refused(where, f"stored in the gradebook, but its results file "
                                                  f"could not be rewritten ({e})"))
                    continue
                stored.append(result)
            bar.update(len(batch))
    if csv is not None:
        store.write_csv(csv, store.reconcile(course, stored))
    print(f"Gathered {len(stored)} result(s) into {course.gradebook}."
          + (f" Scores written to {csv}." if csv is not None else ""), file=sys.stderr)
    if refused:
        print(f"WARNING: {len(refused)} results file(s) were NOT gathered:", file=sys.stderr)
        for r in refused[:20]:
            print(f"  {r.path}: {r.why}", file=sys.stderr)
        if len(refused) > 20:
            print(f"  ... and {len(refused) - 20} more", file=sys.stderr)
    return 1 if refused else 0


def admissible(course: Course, assignment: list[str] | None
               ) -> tuple[list[tuple[str, SubmissionResult, dict[str, list[str]]]], list[Refused]]:
    """The results files to store, each with its place and its notebooks' grade cells, and
    the ones refused, with why."""
    known = set(gradebook.assignment_names(course)) & set(course.source_assignments())
    sources: dict[str, dict[str, Any]] = {}
    maxima: dict[str, dict[str, float]] = {}
    ok, refused = [], []
    for path in sorted(course.results_dir.glob("*/*.json")):
        name, student = path.parent.name, path.stem
        if assignment and name not in assignment:
            continue
        where = str(path.relative_to(course.root))
        if name not in known:
            refused.append(Refused(where, f"{name} is not an assignment of this course's gradebook"))
            continue
        if name not in sources:
            sources[name] = course.source_notebooks(name)
            maxima[name] = {gid: points for nb in sources[name].values()
                            for gid, points in grade_cells(nb)}
        result = _read(course, path)
        if isinstance(result, str):
            refused.append(Refused(where, result))
            continue
        notebooks = course.submitted_notebooks(student, name)
        why = _problem(result, student, name, maxima[name]) or \
            ("" if notebooks & set(sources[name]) else
             f"{student} has no submitted notebook of {name} in submitted/")
        if why:
            refused.append(Refused(where, why))
            continue
        ok.append((where, result, grade_ids(sources[name], notebooks)))
    return ok, refused


def _read(course: Course, path: Path) -> SubmissionResult | str:
    try:
        raw = read_beneath(course.root, path.relative_to(course.root).parts, MAX_RESULT_BYTES)
        data = json.loads(raw)
        result = read_result(data, student=path.stem, assignment=path.parent.name)
    except Exception as e:  # Unreadable, OSError, ValueError, RecursionError, OverflowError: the file's
        return f"not readable as a results file ({type(e).__name__}: {str(e)[:200]})"
    return "not a results file (a field is missing or of the wrong type)" if result is None else result


def _problem(result: SubmissionResult, student: str, assignment: str, maxima: dict[str, float]
             ) -> str:
    """Why this result may not be stored as ``student``'s ``assignment``, or ""."""
    if (result.student, result.assignment) != (student, assignment):
        return (f"it names {result.student!r}/{result.assignment!r}, not the "
                f"{student!r}/{assignment!r} of its place")
    if result.status not in STATUSES:
        return f"its status {str(result.status)[:40]!r} is not one of {', '.join(STATUSES)}"
    for value in (result.score, result.max_score):
        if type(value) not in (int, float) or not _finite(value):
            return "its score or maximum is not a finite number"
    for e in result.exercises:
        if type(e.verdict) is not str:
            return f"exercise {e.id[:60]!r}: its verdict is not a string"
        if not (_finite(e.points) and _finite(e.max_points)):
            return f"exercise {e.id[:60]!r}: its points are not finite numbers"
        if e.id in maxima and not 0 <= e.points <= maxima[e.id]:
            return (f"exercise {e.id[:60]!r}: {e.points:g} points is outside 0 to "
                    f"{maxima[e.id]:g}, its grade cell's maximum")
    return ""


def _finite(value: float) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # an int too large for a float
        return False
