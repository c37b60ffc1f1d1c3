"""The cgroup file logic of both versions, against fake cgroup folders (no root needed).

Which hierarchy is found from /proc/self/mounts and /proc/self/cgroup, what each limit file
gets, how out-of-memory kills and CPU time are read, how a group is killed. The real thing, as
root on this host, is tests/test_cgroup_limits.py.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from autograder.sandbox.limits import Limits
from gradtutor.grading import cgroups
from gradtutor.grading.cgroups import Budget, Group

BUDGET = Budget(memory_bytes=1024 * 2**20, processes=32, cpus=1.0)


def fake_proc(tmp_path: Path, mounts: list[str], own: list[str]) -> Path:
    proc = tmp_path / "proc"
    (proc / "self").mkdir(parents=True)
    (proc / "self" / "mounts").write_text("".join(line + "\n" for line in mounts))
    (proc / "self" / "cgroup").write_text("".join(line + "\n" for line in own))
    return proc


def v1_host(tmp_path: Path, *, pids: bool = True) -> Path:
    fs = tmp_path / "cg"
    names = ["cpu,cpuacct", "memory", *(["pids"] if pids else [])]
    mounts = [f"cgroup {fs / n} cgroup rw,nosuid,{n} 0 0" for n in names]
    mounts.append(f"cgroup2 {fs / 'unified'} cgroup2 rw 0 0")
    (fs / "unified").mkdir(parents=True)
    (fs / "unified" / "cgroup.controllers").write_text("hugetlb\n")
    own = ["5:cpu,cpuacct:/", "4:memory:/box/7", *(["3:pids:/box"] if pids else []), "0::/"]
    return fake_proc(tmp_path, mounts, own)


def v2_host(tmp_path: Path, controllers: str = "cpuset cpu io memory pids") -> Path:
    fs = tmp_path / "cg2"
    (fs / "kubepods" / "pod1").mkdir(parents=True)
    (fs / "cgroup.controllers").write_text(controllers + "\n")
    return fake_proc(tmp_path, [f"cgroup2 {fs} cgroup2 rw,nosuid 0 0"], ["0::/kubepods/pod1"])


def test_v1_is_found_per_controller_under_the_graders_own_group(tmp_path: Path) -> None:
    version, own = cgroups.find(v1_host(tmp_path))
    fs = tmp_path / "cg"
    assert version == 1
    assert own == {"cpu": fs / "cpu,cpuacct", "cpuacct": fs / "cpu,cpuacct",
                   "memory": fs / "memory" / "box" / "7", "pids": fs / "pids" / "box"}


def test_v2_is_found_when_its_tree_holds_memory_and_pids(tmp_path: Path) -> None:
    version, own = cgroups.find(v2_host(tmp_path))
    assert (version, own) == (2, {"unified": tmp_path / "cg2" / "kubepods" / "pod1"})


def test_without_a_pids_or_memory_controller_there_is_a_reason(tmp_path: Path) -> None:
    assert cgroups.find(v1_host(tmp_path / "a", pids=False)) == "no cgroup pids controller is mounted"
    assert "memory" in cgroups.find(v2_host(tmp_path / "b", controllers="cpu io"))


def test_without_root_the_fallback_is_one_warning_line(tmp_path: Path) -> None:
    groups, note = cgroups.open_groups(Limits(), 2, root=False, proc=v1_host(tmp_path))
    assert groups is None
    assert note.startswith("WARNING:") and "\n" not in note and "Limits per submission" in note


def test_with_no_controller_the_fallback_says_which(tmp_path: Path) -> None:
    groups, note = cgroups.open_groups(Limits(), 2, root=True, proc=v1_host(tmp_path, pids=False))
    assert groups is None and "pids" in note and note.startswith("WARNING:")


def test_the_cpu_quota_is_one_workers_share() -> None:
    assert Budget.of(Limits(memory_mib=512, processes=16), workers=4, cpus=8) == \
        Budget(memory_bytes=512 * 2**20, processes=16, cpus=2.0)
    assert Budget.of(Limits(), workers=2, cpus=2).cpus == 1.0


def _dirs(tmp_path: Path, names: list[str]) -> dict[str, Path]:
    dirs = {n: tmp_path / n / "s0" for n in names}
    for d in dirs.values():
        d.mkdir(parents=True, exist_ok=True)
    return dirs


def test_v1_limit_files(tmp_path: Path) -> None:
    dirs = _dirs(tmp_path, ["memory", "pids", "cpu"])
    cgroups._limit_v1(dirs, BUDGET, frozenset({"memory.memsw.limit_in_bytes", "cpu.cfs_quota_us"}))
    assert (dirs["memory"] / "memory.limit_in_bytes").read_text() == str(2**30)
    assert (dirs["memory"] / "memory.memsw.limit_in_bytes").read_text() == str(2**30)
    assert (dirs["pids"] / "pids.max").read_text() == "32"
    assert (dirs["cpu"] / "cpu.cfs_quota_us").read_text() == "100000"
    assert (dirs["cpu"] / "cpu.cfs_period_us").read_text() == "100000"


def test_v1_without_swap_accounting_or_cfs_writes_no_such_file(tmp_path: Path) -> None:
    dirs = _dirs(tmp_path, ["memory", "pids", "cpu"])
    cgroups._limit_v1(dirs, BUDGET, frozenset())
    assert not (dirs["memory"] / "memory.memsw.limit_in_bytes").exists()
    assert not (dirs["cpu"] / "cpu.cfs_quota_us").exists()
    assert (dirs["memory"] / "memory.limit_in_bytes").exists()


def test_v2_limit_files(tmp_path: Path) -> None:
    dirs = _dirs(tmp_path, ["unified"])
    cgroups._limit_v2(dirs, Budget(2**29, 8, 0.5), frozenset({"memory.swap.max", "cpu.max"}))
    files = {f.name: f.read_text() for f in dirs["unified"].iterdir()}
    assert files == {"memory.max": str(2**29), "memory.swap.max": "0", "memory.oom.group": "1",
                     "pids.max": "8", "cpu.weight": "100", "cpu.max": "50000 100000"}


def test_v2_hands_the_controllers_down_to_the_batch(tmp_path: Path) -> None:
    own = tmp_path / "pod"
    own.mkdir()
    (own / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    cgroups._enable_v2(own, own / "gradtutor-1")
    assert (own / "cgroup.subtree_control").read_text() == "+memory +pids +cpu"
    assert (own / "gradtutor-1" / "cgroup.subtree_control").read_text() == "+memory +pids +cpu"


def test_groups_create_writes_the_limits_and_reads_back(tmp_path: Path) -> None:
    roots = {"unified": tmp_path / "batch"}
    roots["unified"].mkdir()
    groups = cgroups.Groups(2, roots, BUDGET, frozenset({"cpu.max"}))
    group = groups.create("s3")
    folder = tmp_path / "batch" / "s3"
    assert group.dirs == {"unified": folder} and groups.made == [group]
    assert (folder / "pids.max").read_text() == "32"
    (folder / "memory.events").write_text("low 0\nhigh 0\nmax 12\noom 1\noom_kill 2\n")
    (folder / "cpu.stat").write_text("usage_usec 2500000\nuser_usec 2000000\n")
    assert group.over_memory() == 14 and group.cpu_seconds() == 2.5


def test_v1_reads_memory_failures_and_cpu_time(tmp_path: Path) -> None:
    dirs = _dirs(tmp_path, ["memory", "pids", "cpuacct"])
    group = Group(1, dirs)
    assert group.over_memory() == 0 and group.cpu_seconds() == 0.0  # files absent: nothing yet
    (dirs["memory"] / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 1\n")
    (dirs["cpuacct"] / "cpuacct.usage").write_text("1500000000\n")
    assert group.over_memory() == 1 and group.cpu_seconds() == 1.5
    (dirs["memory"] / "memory.limit_in_bytes").write_text(f"{2**30}\n")
    (dirs["memory"] / "memory.max_usage_in_bytes").write_text(f"{2**30 - 2**21}\n")
    assert group.over_memory() == 1  # 2 MiB below the limit at most: not reached
    (dirs["memory"] / "memory.max_usage_in_bytes").write_text(f"{2**30}\n")
    assert group.over_memory() == 2  # reached it once: the kernel had to reclaim


def test_v2_kill_writes_cgroup_kill(tmp_path: Path) -> None:
    group = Group(2, _dirs(tmp_path, ["unified"]))
    group.kill()
    assert (group.dirs["unified"] / "cgroup.kill").read_text() == "1"


def test_v1_kill_signals_every_listed_process(tmp_path: Path) -> None:
    dirs = _dirs(tmp_path, ["memory", "pids"])
    sleepers = [subprocess.Popen(["sleep", "60"]) for _ in range(2)]
    try:
        (dirs["pids"] / "cgroup.procs").write_text("".join(f"{p.pid}\n" for p in sleepers))
        Group(1, dirs).kill(seconds=1)
        assert [p.wait(timeout=10) for p in sleepers] == [-signal.SIGKILL] * 2
    finally:
        for p in sleepers:
            if p.poll() is None:
                p.kill()
                p.wait()


def test_join_places_the_child_and_what_it_forked(tmp_path: Path) -> None:
    """The child's own set-up may have forked (a PID namespace's init): those go in too."""
    proc = tmp_path / "proc"
    for pid, kids in ((10, "11 12"), (11, "13"), (12, ""), (13, "")):
        (proc / str(pid) / "task" / str(pid)).mkdir(parents=True)
        (proc / str(pid) / "task" / str(pid) / "children").write_text(kids)
    dirs = _dirs(tmp_path, ["memory", "pids"])
    written: list[tuple[str, str]] = []
    real = cgroups._write
    try:
        cgroups._write = lambda path, value: written.append((path.parent.parent.name, value))
        Group(1, dirs).join(10, proc)
    finally:
        cgroups._write = real
    assert sorted(v for c, v in written if c == "pids") == ["10", "11", "12", "13"]
    assert sorted(v for c, v in written if c == "memory") == ["10", "11", "12", "13"]


def test_real_host_groups_are_created_and_removed(tmp_path: Path) -> None:
    """On a host where this runs as root with cgroups (this machine): a real group limits and
    is gone after ``remove``."""
    if os.geteuid() != 0 or isinstance(cgroups.find(), str):
        return
    groups, note = cgroups.open_groups(Limits(memory_mib=64, processes=4), 2, root=True)
    assert groups is not None, note
    group = groups.create("unit")
    child = subprocess.Popen(["sleep", "60"])
    group.join(child.pid)
    assert group.pids() == [child.pid]
    start = time.monotonic()
    assert group.remove()
    assert child.wait(timeout=10) == -signal.SIGKILL and time.monotonic() - start < 10
    assert not any(d.exists() for d in group.dirs.values())
    groups.close()
    assert not any(r.exists() for r in groups.roots.values())


CELL = """\
import os, sys, time
sys.stdin.read(1)  # placed in its group by now
from autograder.sandbox.limits import CellTimeout, CellTimers, Limits
kids = []
try:
    with CellTimers(Limits(cell_cpu_seconds=1, cell_seconds=float(sys.argv[1]))):
        for _ in range(int(sys.argv[2])):
            pid = os.fork()
            if pid == 0:
                while True:
                    pass
            kids.append(pid)
        time.sleep(60)  # this process computes nothing: only its children do
    print("none")
