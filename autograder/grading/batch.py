"""``gradtutor grade COURSE_DIR``: grade every submission, in parallel, safely, resumably.

    find submissions ─► skip the ones already graded (unless --force)
    warm parent (torch imported once) ─fork─► one isolated child per notebook, N at a time
    child's JSON answers ─► judge ─► gradebook, results/<assignment>/<student>.json, CSV
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from . import store
from .submission import Submission, Unreadable, find, grade_cells, read, sanitise, source_notebooks
from .worker import Limits

Group = tuple[str, str]  # (student, assignment)


def grade_cli(*, course_dir: Path, assignment: list[str] | None, workers: int, csv: Path | None,
              force: bool, shard: tuple[int, int] | None = None, gather: bool = False,
              limits: Limits | None = None) -> int:
    course_dir = course_dir.resolve()
    problem = _check_course(course_dir, assignment)
    if problem:
        print(f"gradtutor grade: {problem}", file=sys.stderr)
        return 2
    if gather:
        return _gather(course_dir, assignment, csv)
    subs = find(course_dir, assignment)
    groups: dict[Group, list[Submission]] = defaultdict(list)
    for sub in subs:
        groups[(sub.student, sub.assignment)].append(sub)
    share = ""
    if shard is not None:
        groups = _share(groups, *shard)
        share = (f" in shard {shard[0]}/{shard[1]} ({len({g[0] for g in groups})} students; "
                 "results files only, gather them into the gradebook with --gather)")
    todo = {g: s for g, s in groups.items() if force or not _up_to_date(course_dir, g, s)}
    print(f"{len(groups)} submission(s) found{share}, {len(groups) - len(todo)} already graded, "
          f"{len(todo)} to grade with {workers} worker(s).", file=sys.stderr)
    started = time.monotonic()
    if todo:
        _protect(course_dir)
        _grade(course_dir, todo, workers=workers, limits=limits or Limits(),
               gradebook=shard is None)
    results = store.load_results(course_dir, assignment)
    if shard is not None:
        results = [r for r in results if (r["student"], r["assignment"]) in groups]
    if csv is not None:
        store.write_csv(csv, results)
    _summary(results, todo, time.monotonic() - started, csv)
    return 0


def _share(groups: dict[Group, list[Submission]], index: int, count: int
           ) -> dict[Group, list[Submission]]:
    """Every ``count``-th student from ``index``: all of a student's work lands in one shard."""
    students = sorted({student for student, _ in groups})
    mine = set(students[index::count])
    return {g: subs for g, subs in groups.items() if g[0] in mine}


def _gather(course_dir: Path, assignment: list[str] | None, csv: Path | None) -> int:
    """Write every results file into the gradebook, one process, as sharded runs cannot."""
    from nbgrader.api import Gradebook
    from tqdm import tqdm

    results = store.load_results(course_dir, assignment)
    sources = {a: source_notebooks(course_dir, a) for a in {r["assignment"] for r in results}}
    with Gradebook(store.db_url(course_dir), _course_id(course_dir)) as gb:
        for result in tqdm(results, unit="student", desc="gathering", file=sys.stderr,
                           dynamic_ncols=True):
            submitted = course_dir / "submitted" / result["student"] / result["assignment"]
            names = {p.stem for p in submitted.glob("*.ipynb")}
            store.save_grades(gb, course_dir, result,
                              _grade_ids(sources[result["assignment"]], names))
    if csv is not None:
        store.write_csv(csv, results)
    print(f"Gathered {len(results)} result(s) into {course_dir / 'gradebook.db'}."
          + (f" Scores written to {csv}." if csv is not None else ""), file=sys.stderr)
    return 0


def _grade_ids(sources: dict[str, Any], notebooks: set[str]) -> dict[str, list[str]]:
    """Notebook name -> its grade cell ids, for the notebooks a student handed in."""
    return {nb: [gid for gid, _ in grade_cells(src)] for nb, src in sources.items()
            if nb in notebooks}


def _check_course(course_dir: Path, assignment: list[str] | None) -> str:
    if not (course_dir / "submitted").is_dir():
        return (f"{course_dir} has no submitted/ folder. Collect submissions first "
                "(nbgrader collect), or make a synthetic class with `gradtutor demo-class`.")
    if not (course_dir / "gradebook.db").exists():
        return (f"{course_dir} has no gradebook.db: run `nbgrader generate_assignment "
                "<assignment>` in the course first.")
    known = {p.parent.name for p in course_dir.glob("source/*/*.ipynb")}
    missing = sorted(set(assignment or []) - known)
    if missing:
        return f"no source notebook for {', '.join(missing)} (known: {', '.join(sorted(known))})."
    in_db = _gradebook_assignments(course_dir)
    needed = sorted({p.parent.name for p in course_dir.glob("submitted/*/*/*.ipynb")} & known
                    - in_db)
    if assignment:
        needed = [a for a in needed if a in assignment]
    if needed:
        return (f"assignment(s) {', '.join(needed)} are not in the gradebook: run "
                f"`nbgrader generate_assignment {needed[0]}` first.")
    return ""


def _gradebook_assignments(course_dir: Path) -> set[str]:
    with sqlite3.connect(f"file:{course_dir / 'gradebook.db'}?mode=ro", uri=True) as db:
        return {row[0] for row in db.execute("SELECT name FROM assignment")}


