"""Student side: the limits of one submission, and the per-cell timers.

One place for the grader and the benchmark's floor, so both stop a cell alike."""

from __future__ import annotations

import signal
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Limits:
    # Per cell, and per answer re-run. CPU time first, so a verdict does not depend on how busy
    # the machine is; the slowest honest cell of the benchmark's class uses 0.5 s of CPU
    # (bench/RESULTS.md).
    cell_cpu_seconds: float = 2
    cell_seconds: float = 5  # wall clock, for a cell that sleeps or waits instead of computing
    notebook_seconds: int = 60  # wall clock for the whole notebook (enforced by the parent)
    memory_mib: int = 1536  # address space on top of the warm zygote's
    processes: int = 32  # threads count too; per submission uid
    file_mib: int = 64  # largest file student code may write
    scratch_mib: int = 64  # the private /tmp (the working folder); /dev/shm and /var/tmp get 16 MiB

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Limits:
        return cls(**{k: type(getattr(cls, k))(v) for k, v in data.items() if hasattr(cls, k)})


def describe(why: str, limits: Limits) -> str:
    """The grader's words for a limit code (the sandbox sends only the code)."""
    return {
        "cpu": f"stopped after {limits.cell_cpu_seconds:g} s of computing (time limit per cell)",
        "wall": f"stopped: still running after {limits.cell_seconds:g} s (time limit per cell)",
        "memory": f"ran out of memory (limit {limits.memory_mib} MiB)",
        "recursion": "recursed too deeply",
    }.get(why, "stopped by a limit")


UID_BASE = 200_000
UIDS_PER_BATCH = 65_536


def uid_block(batch_pid: int) -> int:
    """The first uid of the batch run by ``batch_pid``: its n-th submission runs as this + n.

    One uid per submission: per-uid limits (RLIMIT_NPROC) and file ownership reach exactly
    one submission, and two batches on one machine (their pids differ)
    do not share uids either.
    """
    return UID_BASE + (batch_pid % 8192) * UIDS_PER_BATCH


class CellTimeout(BaseException):
    """Raised by a per-cell timer; BaseException so a bare ``except Exception`` can't eat it."""

    def __init__(self, why: str = "wall") -> None:
        super().__init__(why)
        self.why = why  # "cpu" or "wall": which budget ran out


class CellTimers:
    """Two timers around a cell: CPU time (SIGPROF) and wall clock (SIGALRM), each raising
    ``CellTimeout``."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits

    def __enter__(self) -> None:
        signal.signal(signal.SIGPROF, _on_cpu_timer)
        signal.signal(signal.SIGALRM, _on_wall_timer)
        signal.setitimer(signal.ITIMER_PROF, self.limits.cell_cpu_seconds)
        signal.setitimer(signal.ITIMER_REAL, self.limits.cell_seconds)

    def __exit__(self, *exc: Any) -> None:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)


def _on_cpu_timer(signum: int, frame: Any) -> None:
    raise CellTimeout("cpu")


def _on_wall_timer(signum: int, frame: Any) -> None:
    raise CellTimeout("wall")
