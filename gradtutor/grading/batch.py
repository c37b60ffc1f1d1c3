"""Trusted side: ``gradtutor grade COURSE_DIR``: grade every submission, in parallel, safely, resumably.

    find submissions ─► skip the ones already graded (unless --force)
    read each notebook once, safely ─► sanitised cells + the variants' setup code = one job
    zygote (student runtime only) ─fork─► one isolated child per notebook, N at a time
    child's typed answers ─► judge ─► gradebook, results/<assignment>/<student>.json, CSV

A failure that is not the student's (the sandbox, the disk outside the student's own space, a
bug here) leaves the submission not graded: nothing is stored, and the next run retries it.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tqdm import tqdm

from autograder.contract import Job
from autograder.sandbox.limits import Limits
from gradtutor.course import Course, grade_cells
from gradtutor.grading import forkserver, torch_uses
from gradtutor.grading.forkserver import NEEDS_ROOT
from gradtutor.grading.gather import check_course
from gradtutor.grading.gather import gather as gather_results
from gradtutor.grading.profile import OFF, Profile
from gradtutor.grading.recorder import Recorder
from gradtutor.grading.submission import Submission, find, first_imports, load
from gradtutor.key import registry
from gradtutor.key.answer_key import fingerprint, grader_fingerprint, keep_checks
from gradtutor.records import store
from gradtutor.records.results import SubmissionResult

Group = tuple[str, str]  # (student, assignment)


def grade_cli(*, course_dir: Path, assignment: list[str] | None, workers: int, csv: Path | None,
              force: bool, shard: tuple[int, int] | None = None, gather: bool = False,
              limits: Limits | None = None, student_python: Path | None = None,
              profile: bool | Profile = False, sandbox: Any = None) -> int:
    """``sandbox``: a zygote the caller started already (``gradtutor.grading.launch``), warming
    up while this module loaded; closed here either way."""
    with contextlib.ExitStack() as stack:
        if sandbox is not None:
            stack.enter_context(sandbox)
        return _grade_cli(course_dir=course_dir, assignment=assignment, workers=workers, csv=csv,
                          force=force, shard=shard, gather=gather,
                          limits=sandbox.limits if sandbox is not None else limits or Limits(),
                          student_python=student_python, sandbox=sandbox,
                          prof=profile if isinstance(profile, Profile) else Profile(enabled=profile))


def _grade_cli(*, course_dir: Path, assignment: list[str] | None, workers: int, csv: Path | None,
               force: bool, shard: tuple[int, int] | None, gather: bool, limits: Limits,
               student_python: Path | None, sandbox: Any, prof: Profile) -> int:
    if "start: imports" not in prof.parent:
        prof.add("start: imports", prof.since_start())
    course = Course.at(course_dir)
    if os.geteuid() != 0 and not gather:
        print(NEEDS_ROOT, file=sys.stderr)
        return 2
    problem = check_course(course, assignment)
    if problem:
        print(f"gradtutor grade: {problem}", file=sys.stderr)
        return 2
    if gather:
        return gather_results(course, assignment, csv)
    try:
        python = forkserver.interpreter(student_python) if sandbox is None else None
    except forkserver.SandboxError as e:
        print(f"gradtutor grade: {e}", file=sys.stderr)
        return 2
    with prof.step("start: find submissions"):
        subs = find(course, assignment)
    groups: dict[Group, list[Submission]] = defaultdict(list)
    for sub in subs:
        groups[(sub.student, sub.assignment)].append(sub)
    share = ""
    if shard is not None:
        groups = _share(groups, *shard)
        share = (f" in shard {shard[0]}/{shard[1]} ({len({g[0] for g in groups})} students; "
                 "results files only, gather them into the gradebook with --gather)")
    with prof.step("start: skip graded"):
        todo = {g: s for g, s in groups.items() if force or not _up_to_date(course, g, s)}
    print(f"{len(groups)} submission(s) found{share}, {len(groups) - len(todo)} already graded, "
          f"{len(todo)} to grade with {workers} worker(s).", file=sys.stderr)
    with prof.step("start: skip graded"):
        graded = {g for g in groups if g not in todo}
        stored = store.load_results(course, assignment) if graded else []  # --force: none
        # their fingerprints need the references: read back, as the grading below does
        prof.count("references computed", len(keep_checks(course.checks_cache, _exercises(stored, graded))))
        stale = stale_units(stored, graded)
    if stale:
        print(stale_message(course.root, stale), file=sys.stderr)
    started = time.monotonic()
    not_graded = _grade(course, todo, workers=workers, limits=limits, to_gradebook=shard is None,
                        python=python, profile=prof, sandbox=sandbox) if todo else {}
    results = store.load_results(course, assignment)
    if shard is not None:
        results = [r for r in results if (r.student, r.assignment) in groups]
    if csv is not None:
        store.write_csv(csv, store.reconcile(course, results))
    _summary(results, todo, time.monotonic() - started, csv, not_graded)
    if prof.enabled:
        prof.finish(len(todo))
        print(prof.table(), file=sys.stderr)
        prof.save(course.root / "gradtutor" / "grade-profile.json")
        print(f"Profile saved to {course.root / 'gradtutor' / 'grade-profile.json'}.", file=sys.stderr)
    return 1 if not_graded else 0



def stale_units(results: list[SubmissionResult], graded: set[Group]) -> dict[str, set[Group]]:
    """exercise id -> the graded submissions whose stored grades came from another version of
    its unit (their fingerprint is not the unit's now)."""
    known = set(registry.ids())
    out: dict[str, set[Group]] = defaultdict(set)
    for r in results:
        group = (r.student, r.assignment)
        if group not in graded or r.status != "graded":
            continue
        if r.grader is not None and r.grader != grader_fingerprint():
            out[JUDGING_CODE].add(group)
        for e in r.exercises:
            if e.id in known and e.unit is not None and e.unit != fingerprint(e.id)[0]:
                out[e.id].add(group)
    return dict(out)


def _exercises(results: list[SubmissionResult], groups: set[Group]) -> set[str]:
    known = set(registry.ids())
    return {e.id for r in results if (r.student, r.assignment) in groups for e in r.exercises
            if e.id in known}


JUDGING_CODE = "(the judging code)"


def stale_message(course_dir: Path, stale: dict[str, set[Group]]) -> str:
    submissions = set().union(*stale.values())
    units = sorted(set(stale) - {JUDGING_CODE})
    what = [f"exercise unit(s) {', '.join(units[:12])}" + (f" and {len(units) - 12} more"
                                                          if len(units) > 12 else "")] if units else []
    if JUDGING_CODE in stale:
        what.append("the grader's judging code (autograder/judge.py, kinds.py, ...)")
    return (f"{len(submissions)} graded submission(s) are stale: graded before "
            f"{' and '.join(what)} changed. Run `gradtutor regrade {course_dir}` to judge "
            "their stored answers again (no notebook runs; the gradebook, results and feedback "
            "are updated).")


def _share(groups: dict[Group, list[Submission]], index: int, count: int
           ) -> dict[Group, list[Submission]]:
    """Every ``count``-th student from ``index``: all of a student's work lands in one shard."""
    students = sorted({student for student, _ in groups})
    mine = set(students[index::count])
    return {g: subs for g, subs in groups.items() if g[0] in mine}


def _up_to_date(course: Course, group: Group, subs: list[Submission]) -> bool:
    """Graded before: a results file newer than every file of the submission."""
    result = course.results_path(group[1], group[0])
    if not result.exists():
        return False
    newest = max((_mtime(p) for s in subs for p in _files(s.path.parent)), default=0.0)
    return result.stat().st_mtime >= newest


def _files(folder: Path) -> list[Path]:
    try:
        return [Path(e.path) for e in os.scandir(folder)]
    except OSError:  # a link or a vanished folder: the submission's own reason comes later
        return []


def _mtime(path: Path) -> float:
    return path.lstat().st_mtime  # never follow a link


def _grade(course: Course, todo: dict[Group, list[Submission]], *, workers: int,
           limits: Limits, to_gradebook: bool = True,
           python: forkserver.Interpreter | None = None, profile: Profile = OFF,
           sandbox: Any = None) -> dict[Group, str]:
    """Grade ``todo``; return the groups left not graded, with the grader's reason."""
    if sandbox is None:
        with profile.step("start: zygote spawned"):
            try:  # the zygote warms up in its own process while this one reads and prepares
                sandbox = forkserver.Sandbox(limits=limits, course_dir=course.root, imports=None,
                                             python=python, profile=profile, walks_told=True)
            except (OSError, forkserver.SandboxError) as e:
                return dict.fromkeys(todo, f"the grading sandbox could not start ({e})")
        profile.mark("zygote spawned")
    with sandbox:
        with profile.step("start: read notebooks"):  # the lessons: each submission is read later
            sources = {a: course.source_notebooks(a) for a in {g[1] for g in todo}}
            # the first children's chapter before the first fork; the others' between forks
            now, later = first_imports(sources, next(iter(todo))[1])
            sandbox.send_imports(now, later=later)
        return _run_batch(course, todo, sandbox, sources, workers=workers, limits=limits,
                          to_gradebook=to_gradebook, profile=profile)


def _references_needed(todo: dict[Group, list[Submission]], sources: dict) -> list[str]:
    """The exercises the judge will need, in the order their submissions are run: the graded
    cells of the source notebooks (``sanitise`` puts back the ones a student deleted)."""
    known = set(registry.ids())
    notebooks = dict.fromkeys((s.assignment, s.notebook) for subs in todo.values() for s in subs)
    return list(dict.fromkeys(gid for a, nb in notebooks for gid, _ in grade_cells(sources[a][nb])
                              if gid in known))


def _jobs(course: Course, todo: dict[Group, list[Submission]], sources: dict, loaded: dict,
          unreadable: Callable[[Submission], None], forked: Callable[[], None], profile: Profile
          ) -> Iterator[tuple[Submission, Job]]:
    """Each submission read when its child is about to be forked (the first child waits for
    one notebook, not the class's); an unreadable one goes to ``unreadable``, run by nothing.
    ``forked`` is called once a job's child was started (the sandbox asks for the next job
    only then)."""
    for subs in todo.values():
        for sub in subs:
            with profile.step("read notebook"):
                loaded[sub] = load(course, sub, sources[sub.assignment][sub.notebook])
            job = loaded[sub][1]
            if job is None:  # unreadable: the student's problem, scored without running anything
                unreadable(sub)
            else:
                yield sub, job
                forked()


def _run_batch(course: Course, todo: dict[Group, list[Submission]], sandbox: Any,
               sources: dict, *, workers: int, limits: Limits, to_gradebook: bool,
               profile: Profile = OFF) -> dict[Group, str]:
    """Run the children; each student's finished assignment goes to the recorder's process,
    which judges and stores it while the next children run."""
    outcomes: dict[Group, list[tuple[Submission, Any]]] = defaultdict(list)
    queued: set[Group] = set()
    loaded: dict = {}  # filled as the notebooks are read (``_jobs``)
    tqdm.monitor_interval = 0  # no monitor thread: the recorder's pipes' are the only others
    with tqdm(total=len(todo), unit="student", desc="grading", file=sys.stderr,
              dynamic_ncols=True) as bar:

        def stored(group: Group) -> None:
            profile.mark("first result stored")
            bar.update(1)

        recorder = Recorder(course, sources, loaded, limits, to_gradebook=to_gradebook,
                            profile=profile, on_stored=stored,
                            references=_references_needed(todo, sources))
        try:
            def record(sub: Submission, outcome: Any) -> None:
                group = (sub.student, sub.assignment)
                outcomes[group].append((sub, outcome))
                if len(outcomes[group]) == len(todo[group]):
                    queued.add(group)
                    recorder.put(group, outcomes.pop(group))

            walks_told = False

            def started() -> None:
                nonlocal walks_told
                if not walks_told:  # off the path to the first fork; the zygote walks none before
                    walks_told = True
                    with profile.step("walks chosen"):
                        sandbox.send_walks(torch_uses.walks_for(sources))
                recorder.children_started()

            jobs = _jobs(course, todo, sources, loaded, lambda sub: record(sub, None), started, profile)
            first = next(jobs, None)  # read before the zygote is waited for
            profile.mark("first job read")
            recorder.first_read()
            sandbox_failed = ""
            if first is not None:
                try:
                    sandbox.grade_all(itertools.chain([first], jobs), workers=workers,
                                      on_done=lambda o: record(o.key, o),
                                      count=sum(map(len, todo.values())))
                except forkserver.SandboxError as e:  # nothing after this point was the students'
                    sandbox_failed = str(e)
        finally:
            not_graded = recorder.close()  # everything finished is stored, even on the way out
    if sandbox_failed:
        for group in set(todo) - queued:
            not_graded[group] = sandbox_failed
    return not_graded


def _summary(results: list[SubmissionResult], todo: dict, seconds: float, csv: Path | None,
             not_graded: dict[Group, str]) -> None:
    failed = [r for r in results if r.status == "failed"]
    rate = f", {seconds / len(todo):.3f} s per submission" if todo else ""
    print(f"Graded {len(todo) - len(not_graded)} submission(s) in {seconds:.1f} s{rate}. "
          f"{len(results)} result(s) in total, {len(failed)} could not be read.", file=sys.stderr)
    for r in failed[:10]:
        print(f"  {r.student}/{r.assignment}: {r.reason}", file=sys.stderr)
    if not_graded:  # our fault, not the student's: say so loudly, store nothing, retry next run
        (student, assignment), why = next(iter(not_graded.items()))
        print(f"WARNING: {len(not_graded)} submission(s) were NOT graded because the grader failed "
              f"(e.g. {student}/{assignment}: {why}). Nothing was stored for them; run the same "
              "command again to grade them.", file=sys.stderr)
    kept = sum(r.manual_grades or 0 for r in results)
    if kept:
        print(f"Kept {kept} manual grade(s) entered in the formgrader: they count instead of the "
              "auto score, as in nbgrader (reports, feedback and --csv show them).", file=sys.stderr)
    if csv is not None:
        print(f"Scores written to {csv}.", file=sys.stderr)