def _course_id(course_dir: Path) -> str:
    with sqlite3.connect(f"file:{course_dir / 'gradebook.db'}?mode=ro", uri=True) as db:
        row = db.execute("SELECT course_id FROM assignment LIMIT 1").fetchone()
    return row[0] if row else "default_course"


def _up_to_date(course_dir: Path, group: Group, subs: list[Submission]) -> bool:
    """Graded before: a results file newer than every file of the submission."""
    result = store.results_path(course_dir, group[1], group[0])
    if not result.exists():
        return False
    newest = max(p.stat().st_mtime for s in subs for p in s.path.parent.iterdir() if p.is_file())
    return result.stat().st_mtime >= newest


def _protect(course_dir: Path) -> None:
    """Worker uids must not read the gradebook, hidden tests or other students' files."""
    if os.geteuid() != 0:
        return  # no uid switch without root; see docs/grading.md for running in a container
    mode = course_dir.stat().st_mode & 0o777
    if mode & 0o077:
        course_dir.chmod(mode & 0o700)
        print(f"Made {course_dir} private to its owner (was {mode:o}): grading workers run as "
              "other users and must not read it.", file=sys.stderr)


def _grade(course_dir: Path, todo: dict[Group, list[Submission]], *, workers: int,
           limits: Limits, gradebook: bool = True) -> None:
    from nbgrader.api import Gradebook
    from tqdm import tqdm

    from . import forkserver  # sets thread counts before torch loads

    sources = {a: source_notebooks(course_dir, a) for a in {g[1] for g in todo}}
    shell = forkserver.warm_up(nb for nbs in sources.values() for nb in nbs.values())
    tqdm.monitor_interval = 0  # no monitor thread: the parent forks, and must stay single-threaded
    jobs = [(s, sources[s.assignment][s.notebook]) for subs in todo.values() for s in subs]
    outcomes: dict[Group, list[Any]] = defaultdict(list)
    book = Gradebook(store.db_url(course_dir), _course_id(course_dir)) if gradebook \
        else contextlib.nullcontext()  # a shard leaves the gradebook to --gather
    with book as gb, \
            tqdm(total=len(todo), unit="student", desc="grading", file=sys.stderr,
                 dynamic_ncols=True) as bar:

        def on_done(outcome: Any) -> None:
            group = (outcome.submission.student, outcome.submission.assignment)
            outcomes[group].append(outcome)
            if len(outcomes[group]) == len(todo[group]):
                _finish(course_dir, gb, group, outcomes.pop(group), sources[group[1]])
                bar.update(1)

        forkserver.grade_all(jobs, workers=workers, limits=limits, shell=shell, on_done=on_done)


def _finish(course_dir: Path, gb: Any, group: Group, outcomes: list[Any],
            sources: dict[str, Any]) -> None:
    """Score one student's assignment and store it: gradebook first, results file last."""
    from . import scoring
    parts = []
    for outcome in sorted(outcomes, key=lambda o: o.submission.notebook):
        source = sources[outcome.submission.notebook]
        part = scoring.result(outcome, source)
        parts.append(part)
        _write_autograded(course_dir, outcome.submission, source, part)
    result = {
        "student": group[0], "assignment": group[1],
        "status": "failed" if any(p["status"] == "failed" for p in parts) else "graded",
        "reason": "; ".join(p["reason"] for p in parts if p["reason"]),
        "score": round(sum(p["score"] for p in parts), 6),
        "max_score": round(sum(p["max_score"] for p in parts), 6),
        "graded_at": store.now_iso(),
        "duration_s": round(sum(p["duration_s"] for p in parts), 3),
        "exercises": [e for p in parts for e in p["exercises"]],
    }
    if gb is not None:  # a shard leaves the gradebook to --gather
        notebooks = _grade_ids(sources, {o.submission.notebook for o in outcomes})
        store.save_grades(gb, course_dir, result, notebooks)
    store.write_result(course_dir, result)


def _write_autograded(course_dir: Path, sub: Submission, source: Any, part: dict) -> None:
    try:
        cells = sanitise(read(sub.path), source)
    except Unreadable:
        return  # nothing to show; the results file carries the reason
    store.write_autograded(course_dir, sub, store.autograded_notebook(cells, source, part))


def _summary(results: list[dict], todo: dict, seconds: float, csv: Path | None) -> None:
    failed = [r for r in results if r["status"] == "failed"]
    rate = f", {seconds / len(todo):.3f} s per submission" if todo else ""
    print(f"Graded {len(todo)} submission(s) in {seconds:.1f} s{rate}. "
          f"{len(results)} result(s) in total, {len(failed)} could not be read.", file=sys.stderr)
    for r in failed[:10]:
        print(f"  {r['student']}/{r['assignment']}: {r['reason']}", file=sys.stderr)
    broken = [r for r in results if "grader's worker failed" in r["reason"]]
    if broken:  # our fault, not the student's: say so loudly
        print(f"WARNING: the grading worker itself failed on {len(broken)} submission(s), e.g. "
              f"{broken[0]['student']}: {broken[0]['reason']}. See docs/grading.md (uid "
              "switching needs root or a container).", file=sys.stderr)
    if csv is not None:
        print(f"Scores written to {csv}.", file=sys.stderr)
