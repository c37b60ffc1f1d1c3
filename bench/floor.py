"""The floor: a submission's code cells executed in an already-warm process, nothing else.

    python bench/floor.py COURSE_DIR

Imports torch, matplotlib and the autograder once (as warm as the grader's parent), then runs
every submitted notebook's code cells in a fresh namespace, serially, headless like the grader,
with the grader's per-cell time limits (the same ``Limits``, so a stuck cell costs the floor
what it costs the grader). No isolation, no judging, no gradebook: no grader can beat this.
Prints one JSON line: the total, each submission's time, and the slowest cell that finished,
in CPU seconds (what the per-cell CPU limit must stay well above).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MPLBACKEND", "Agg")

import argparse
import contextlib
import io
import json
import time
import warnings
from pathlib import Path

from autograder.sandbox.limits import CellTimeout, CellTimers, Limits


def run_cells(cells: list[str], limits: Limits) -> float:
    """Run the cells in one fresh namespace; return the most CPU time a cell used to finish."""
    import matplotlib.pyplot as plt

    ns: dict = {"__name__": "__main__"}
    sink = io.StringIO()
    slowest = 0.0
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
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


def code_cells(path: Path) -> list[str] | None:
    try:
        nb = json.loads(path.read_text())
    except ValueError:
        return None  # a damaged file: nothing to execute
    return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            for c in nb.get("cells", []) if c.get("cell_type") == "code"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("course", type=Path)
    args = parser.parse_args()
    limits = Limits()
    from autograder.sandbox.zygote import warm_up
    from gradtutor.course import Course
    from gradtutor.grading.submission import lesson_imports
    from gradtutor.key import answer_key

    assignments = sorted({p.parent.name for p in (args.course / "source").glob("*/*.ipynb")})
    # as warm as the grader's zygote (the same warm-up: imports, torch's lazy paths, headless)
    course = Course.at(args.course)
    warm_up(lesson_imports({a: course.source_notebooks(a) for a in assignments}))
    for eid in answer_key.ids():  # the self-check cells judge here; the references are ready
        answer_key.check_for(eid)
    notebooks = sorted((args.course / "submitted").glob("*/*/*.ipynb"))
    cells = {p: code_cells(p) for p in notebooks}
    readable = [p for p in notebooks if cells[p] is not None]
    per, slowest = [], 0.0
    for path in readable:
        start = time.perf_counter()
        slowest = max(slowest, run_cells(cells[path], limits))
        per.append(time.perf_counter() - start)
    print(json.dumps({"submissions": len(readable), "unreadable": len(notebooks) - len(readable),
                      "seconds": sum(per), "per_submission": per,
                      "slowest_cell_cpu_s": slowest,
                      "cell_cpu_limit_s": limits.cell_cpu_seconds}))


if __name__ == "__main__":
    main()
