"""The floor: what the grader must do for each submission at least, in one warm process.

    python bench/floor.py COURSE_DIR [--assignment A] [--solutions] [--by-exercise N]
                                     [--notebook-cells]

The grader's work (the floor): each submission becomes the job the grader's sandbox child gets
(``gradtutor.grading.submission.load``: the sanitised cells, grade cells not run, hidden tests
stripped, and each exercise's setups at every grading variant), and the child's own loop runs
it (``autograder.sandbox.child.run_job``): the cells in order, and at each grade cell the answer
read at every variant (``read_all``: the answer cell re-run, a code exercise's harness), with the
grader's per-cell limits. Serially, in one process warmed like the grader's zygote (the same
``warm_up``, headless, frozen for the garbage collector), the namespace made afresh for each
submission, and the check data out of reach as in the child (its sandbox hides the trusted
package: a chapter's ``review`` cell checks nothing there). No fork, namespaces, cgroups or guard
restore, no judging, no autograded notebook, no gradebook: no grader can do less.

``--notebook-cells`` also measures the old floor, named "notebook_cells": every code cell of the
submitted notebook as it is, the ``check(...)`` self-check cells included (a student's Run All,
whose self-checks re-run answers at the practice values), and no grading re-runs. It is not the
grader's work; it gives the slowest cell that finished (what the per-cell CPU limit must stay
well above).

Prints one JSON line: seconds of wall and CPU in total and per submission, the floor's cells and
answer reads apart, and with ``--by-exercise`` the CPU of reading each exercise's answers.
``--solutions`` runs the source notebooks (every answer right) instead of the submissions.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MPLBACKEND", "Agg")

import argparse
import contextlib
import gc
import io
import json
import statistics
import time
import warnings
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograder.sandbox.limits import CellTimeout, CellTimers, Limits


@dataclass
class Tally:
    """CPU seconds of one measure, per submission, and of each exercise's answer reads."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    cells_cpu: float = 0.0
    answers_cpu: float = 0.0
    by_exercise: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))


class Meter:
    """Stands in for the child's guard and its pipe: the guard's restore (called just before a
    grade cell's answers are read) starts the exercise's clock, and its answers message stops
    it. Restores nothing: the floor has no hostile code to undo, only work to measure."""

    def __init__(self, tally: Tally) -> None:
        self.tally = tally
        self.started = 0.0

    def restore(self) -> None:
        self.started = time.process_time()

    def send(self, message: dict) -> None:
        if message.get("type") == "answers":
            spent = time.process_time() - self.started
            self.tally.by_exercise[str(message["exercise"])].append(spent)
            self.tally.answers_cpu += spent


