"""Trusted side: ``gradtutor regrade COURSE_DIR``: judge the stored answers again against the
exercise units as they are now, without running any notebook.

    results/<assignment>/<student>.json ─► the stored plain answers (read through the
    validated loader: they came from the student side) ─► judge against the current unit ─►
    gradebook (the save path of ``grade``: late penalty, manual grades kept) ─► results file ─►
    autograded notebook's grade cells ─► feedback pages (where ``gradtutor feedback`` wrote them)
    ─► who changed and by how much, printed and as CSV

An exercise whose variants' setup code changed (its ``inputs`` fingerprint) cannot be judged
from stored answers: they answer other values. It is left as it was and named, with the
command that grades it again (``gradtutor grade --force``). With unchanged units nothing is
written at all.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import nbformat

from gradtutor.course import Course, grade_cells, grade_ids
from gradtutor.grading.scoring import judged
from gradtutor.key import registry
from gradtutor.key.answer_key import fingerprint, grader_fingerprint
from gradtutor.nbcells import nbgrader_meta
from gradtutor.records import gradebook, sheet, store
from gradtutor.records.results import ExerciseResult, SubmissionResult
from gradtutor.reports import feedback_pages as feedback

CHANGE_COLUMNS = ("student", "assignment", "exercise", "old_points", "new_points", "change",
                  "max_points", "old_verdict", "new_verdict", "old_misconception",
                  "new_misconception")
COMPARED = ("points", "max_points", "verdict", "misconception", "message")


@dataclass
class Regraded:
    """What re-judging one submission's stored answers gave."""

    result: SubmissionResult
    exercises: list[ExerciseResult]
    changed: list[tuple[ExerciseResult, ExerciseResult]] = field(default_factory=list)  # (old, new) that differ
    refreshed: bool = False  # a fingerprint moved on: the file is rewritten even if no verdict did
    not_regradable: dict[str, str] = field(default_factory=dict)  # exercise -> why


@dataclass
class Summary:
    submissions: int = 0
    changed: list[Regraded] = field(default_factory=list)
    refreshed: int = 0
    not_regradable: dict[str, set[str]] = field(default_factory=dict)  # why -> exercises
    failed: list[str] = field(default_factory=list)  # files that could not be regraded, with why
    rows: list[list[Any]] = field(default_factory=list)
    points: dict[str, tuple[float, float]] = field(default_factory=dict)  # id -> (unit, source)
    totals: list[tuple[str, str, float, float]] = field(default_factory=list)


def regrade_cli(*, course_dir: Path, assignment: list[str] | None = None, csv: Path | None = None,
                force: bool = False) -> int:
    course = Course.at(course_dir)
    if not gradebook.exists(course) or not course.results_dir.is_dir():
        print(f"gradtutor regrade: {course.root} has no graded results (gradtutor/results/) or no "
              f"gradebook.db: grade the class first (gradtutor grade {course.root}).", file=sys.stderr)
        return 2
    started = time.monotonic()
    summary = regrade(course, assignment, force=force)
    seconds = time.monotonic() - started
    path = None
    if summary.rows or csv is not None:
        stamp = store.now_iso().replace(":", "").replace("+0000", "Z")
        path = csv or course.regrades_dir / f"{stamp}.csv"
        sheet.write(path, CHANGE_COLUMNS, summary.rows)
    _say(summary, seconds, path)
    return 1 if summary.failed else 0


