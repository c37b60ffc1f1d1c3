"""Trusted side: limits per submission, not per process: one cgroup for each grading child.

The parent creates a group per submission (memory with shared memory and memfd pages counted,
no swap; a process count; a CPU weight and a quota of one worker's share of the machine),
places the forked child in it before it reads its job (so before any student code runs),
watches it for out-of-memory kills, and at the end kills every process in it and removes it.
Nothing here depends on any process of the submission cooperating.

Both cgroup versions: v1 (one hierarchy per controller, ``memory.limit_in_bytes`` and
``memory.memsw.limit_in_bytes``, ``pids.max``, ``cpu.shares`` and ``cpu.cfs_quota_us``,
``cpuacct.usage``; killed by signalling every pid in ``cgroup.procs`` until it is empty) and
v2 (one tree: ``memory.max``, ``memory.swap.max``, ``memory.oom.group``, ``pids.max``,
``cpu.weight``, ``cpu.max``, ``cpu.stat``; killed with ``cgroup.kill``). Which one is read
from ``/proc/self/mounts``; the groups go under the grader's own group, so whatever limits the
grader has still hold. Without root or without the memory and pids controllers, ``open_groups``
returns ``None`` and a reason: the grader then keeps only the per-process rlimits
(docs/grading.md, "Limits per submission") and says so in one line of its output.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from autograder.sandbox.limits import BATCH_GROUP, Limits

PERIOD_US = 100_000  # the CFS period of the CPU quota
KILL_SECONDS = 5.0  # how long to keep killing a group that keeps forking (pids.max bounds it)


@dataclass(frozen=True)
class Budget:
    """What one submission may use, all its processes together."""

    memory_bytes: int
    processes: int
    cpus: float  # CPU cores at most (the quota)

    @classmethod
    def of(cls, limits: Limits, workers: int, cpus: int | None = None) -> Budget:
        cores = cpus or os.cpu_count() or 1
        return cls(memory_bytes=limits.memory_mib * 2**20, processes=limits.processes,
                   cpus=max(0.1, cores / max(1, workers)))


def _write(path: Path, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _keyed(text: str, key: str) -> int:
    """The number after ``key`` in a "key value" file (memory.events, cpu.stat, oom_control)."""
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == key and parts[1].isdigit():
            return int(parts[1])
    return 0


@dataclass
class Group:
    """One submission's group: a folder per hierarchy (one in v2)."""

    version: int
    dirs: dict[str, Path]  # controller -> folder ("unified" in v2)
    removed: bool = False
    ended: bool = False  # its submission is over
    watched: dict[str, int] = field(default_factory=dict)  # file name -> descriptor, read often

    def _dir(self, controller: str) -> Path | None:
        return self.dirs.get("unified", self.dirs.get(controller))

    def join(self, pid: int, proc: Path = Path("/proc")) -> None:
        """Place ``pid`` and every process it has forked so far (its own set-up, no student code
        yet) in the group; children forked later inherit it."""
        for member in [pid, *_descendants(pid, proc)]:
            for folder in dict.fromkeys(self.dirs.values()):
                with contextlib.suppress(ProcessLookupError):
                    _write(folder / "cgroup.procs", str(member))

    def pids(self) -> list[int]:
        folder = self._dir("pids") or next(iter(self.dirs.values()))
        return [int(p) for p in _read(folder / "cgroup.procs").split() if p.isdigit()]

    def count(self) -> int:
        """How many tasks are in it, zombies included: ``pids.current`` (listing
        ``cgroup.procs`` costs a v1 kernel a millisecond)."""
        folder = self._dir("pids")
        text = _read(folder / "pids.current").strip() if folder is not None else ""
        return int(text) if text.isdigit() else len(self.pids())

    def _watch(self, folder: Path, name: str) -> str:
        """A file read at every turn of the parent's loop, through a descriptor kept open."""
        if name not in self.watched:
            try:
                self.watched[name] = os.open(folder / name, os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                return ""
        try:
            return os.pread(self.watched[name], 4096, 0).decode()
        except OSError:
            return ""

    def over_memory(self) -> int:
        """How often its processes together reached the memory limit (the kernel then had to
        reclaim or kill), out-of-memory kills included: more than 0 ends the submission. Its
        processes are not left to thrash at the limit, where a v1 kernel can take many
        seconds to choose a process to kill."""
        folder = self._dir("memory")
        if folder is None or self.removed:
            return 0
        if self.version == 2:
            events = self._watch(folder, "memory.events")
            return _keyed(events, "max") + _keyed(events, "oom_kill")
        # v1's failcnt stays 0 on recent kernels: the high-water mark at the limit tells it
        peak, limit = (self._watch(folder, n).strip() for n in ("memory.max_usage_in_bytes",
                                                                 "memory.limit_in_bytes"))
        at_limit = peak.isdigit() and limit.isdigit() and int(peak) >= int(limit) - 2**20
        return int(at_limit) + _keyed(self._watch(folder, "memory.oom_control"), "oom_kill")

    def _unwatch(self) -> None:
        for fd in self.watched.values():
            os.close(fd)
        self.watched.clear()

    def cpu_seconds(self) -> float:
        """CPU time used by all of its processes so far (those gone too)."""
        if self.version == 2:
            return _keyed(_read(self.dirs["unified"] / "cpu.stat"), "usage_usec") / 1e6
        folder = self.dirs.get("cpuacct")
        text = _read(folder / "cpuacct.usage").strip() if folder else ""
        return int(text) / 1e9 if text.isdigit() else 0.0

    def kill(self, *, seconds: float = KILL_SECONDS) -> None:
        """SIGKILL to every process in the group, without waiting for them to be gone. v2 has
        ``cgroup.kill``; in v1 every pid listed is killed until a fresh listing holds only
        processes already killed (a process with SIGKILL pending can no longer fork)."""
        if self.version == 2:
            with contextlib.suppress(OSError):
                _write(self.dirs["unified"] / "cgroup.kill", "1")
        if self.count() == 0:
            return
        killed: set[int] = set()
        end = time.monotonic() + seconds
        while (pids := set(self.pids())) - killed and time.monotonic() < end:
            for pid in pids - killed:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            killed |= pids

    def try_remove(self) -> bool:
        """Remove the folders once no live process is left in them (the kernel refuses while
        one is; a zombie does not count); True when gone."""
        if self.removed:
            return True
        self._unwatch()
        for folder in dict.fromkeys(self.dirs.values()):
            with contextlib.suppress(FileNotFoundError):
                try:
                    folder.rmdir()
                except OSError:
                    return False
        self.removed = True
        return True

    def remove(self, *, seconds: float = KILL_SECONDS) -> bool:
        """Kill everything in it, wait until the processes are gone, remove the folders."""
        end = time.monotonic() + seconds
        while not self.removed and time.monotonic() < end:
            self.kill(seconds=max(0.0, end - time.monotonic()))
            if not self.try_remove():
                time.sleep(0.01)
        return self.removed


def _descendants(pid: int, proc: Path) -> list[int]:
    out, todo = [], [pid]
    while todo:
        parent = todo.pop()
        for task in _listdir(proc / str(parent) / "task"):
            kids = [int(k) for k in _read(proc / str(parent) / "task" / task / "children").split()]
            out += kids
            todo += kids
    return out


def _listdir(path: Path) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


@dataclass
class Groups:
    """The batch's folder in each hierarchy, and a group per submission under it."""

    version: int
    roots: dict[str, Path]  # controller -> the batch's folder ("unified" in v2)
    budget: Budget
    files: frozenset[str]  # the optional limit files this host has (swap, cpu), by name
    made: list[Group] = field(default_factory=list)

    @property
    def describe(self) -> str:
        return f"cgroup v{self.version} ({', '.join(sorted(self.roots))})"

    def create(self, name: str) -> Group:
        dirs = {c: root / name for c, root in self.roots.items()}
        for folder in dirs.values():
            folder.mkdir(exist_ok=True)
        group = Group(self.version, dirs)
        try:
            (_limit_v2 if self.version == 2 else _limit_v1)(dirs, self.budget, self.files)
        except OSError:
            group.remove()
            raise
        self.made.append(group)
        return group

    def retire(self, group: Group) -> None:
        """Its submission has ended: killed now, removed as soon as its processes are gone
        (one that was still dying at its end is killed again, if anything is left in it)."""
        group.kill()
        group.ended = True
        for other in self.made:
            if other.ended and other is not group and not other.removed:
                other.kill()
        self.made = [g for g in self.made if not (g.ended and g.try_remove())]

    def close(self) -> None:
        for group in self.made:
            group.remove()
        self.made.clear()
        for folder in self.roots.values():
            with contextlib.suppress(OSError):
                folder.rmdir()


OPTIONAL = ("memory.memsw.limit_in_bytes", "memory.swap.max", "cpu.max", "cpu.cfs_quota_us")


def _optional_files(own: dict[str, Path]) -> frozenset[str]:
    """Which optional limit files the batch's folders have (its children get the same)."""
    return frozenset(name for folder in own.values() for name in OPTIONAL if (folder / name).exists())


def _limit_v1(dirs: dict[str, Path], budget: Budget, files: frozenset[str]) -> None:
    memory = dirs["memory"]
    _write(memory / "memory.limit_in_bytes", str(budget.memory_bytes))
    if "memory.memsw.limit_in_bytes" in files:  # swap counted too: no escape to swap
        _write(memory / "memory.memsw.limit_in_bytes", str(budget.memory_bytes))
    with contextlib.suppress(OSError):  # a bigger fork bomb would leave no memory to kill it with
        _write(memory / "memory.swappiness", "0")
    _write(dirs["pids"] / "pids.max", str(budget.processes))
    if "cpu" in dirs and "cpu.cfs_quota_us" in files:
        _write(dirs["cpu"] / "cpu.shares", "1024")
        _write(dirs["cpu"] / "cpu.cfs_period_us", str(PERIOD_US))
        _write(dirs["cpu"] / "cpu.cfs_quota_us", str(int(budget.cpus * PERIOD_US)))


def _limit_v2(dirs: dict[str, Path], budget: Budget, files: frozenset[str]) -> None:
    folder = dirs["unified"]
    _write(folder / "memory.max", str(budget.memory_bytes))
    if "memory.swap.max" in files:
        _write(folder / "memory.swap.max", "0")
    _write(folder / "memory.oom.group", "1")  # one process over the limit ends the submission
    _write(folder / "pids.max", str(budget.processes))
    if "cpu.max" in files:
        _write(folder / "cpu.weight", "100")
        _write(folder / "cpu.max", f"{int(budget.cpus * PERIOD_US)} {PERIOD_US}")


# --- finding the hierarchies -----------------------------------------------------------------

REQUIRED = ("memory", "pids")
WANTED = ("memory", "pids", "cpu", "cpuacct")


def _mounts(proc: Path) -> list[tuple[str, str, set[str]]]:
    """(mount point, type, options) of every cgroup mount."""
    out = []
    for line in _read(proc / "self" / "mounts").splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[2] in ("cgroup", "cgroup2"):
            out.append((parts[1], parts[2], set(parts[3].split(","))))
    return out


def _own_paths(proc: Path) -> dict[str, str]:
    """This process's group in each hierarchy: controller -> path ("" key for v2)."""
    out = {}
    for line in _read(proc / "self" / "cgroup").splitlines():
        _, controllers, path = line.split(":", 2)
        for c in controllers.split(",") if controllers else [""]:
            out[c] = path
    return out


def find(proc: Path = Path("/proc")) -> tuple[int, dict[str, Path]] | str:
    """(version, controller -> this process's own folder), or why there is none to use."""
    mounts, own = _mounts(proc), _own_paths(proc)
    for point, kind, _ in mounts:  # a v2 tree that holds the controllers wins
        if kind == "cgroup2" and "" in own:
            here = Path(point) / own[""].lstrip("/")
            controllers = set(_read(Path(point) / "cgroup.controllers").split())
            if set(REQUIRED) <= controllers:
                return 2, {"unified": here}
    found = {}
    for point, kind, options in mounts:
        for c in WANTED:
            if kind == "cgroup" and c in options and c in own and c not in found:
                found[c] = Path(point) / own[c].lstrip("/")
    missing = [c for c in REQUIRED if c not in found]
    if missing:
        return f"no cgroup {' or '.join(missing)} controller is mounted"
    return 1, found


def _enable_v2(own: Path, batch: Path) -> None:
    """Hand memory, pids and cpu down to the batch's folder and its children. A group that holds
    processes cannot hand controllers down (v2's rule): this process moves to a leaf first."""
    wanted = [c for c in ("memory", "pids", "cpu") if c in _read(own / "cgroup.controllers").split()]
    line = " ".join(f"+{c}" for c in wanted)
    try:
        _write(own / "cgroup.subtree_control", line)
    except OSError:
        leaf = own / f"gradtutor-parent-{os.getpid()}"
        leaf.mkdir(exist_ok=True)
        _write(leaf / "cgroup.procs", str(os.getpid()))
        _write(own / "cgroup.subtree_control", line)
    batch.mkdir(exist_ok=True)
    _write(batch / "cgroup.subtree_control", line)


def open_groups(limits: Limits, workers: int, *, root: bool,
                proc: Path = Path("/proc")) -> tuple[Groups | None, str]:
    """The batch's groups, or None and the one line the grade output shows instead."""
    weaker = ("limits per process only (rlimits: memory and processes per process, CPU per cell; "
              "docs/grading.md, 'Limits per submission')")
    if not root:
        return None, f"WARNING: not root, so no cgroups: {weaker}"
    where = find(proc)
    if isinstance(where, str):
        return None, f"WARNING: {where}: {weaker}"
    version, own = where
    for folder in own.values():
        _sweep(folder)
    name = f"{BATCH_GROUP}{os.getpid()}"  # the child finds its CPU time by these names
    roots = {c: folder / name for c, folder in own.items()}
    try:
        if version == 2:
            _enable_v2(own["unified"], roots["unified"])
        else:
            for folder in roots.values():
                folder.mkdir(exist_ok=True)
        groups = Groups(version, roots, Budget.of(limits, workers), _optional_files(roots))
        groups.create("probe").remove()  # can it write every limit? better to know now
    except OSError as e:
        for folder in roots.values():
            with contextlib.suppress(OSError):
                folder.rmdir()
        return None, f"WARNING: cgroups not usable ({e.strerror or e}): {weaker}"
    groups.made.clear()
    return groups, ""


def _sweep(own: Path) -> None:
    """Remove what a batch killed by SIGKILL left (its pid gone): no group outlives its batch
    for longer than the next batch's start."""
    for batch in own.glob(f"{BATCH_GROUP}[0-9]*"):
        pid = batch.name[len(BATCH_GROUP):]
        if not pid.isdigit() or os.path.exists(f"/proc/{pid}"):
            continue
        for group in [d for d in batch.iterdir() if d.is_dir()]:
            Group(1, {"any": group}).remove(seconds=1)
        with contextlib.suppress(OSError):
            batch.rmdir()