class Shell:
    """The warm shell, its namespace put back as the zygote had it before each submission (a
    forked child starts from exactly that)."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.base = dict(shell.user_ns)
        self.count = shell.execution_count

    def fresh(self) -> Any:
        import matplotlib.pyplot as plt
        import torch

        from autograder import answers

        # the answer readers' caches (parsed cells, compiled answers, setups) as a child of the
        # zygote finds them: empty, not holding the same lesson cells from the last submission
        for cached in [v for v in vars(answers).values() if hasattr(v, "cache_clear")]:
            cached.cache_clear()
        plt.close("all")
        torch.set_grad_enabled(True)  # what a submission may have left behind in the process
        torch.set_default_dtype(torch.float32)
        history = self.shell.history_manager
        history.output_hist.clear()
        del history.input_hist_parsed[1:], history.input_hist_raw[1:]
        self.shell.user_ns.clear()
        self.shell.user_ns.update(self.base)
        self.shell.execution_count = self.count
        return self.shell


def by_assignment(names: list[str], tally: Tally) -> dict[str, dict]:
    """Mean CPU ms per submission of each chapter."""
    out: dict[str, dict] = {}
    for name in sorted(set(names)):
        cpu = [c for n, c in zip(names, tally.cpu, strict=True) if n == name]
        out[name] = {"submissions": len(cpu), "mean_cpu_ms": 1e3 * sum(cpu) / len(cpu)}
    return out


@contextlib.contextmanager
def no_check_data():
    """No check data, as in the grader's child: its sandbox hides the trusted package, so the
    check-data provider's entry point does not load, and the runtime copy it imports ships no
    data file. A chapter's ``review(N, globals())`` cell then checks no exercise there (here,
    with the answer key importable, it re-ran every answer at the practice values: chapter 10's
    took 750 ms of CPU that no grading child spends)."""
    from autograder import checkdata

    saved = checkdata._provider, checkdata._bundled
    checkdata._provider, checkdata._bundled = (lambda: None), (lambda: None)
    try:
        yield
    finally:
        checkdata._provider, checkdata._bundled = saved


def grader_work(jobs: list[Any], shell: Shell, limits: Limits) -> Tally:
    """The child's loop on each job, serially (``Tally.cpu`` covers cells and answer reads),
    with the check data out of reach as in the child (``no_check_data``)."""
    tally = Tally()
    meter = Meter(tally)
    with no_check_data():
        _run_jobs(jobs, shell, limits, tally, meter)
    tally.cells_cpu = sum(tally.cpu) - tally.answers_cpu
    return tally


def _run_jobs(jobs: list[Any], shell: Shell, limits: Limits, tally: Tally, meter: Meter) -> None:
    from autograder.sandbox.child import run_job

    for job in jobs:
        warm = shell.fresh()
        spent: dict[str, float] = defaultdict(float)
        wall, cpu = time.perf_counter(), time.process_time()
        with _quiet():
            run_job(job, warm, meter, meter.send, limits, spent)
        tally.cpu.append(time.process_time() - cpu)
        tally.wall.append(time.perf_counter() - wall)


def notebook_cells(cells: list[list[str]], limits: Limits) -> tuple[Tally, float]:
    """The old floor: every code cell as submitted in a fresh namespace; and the most CPU time
    a cell used to finish."""
    tally, slowest = Tally(), 0.0
    for sources in cells:
        wall, cpu = time.perf_counter(), time.process_time()
        slowest = max(slowest, _run_cells(sources, limits))
        tally.cpu.append(time.process_time() - cpu)
        tally.wall.append(time.perf_counter() - wall)
    tally.cells_cpu = sum(tally.cpu)
    return tally, slowest


def _run_cells(cells: list[str], limits: Limits) -> float:
    import matplotlib.pyplot as plt

    ns: dict = {"__name__": "__main__"}
    slowest = 0.0
    with _quiet():
        for source in cells:
            cpu = time.process_time()
            try:
                with CellTimers(limits):
                    exec(compile(source, "<cell>", "exec"), ns)
            except CellTimeout:
                continue  # stopped by the limit: not a measure of what the cell needs
            except Exception:
                pass
            slowest = max(slowest, time.process_time() - cpu)
    plt.close("all")
    return slowest


@contextlib.contextmanager
def _quiet():
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def code_cells(cells: list[dict]) -> list[str]:
    return [c["source"] for c in cells if c["cell_type"] == "code"]


def summary(tally: Tally) -> dict:
    n = max(len(tally.cpu), 1)
    return {"seconds": sum(tally.wall), "cpu_seconds": sum(tally.cpu),
            "per_submission": tally.wall, "per_submission_cpu": tally.cpu,
            "mean_cpu_ms": 1e3 * sum(tally.cpu) / n,
            "median_cpu_ms": 1e3 * statistics.median(tally.cpu) if tally.cpu else 0.0,
            "cells_cpu_ms": 1e3 * tally.cells_cpu / n, "answers_cpu_ms": 1e3 * tally.answers_cpu / n}


def by_exercise(tally: Tally, top: int) -> list[dict]:
    """The exercises whose answer reads cost most in all, with their mean and largest read."""
    rows = [{"exercise": eid, "reads": len(t), "total_cpu_s": sum(t),
             "mean_cpu_ms": 1e3 * sum(t) / len(t), "max_cpu_ms": 1e3 * max(t)}
            for eid, t in tally.by_exercise.items()]
    return sorted(rows, key=lambda r: -r["total_cpu_s"])[:top]


def parse() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("course", type=Path)
    p.add_argument("--assignment", action="append", help="only these chapters (repeatable)")
    p.add_argument("--solutions", action="store_true",
                   help="run each chapter's source notebook (every answer right), not the submissions")
    p.add_argument("--students", type=int, default=0, metavar="N",
                   help="only the first N students (by name), for a quicker profile")
    p.add_argument("--by-exercise", type=int, default=0, metavar="N",
                   help="also list the N exercises whose answer reads cost most CPU")
    p.add_argument("--notebook-cells", action="store_true",
                   help="also measure the old floor: every code cell as submitted, self-checks included")
    return p.parse_args()


def main() -> None:
    args = parse()
    limits = Limits()
    from autograder.sandbox.zygote import warm_up
    from gradtutor.course import Course
    from gradtutor.grading import submission

    course = Course.at(args.course)
    assignments = args.assignment or sorted({p.parent.name for p in (args.course / "source").glob("*/*.ipynb")})
    sources = {a: course.source_notebooks(a) for a in assignments}
    # as warm as the grader's zygote: the same warm-up (imports, torch's lazy paths, headless)
    shell = Shell(warm_up(submission.lesson_imports(sources)))
    if args.solutions:
        subs = [(submission.Submission("(solution)", a, nb, course.source_dir(a) / f"{nb}.ipynb"),
                 ("source", a, f"{nb}.ipynb")) for a in assignments for nb in sources[a]]
    else:
        subs = [(s, None) for s in submission.find(course, assignments)]
        if args.students:
            first = sorted({s.student for s, _ in subs})[:args.students]
            subs = [(s, parts) for s, parts in subs if s.student in first]
    loaded = [(s, submission.load(course, s, sources[s.assignment][s.notebook], parts))
              for s, parts in subs]
    readable = [(s, parts, job) for (s, parts), (_, (_, job, _)) in zip(subs, loaded, strict=True)
                if job is not None]
    if args.notebook_cells:  # before the freeze, as the grader's parent does its own work
        from gradtutor.key import answer_key

        for eid in answer_key.ids():  # the self-check cells judge here; the references are ready
            answer_key.check_for(eid)
    gc.freeze()  # as the zygote: a collection in a child does not walk the warm objects
    work = grader_work([job for _, _, job in readable], shell, limits)
    out = {"measure": "grader's work: the child's job cells and answer reads, one warm process",
           "submissions": len(readable), "unreadable": len(loaded) - len(readable),
           **summary(work), "slowest_exercise_read_cpu_s": max(
               (max(t) for t in work.by_exercise.values()), default=0.0),
           "cell_cpu_limit_s": limits.cell_cpu_seconds,
           "by_assignment": by_assignment([s.assignment for s, _, _ in readable], work)}
    if args.by_exercise:
        out["by_exercise"] = by_exercise(work, args.by_exercise)
    if args.notebook_cells:
        old, slowest = notebook_cells([code_cells(submission.read(s, course, parts))
                                       for s, parts, _ in readable], limits)
        out["notebook_cells"] = {"measure": "every code cell as submitted, self-checks included",
                                 **summary(old), "slowest_cell_cpu_s": slowest}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
