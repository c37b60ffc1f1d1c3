"""The floor: a submission's code cells executed in an already-warm process, nothing else.

    python bench/floor.py COURSE_DIR [--cell-seconds 10]

Imports torch, matplotlib and the autograder once, then runs every submitted notebook's code
cells in a fresh namespace, serially, with the grader's per-cell time limit (so a stuck cell
costs the floor what it costs the grader). No isolation, no judging, no gradebook: no grader can
beat this. Prints one JSON line.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MPLBACKEND", "Agg")

import argparse  # noqa: E402
import contextlib  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import signal  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402


class Stuck(Exception):
    pass


def _alarm(signum: int, frame: object) -> None:
    raise Stuck


def run_cells(cells: list[str], cell_seconds: int) -> None:
    import matplotlib.pyplot as plt

    ns: dict = {"__name__": "__main__"}
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for source in cells:
            signal.alarm(cell_seconds)
            try:
                exec(compile(source, "<cell>", "exec"), ns)  # noqa: S102 - the benchmark's floor
            except (Exception, Stuck):
                pass
            finally:
                signal.alarm(0)
    plt.close("all")


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
    parser.add_argument("--cell-seconds", type=int, default=10)
    args = parser.parse_args()
    import matplotlib.pyplot  # noqa: F401 - warm: imported once, like the grader's parent
    import torch

    import autograder.selfcheck  # noqa: F401
    from autograder import registry

    torch.set_num_threads(1)
    for ex in registry.all_exercises():  # exercise modules loaded, as a warm grader has them
        registry.get(ex.id)
    for source in sorted((args.course / "source").glob("*/*.ipynb")):  # the lessons' imports
        cells = code_cells(source) or [""]
        run_cells(cells[:1], args.cell_seconds)
    signal.signal(signal.SIGALRM, _alarm)
    notebooks = sorted((args.course / "submitted").glob("*/*/*.ipynb"))
    cells = {p: code_cells(p) for p in notebooks}
    readable = [p for p in notebooks if cells[p] is not None]
    per = []
    for path in readable:
        start = time.perf_counter()
        run_cells(cells[path], args.cell_seconds)
        per.append(time.perf_counter() - start)
    print(json.dumps({"submissions": len(readable), "unreadable": len(notebooks) - len(readable),
                      "seconds": sum(per), "per_submission": per}))


if __name__ == "__main__":
    main()