except CellTimeout as e:
    print(e.why)
for pid in kids:
    os.kill(pid, 9)
"""


def _cell(group: Group | None, wall: float, spinners: int) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", CELL, str(wall), str(spinners)], text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)})
    if group is not None:
        group.join(proc.pid)
    proc.stdin.write("x")
    proc.stdin.flush()
    return proc


def test_cell_cpu_time_counts_every_process_of_the_submission_only() -> None:
    """A cell whose forked children compute is stopped for CPU time (its own process used
    none); a classmate's cell that only waits, beside a hog, is stopped by the wall clock, never
    for the hog's CPU time."""
    if os.geteuid() != 0 or isinstance(cgroups.find(), str):
        return
    groups, note = cgroups.open_groups(Limits(), 2, root=True)
    assert groups is not None, note
    try:
        computing = _cell(groups.create("s1"), 60, 2)
        assert computing.communicate(timeout=60)[0].strip() == "cpu"
        hog = _cell(groups.create("s2"), 60, 3)
        waiting = _cell(groups.create("s3"), 3, 0)
        assert waiting.communicate(timeout=60)[0].strip() == "wall"
        assert hog.communicate(timeout=60)[0].strip() == "cpu"
    finally:
        groups.close()


def test_outside_a_submission_group_the_cell_has_its_plain_alarm() -> None:
    """Not in a group the grader made (the benchmark's floor, no cgroups): children's CPU is not
    counted (it would include the neighbours'), the wall clock stops the cell as before."""
    assert _cell(None, 2, 1).communicate(timeout=60)[0].strip() == "wall"