def regrade(course: Course, assignments: list[str] | None = None, *, force: bool = False) -> Summary:
    """Re-judge every stored answer; store what changed (everything with ``force``)."""
    unreadable: list[str] = []
    results = store.load_results(course, assignments, unreadable=unreadable)
    summary = Summary(submissions=len(results),
                      failed=[f"{p}: not a results file (left as it is)" for p in unreadable])
    sources = {a: course.source_notebooks(a) for a in sorted({r.assignment for r in results})
               if course.source_dir(a).is_dir()}
    summary.points = _points_differ(sources)
    if summary.points:  # the unit's points count, as after a rebuild and generate_assignment
        _apply_points(course, sources, summary.points)
    before = {r.key: r for r in store.reconcile(course, results)}
    todo: list[Regraded] = []
    for result in results:
        try:
            done = rejudge(result, _points(sources.get(result.assignment, {})), force=force)
        except Exception as e:  # the grader's failure on one file: say so, go on with the rest
            summary.failed.append(f"{result.student}/{result.assignment}: "
                                  f"{type(e).__name__}: {str(e)[:200]}")
            continue
        for eid, why in done.not_regradable.items():
            summary.not_regradable.setdefault(why, set()).add(eid)
        if done.changed or done.refreshed or force:
            todo.append(done)
    if not todo:
        return summary
    late = gradebook.LatePenalties(course)
    stored: list[SubmissionResult] = []
    with gradebook.open_gradebook(course) as gb:
        for done in todo:
            new = _stored(course, gb, done, sources, late, force)
            if isinstance(new, str):
                summary.failed.append(new)
                continue
            stored.append(new)
            summary.refreshed += not done.changed
            if done.changed:
                summary.changed.append(done)
    _feedback(course, stored)
    after = {r.key: r for r in store.reconcile(course, stored)}
    for done in summary.changed:
        key = done.result.key
        old, new = before[key], after[key]
        summary.totals.append((*key, float(old.score if old.total is None else old.total),
                               float(new.score if new.total is None else new.total)))
        for o, n in done.changed:
            summary.rows.append([key[0], key[1], n.id, o.points, n.points,
                                 round(n.points - o.points, 6), n.max_points, o.verdict,
                                 n.verdict, o.misconception or "", n.misconception or ""])
    return summary


def _points(sources: dict[str, Any]) -> dict[str, float]:
    """grade id -> its points in the course's source notebooks (as ``grade`` scores them)."""
    return {gid: pts for nb in sources.values() for gid, pts in grade_cells(nb)}


def _points_differ(sources: dict[str, dict[str, Any]]) -> dict[str, tuple[float, float]]:
    """Exercises whose unit gives other points than the course's source notebook (scored)."""
    known = set(registry.ids())
    return {eid: (registry.get(eid).points, pts) for nbs in sources.values()
            for eid, pts in _points(nbs).items()
            if eid in known and registry.get(eid).points != pts}


def _apply_points(course: Course, sources: dict[str, dict[str, Any]],
                  changed: dict[str, tuple[float, float]]) -> None:
    """New points of units into the course: each grade cell's points in the source notebook
    (what ``gradtutor build`` would write) and its maximum in the gradebook (what ``nbgrader
    generate_assignment`` would store), so the scores are out of the new maximum."""
    with gradebook.open_gradebook(course) as gb:
        for assignment, notebooks in sources.items():
            for name, nb in notebooks.items():
                moved = []
                for cell in nb.cells:
                    meta = nbgrader_meta(cell)
                    if meta.get("grade") and meta.get("grade_id") in changed:
                        meta["points"] = changed[meta["grade_id"]][0]
                        moved.append(meta["grade_id"])
                for gid in moved:
                    gradebook.set_max_score(gb, assignment, name, gid, changed[gid][0])
                if moved:
                    store.write_atomic(course.source_notebook(assignment, name),
                                       nbformat.writes(nb).encode())


