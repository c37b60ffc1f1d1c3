"""Self-check latency in a live Jupyter kernel (the student's side), over every exercise.

- ``check()`` timed inside the kernel with ``time.perf_counter`` (correct answers and every
  known wrong answer typed in, so the diagnosis path is timed too);
- a whole cell ``check("id", answer)`` timed from the execute request to the kernel's idle
  status, through jupyter_client, as JupyterLab sends it;
- the first check in a fresh kernel (``from autograder import check`` included), next to the
  cost of ``import torch`` in that kernel.
"""

from __future__ import annotations

import json
import statistics
import time
from typing import Any

from jupyter_client import KernelManager

# runs inside the kernel: answers for every exercise, from the solution code and the known
# wrong answers typed in as a student would
PREPARE = r"""
import json as _json, time as _time
from autograder import check as _check
from gradtutor.key import registry as _registry
from gradtutor.authoring import demo as _demo
_answers = []
for _ex in map(_registry.get, EXERCISE_IDS):
    _ns = {}
    exec("import torch\nimport torch.nn.functional as F", _ns)
    exec(_ex.setup_code(_ex.params), _ns)
    exec(_ex.solution, _ns)
    _answers.append((_ex.id, _ns[_ex.answer]))
    for _i in _demo.usable_wrongs(_ex):
        _wns = dict(_ns)
        exec(_demo.planted(_ex, f"wrong:{_i}").code, _wns)
        _answers.append((_ex.id, _wns[_ex.answer]))
"""

LOOP = r"""
_first, _times = [], []
for _id, _a in _answers:
    _t = _time.perf_counter(); _check(_id, _a); _first.append(_time.perf_counter() - _t)
for _ in range({repeats}):
    for _id, _a in _answers:
        _t = _time.perf_counter(); _check(_id, _a); _times.append(_time.perf_counter() - _t)
print(_json.dumps({{"first": _first, "times": _times, "answers": len(_answers)}}))
"""


class Kernel:
    """A real ipykernel, driven like JupyterLab drives it."""

    def __init__(self) -> None:
        self.km = KernelManager(kernel_name="python3")
        self.km.start_kernel()
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)

    def run(self, code: str, timeout: float = 600) -> tuple[float, str]:
        """Seconds from the execute request to idle, and the text the cell printed."""
        start = time.perf_counter()
        msg_id = self.kc.execute(code)
        text, error = [], None
        while True:
            msg = self.kc.get_iopub_msg(timeout=timeout)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream":
                text.append(content["text"])
            elif kind == "error":
                error = f"{content['ename']}: {content['evalue']}"
            elif kind == "status" and content["execution_state"] == "idle":
                break
        elapsed = time.perf_counter() - start
        if error:
            raise RuntimeError(f"kernel cell failed: {error}\n{code[:300]}")
        return elapsed, "".join(text)

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def measure(exercise_ids: list[str], repeats: int = 20, round_trips: int = 3) -> dict[str, Any]:
    from gradtutor.key import registry

    first_ex = registry.get(exercise_ids[0])
    out: dict[str, Any] = {}
    # a fresh kernel: import torch, then the first check, as a student's first run
    kernel = Kernel()
    try:
        out["import_torch_s"], _ = kernel.run("import torch")
        kernel.run("import torch.nn.functional as F\n" + first_ex.setup_code(first_ex.params)
                   + "\n" + first_ex.solution)
        out["first_check_s"], _ = kernel.run(
            f"from autograder import check\ncheck({first_ex.id!r}, {first_ex.answer})")
        out["first_check_exercise"] = first_ex.id
        # every exercise, timed inside the kernel
        kernel.run(PREPARE.replace("EXERCISE_IDS", repr(exercise_ids)))
        _, printed = kernel.run(LOOP.format(repeats=repeats))
        inside = json.loads(printed.strip().splitlines()[-1])
        out["answers"] = inside["answers"]
        out["check_first_per_exercise_ms"] = {
            "p50": 1e3 * statistics.median(inside["first"]), "max": 1e3 * max(inside["first"])}
        out["check_ms"] = {"p50": 1e3 * percentile(inside["times"], 50),
                           "p99": 1e3 * percentile(inside["times"], 99),
                           "samples": len(inside["times"])}
        # whole cells through the Jupyter protocol
        trips = []
        for i in range(inside["answers"]):
            for _ in range(round_trips):
                seconds, _ = kernel.run(f"_check(*_answers[{i}])")
                trips.append(seconds)
        out["cell_round_trip_ms"] = {"p50": 1e3 * percentile(trips, 50),
                                     "p99": 1e3 * percentile(trips, 99), "samples": len(trips)}
        empty = [kernel.run("pass")[0] for _ in range(20)]
        out["empty_cell_round_trip_ms"] = 1e3 * statistics.median(empty)
    finally:
        kernel.close()
    return out
