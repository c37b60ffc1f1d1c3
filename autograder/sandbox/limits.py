"""Student side: the limits of one submission, and the per-cell timers.

One place for the grader and the benchmark's floor, so both stop a cell alike."""

from __future__ import annotations

import os
import re
import signal
import time
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Limits:
    # Per cell, and per answer re-run. CPU time first, so a verdict does not depend on how busy
    # the machine is; the slowest honest cell of the benchmark's class uses 0.5 s of CPU
    # (bench/RESULTS.md).
    cell_cpu_seconds: float = 2
    # wall clock, for a cell that sleeps or waits instead of computing: a backstop 5x the CPU
    # limit, which a neighbour's load cannot reach (each submission's cgroup gets at most its
    # worker's share of the machine; docs/grading.md, "Limits per submission")
    cell_seconds: float = 10
    notebook_seconds: int = 60  # wall clock for the whole notebook (enforced by the parent)
    # per process: address space on top of the warm zygote's; per submission (its cgroup, where
    # the host has one): the resident memory of all its processes, memfd and shared memory included
    memory_mib: int = 1536
    processes: int = 32  # threads count too; per submission uid and per submission cgroup
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


# The parent's cgroup names (gradtutor.grading.cgroups): a batch folder, a group per submission.
BATCH_GROUP = "gradtutor-"
SUBMISSION_GROUP = re.compile(r"s\d+")
TICK_SECONDS = 0.25  # how often the CPU time of the submission's processes is looked at


class CellTimers:
    """Timers around a cell, each raising ``CellTimeout``: the process's own CPU time (SIGPROF),
    and a wall-clock tick (SIGALRM) that stops the cell when the wall-clock limit is reached or
    when all the submission's processes together used more than the cell's CPU time (read
    from its own cgroup; without one, the wall clock alone, once, as a plain alarm)."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.started = 0.0
        self.cpu_at_start = 0.0
        self.usage: GroupCpu | None = None

    def __enter__(self) -> None:
        self.usage = GroupCpu.own()
        self.started = time.monotonic()
        signal.signal(signal.SIGPROF, _on_cpu_timer)
        signal.setitimer(signal.ITIMER_PROF, self.limits.cell_cpu_seconds)
        if self.usage is None:
            signal.signal(signal.SIGALRM, _on_wall_timer)
            signal.setitimer(signal.ITIMER_REAL, self.limits.cell_seconds)
            return
        self.cpu_at_start = self.usage.seconds()
        signal.signal(signal.SIGALRM, self._tick)
        tick = min(TICK_SECONDS, self.limits.cell_seconds)
        signal.setitimer(signal.ITIMER_REAL, tick, tick)

    def _tick(self, signum: int, frame: Any) -> None:
        why = ""
        if time.monotonic() - self.started >= self.limits.cell_seconds:
            why = "wall"
        elif self.usage is not None and self._group_cpu() >= self.limits.cell_cpu_seconds:
            why = "cpu"
        if why:
            signal.setitimer(signal.ITIMER_REAL, 0)  # once, as the plain alarm
            raise CellTimeout(why)

    def _group_cpu(self) -> float:
        try:
            return self.usage.seconds() - self.cpu_at_start if self.usage is not None else 0.0
        except (OSError, ValueError):  # its descriptor closed by student code: the wall clock is left
            self.usage = None
            return 0.0

    def __exit__(self, *exc: Any) -> None:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)


class GroupCpu:
    """The CPU time of every process of this submission: its cgroup's ``cpuacct.usage`` (v1) or
    ``cpu.stat`` (v2), read through a descriptor opened once per process. Only in a group the
    grader made for one submission: anywhere else the count would include the neighbours."""

    _found: dict[int, GroupCpu | None] = {}

    def __init__(self, fd: int, v2: bool) -> None:
        self.fd, self.v2 = fd, v2

    @classmethod
    def own(cls) -> GroupCpu | None:
        pid = os.getpid()  # a forked child looks for its own (the zygote has none)
        if pid not in cls._found:  # in place: the grader's snapshot keeps this class's entries
            cls._found.clear()
            cls._found[pid] = cls._find()
        return cls._found[pid]

    @classmethod
    def _find(cls) -> GroupCpu | None:
        try:
            with open("/proc/self/cgroup") as f:
                lines = f.read().splitlines()
            with open("/proc/self/mounts") as f:
                mounts = [line.split() for line in f.read().splitlines()]
            for line in lines:
                _, controllers, path = line.split(":", 2)
                parts = path.rstrip("/").split("/")
                if len(parts) < 3 or not parts[-2].startswith(BATCH_GROUP) or \
                        not SUBMISSION_GROUP.fullmatch(parts[-1]):
                    continue
                v2 = controllers == ""
                if not v2 and "cpuacct" not in controllers.split(","):
                    continue
                for m in mounts:
                    if len(m) >= 4 and ((v2 and m[2] == "cgroup2") or
                                        (not v2 and m[2] == "cgroup" and "cpuacct" in m[3].split(","))):
                        name = "cpu.stat" if v2 else "cpuacct.usage"
                        usage = cls(os.open(f"{m[1]}{path}/{name}", os.O_RDONLY | os.O_CLOEXEC), v2)
                        usage.seconds()
                        return usage
        except (OSError, ValueError):
            pass
        return None

    def seconds(self) -> float:
        text = os.pread(self.fd, 4096, 0).decode()
        if not self.v2:
            return int(text) / 1e9
        for line in text.splitlines():
            if line.startswith("usage_usec "):
                return int(line.split()[1]) / 1e6
        raise ValueError("no usage_usec in cpu.stat")


def _on_cpu_timer(signum: int, frame: Any) -> None:
    raise CellTimeout("cpu")


def _on_wall_timer(signum: int, frame: Any) -> None:
    raise CellTimeout("wall")