def rejudge(result: SubmissionResult, points: dict[str, float], *, force: bool = False
            ) -> Regraded:
    """The submission's entries judged again from their stored answers (nothing stored yet).

    An entry judged with the unit and the judging code as they are now (both fingerprints
    equal) is not judged again unless ``force``: every input of its verdict is the same, so the
    verdict is too (``force`` checks that, and the tests do)."""
    out = Regraded(result, [])
    known = set(registry.ids())
    same_grader = result.grader == grader_fingerprint()
    if not same_grader:
        out.refreshed = True
    for e in result.exercises:
        new = replace(e)
        eid = e.id
        if eid in known and result.status != "graded":  # unreadable: 0 of the maximum
            new.max_points = points.get(eid, e.max_points)
        elif eid in known:
            unit, inputs = fingerprint(eid)
            max_points = points.get(eid, e.max_points)
            if e.answers and e.inputs not in (None, inputs):
                out.not_regradable[eid] = "its values (setup code or variants) changed"
            elif e.answers and same_grader and not force and (e.unit, e.inputs) == (unit, inputs):
                new = replace(e, max_points=max_points,
                              points=float(round(max_points * e.score, 6)))  # type: ignore[operator]
            elif e.answers:
                new = judged(eid, max_points, e.answers)
            elif e.verdict not in ("error", "manual"):
                out.not_regradable[eid] = ("no stored answers (graded before answers were stored, "
                                           "or too large to store)")
            else:  # no answer reached the grader: nothing to judge, the points may change
                new = replace(e, max_points=max_points, unit=unit, inputs=inputs)
            if (new.unit, new.inputs) != (e.unit, e.inputs):
                out.refreshed = True
        out.exercises.append(new)
        if any(getattr(new, k) != getattr(e, k) for k in COMPARED):
            out.changed.append((e, new))
    return out


def _stored(course: Course, gb: Any, done: Regraded, sources: dict, late: Any,
            force: bool) -> SubmissionResult | str:
    """Gradebook first (the save path of ``grade``; skipped when no points moved, unless
    ``force``), autograded notebooks, results file last; or why not."""
    result = replace(done.result, exercises=done.exercises,
                     score=round(sum(e.points for e in done.exercises), 6),
                     max_score=round(sum(e.max_points for e in done.exercises), 6),
                     regraded_at=store.now_iso(), grader=grader_fingerprint())
    try:
        if force or any(getattr(o, k) != getattr(n, k) for o, n in done.changed
                        for k in ("points", "max_points")):
            names = course.submitted_notebooks(result.student, result.assignment)
            store.save_grades(gb, course, result, grade_ids(sources[result.assignment], names), late)
        store.update_autograded(course, result)
        store.write_result(course, result)
    except Exception as e:  # the grader's: the results file still holds the old grades
        gb.db.rollback()
        return f"{result.student}/{result.assignment}: {type(e).__name__}: {str(e)[:200]}"
    return result


def _feedback(course: Course, results: list[SubmissionResult]) -> None:
    """Rewrite the feedback pages ``gradtutor feedback`` wrote for these submissions."""
    for result in store.reconcile(course, results):
        if feedback.page_path(course, result.student, result.assignment).exists():
            feedback.write_pages(course, result)


def _say(summary: Summary, seconds: float, path: Path | None) -> None:
    out = sys.stderr
    print(f"Re-judged the stored answers of {summary.submissions} submission(s) in {seconds:.1f} s "
          f"(no notebook was run): {len(summary.changed)} changed"
          + (f", {summary.refreshed} rewritten with the same grades" if summary.refreshed else "")
          + ".", file=out)
    for student, assignment, old, new in sorted(summary.totals, key=lambda t: (t[1], t[0]))[:50]:
        print(f"  {student}/{assignment}: {old:g} -> {new:g} ({new - old:+g})", file=out)
    if len(summary.totals) > 50:
        print(f"  ... and {len(summary.totals) - 50} more (all in the CSV)", file=out)
    if path is not None:
        print(f"Changes per exercise written to {path}.", file=out)
    for why, exercises in summary.not_regradable.items():
        print(f"NOT regraded, {why}: {', '.join(sorted(exercises))}. Their stored answers cannot "
              "be judged again: run `gradtutor grade --force --assignment A` for their "
              "assignments (the notebooks run again).", file=out)
    for eid, (unit, source) in sorted(summary.points.items()):
        print(f"Points of {eid}: {source:g} -> {unit:g}, as its unit now says (written into the "
              "course's source notebook and the gradebook's maximum).", file=out)
    for line in summary.failed[:10]:
        print(f"FAILED (left as it was): {line}", file=out)
    if not summary.changed and not summary.refreshed and not summary.failed:
        print("Nothing changed: the exercise units judge every stored answer as before.", file=out)
