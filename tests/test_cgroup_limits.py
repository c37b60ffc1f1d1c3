"""Limits per submission, not per process: hogs graded beside honest classmates.

One batch, through the real grader (as root, with the host's cgroups): memory held across
several processes and in memfd and shared anonymous memory stops at the submission's limit, a
fork bomb at its process count, and 30 busy processes leave the honest classmates' scores and
reasons exactly what they are in a quiet batch. The file logic of both cgroup versions is
tested against fake cgroup folders in tests/test_cgroups.py.
"""

from __future__ import annotations

import json
import os
import shutil
import textwrap

import pytest
from hostile import kit
from hostile.corpus import FIRST_ONLY, Context, after_first_exercise, early
from test_hostile import public_course, result_of, run

from gradtutor.grading import cgroups

pytestmark = pytest.mark.slow
HONEST = [f"b_honest_{k}" for k in range(4)]
# a wall-clock limit per cell far above what an honest cell needs on a machine that other work
# keeps busy; 30 uncapped busy processes slow a cell more than 13x (2 cores), past it. A CPU
# limit per cell far above what filling 1.25 GiB costs (0.9 s of CPU alone, measured; more than
# 2 s, the default limit, once under CI load), so the memory limit, not the CPU one, stops it.
LIMITS = "Limits(cell_cpu_seconds=10, cell_seconds=20, notebook_seconds=40, memory_mib=1024)"

MEMORY_ACROSS_PROCESSES = """\
import os, time
kids = []
for _ in range(3):  # 3 x 450 MiB: each process far below the per-process limit of 1024 MiB
    pid = os.fork()
    if pid == 0:
        keep = b"x" * (450 * 2**20)
        time.sleep(60)
        os._exit(0)
    kids.append(pid)
while True:  # waits for them through the per-cell limits: only the memory limit ends it
    try:
        for pid in kids:
            os.waitpid(pid, 0)
        break
    except BaseException:
        pass
"""

MEMFD_AND_SHARED = """\
import mmap, os
chunk = b"x" * 2**24
held = []

def fill():
    fd = os.memfd_create("hog")
    for _ in range(40):  # 640 MiB in a memfd: no address space at all
        os.write(fd, chunk)
    shared = mmap.mmap(-1, 640 * 2**20, flags=mmap.MAP_SHARED)  # shared anonymous memory (shmem)
    for at in range(0, len(shared), len(chunk)):
        shared[at:at + len(chunk)] = chunk
    held.append((fd, shared))

while True:  # through the per-cell limits: only the memory limit ends it
    try:
        fill()
        break
    except BaseException:
        pass
"""

FORK_BOMB = """\
import os, time
kids = 0
for _ in range(500):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    kids += 1
"""

CPU_HOG = """\
import os
for _ in range(30):
    if os.fork() == 0:
        os.setsid()  # a session each: the kernel's per-session fairness (autogroup) is no help
        while True:
            pass
"""

# An honest cell that computes for 1.5 s of CPU (under any per-cell CPU limit): beside 30 busy processes
# with no CPU limit per submission it would take more than the 20 s wall-clock limit of this
# test; held to one worker's share, the hog leaves it the other core.
HONEST_WORK = """\
import time
start = time.process_time()
while time.process_time() - start < 1.5:
    pass
"""

SLEEP_TO_THE_DEADLINE = """\
import time
while True:  # swallows the per-cell limits: only the notebook deadline ends it
    try:
        time.sleep(100)
    except BaseException:
        pass
"""


def _if_forked_32(ex: object) -> str:
    """The answer only where the fork bomb got 32 children (it never may: pids.max is 32 tasks)."""
    return "if kids >= 32:\n" + textwrap.indent(kit.solution(ex), "    ")


def hostile(ctx: Context) -> dict[str, object]:
    solved = kit.answered(ctx.released, kit.solution)
    bomb = kit.answered(ctx.released, lambda ex: kit.solution(ex) if ex.id == ctx.exercises[0].id
                        else _if_forked_32(ex))
    hog = after_first_exercise(ctx, kit.answered(ctx.released, kit.solution), SLEEP_TO_THE_DEADLINE)
    hog = after_first_exercise(ctx, hog, CPU_HOG)  # inserted above the sleeper
    return {
        "a_cpu_hog": hog,
        "a_fork_bomb": after_first_exercise(ctx, bomb, FORK_BOMB),
        "c_memory_across_processes": after_first_exercise(ctx, solved, MEMORY_ACROSS_PROCESSES),
        "c_memfd_and_shared": after_first_exercise(ctx, kit.answered(ctx.released, kit.solution),
                                                   MEMFD_AND_SHARED),
    }


@pytest.fixture(scope="module")
def batch() -> dict:
    if isinstance(cgroups.find(), str) or os.geteuid() != 0:
        pytest.skip("needs root and the memory and pids cgroup controllers")
    chapter = kit.first_chapter()
    course = public_course("cgroups")
    released = kit.make_course(course, chapter)
    ctx = Context(released, kit.exercises_of(released), course.resolve(), HONEST[0])
    for student in HONEST:
        kit.submit(course, student, chapter, early(kit.answered(released, kit.solution), HONEST_WORK))
    run(course, limits=LIMITS)  # the honest class alone, on a quiet grader
    quiet = {s: result_of({"course": course, "chapter": chapter}, s).to_json() for s in HONEST}
    for student, nb in hostile(ctx).items():
        kit.submit(course, student, chapter, nb)
    log, pid = run(course, "--force", limits=LIMITS)
    yield {"course": course, "chapter": chapter, "exercises": ctx.exercises, "quiet": quiet, "log": log,
           "pid": pid}
    shutil.rmtree(course.parent, ignore_errors=True)


def _explain(result: dict) -> str:
    lines = [f"status={result['status']} reason={result['reason']!r}"]
    return "\n".join(lines + [f"  {e['id']}: {e['points']}/{e['max_points']} {e['message']}"
                              for e in result["exercises"]])


def _result(batch: dict, student: str) -> dict:
    return result_of(batch, student).to_json()  # the results file as written


def _verdicts(result: dict) -> list[tuple]:
    return [(e["id"], e["points"], e["verdict"], e["message"]) for e in result["exercises"]]


def test_the_grader_used_cgroups(batch: dict) -> None:
    assert "WARNING" not in batch["log"], batch["log"]


@pytest.mark.parametrize("student", ["c_memory_across_processes", "c_memfd_and_shared"])
def test_memory_of_all_processes_stops_at_the_submission_limit(batch: dict, student: str) -> None:
    """Each process (and the memfd, which has no address space) is under every per-process
    limit; together they are over the submission's 1024 MiB: the submission stops there, with
    the memory reason, and loses what came after."""
    result = _result(batch, student)
    assert [e["points"] for e in result["exercises"]] == FIRST_ONLY(batch["exercises"]), _explain(result)
    assert "ran out of memory (limit 1024 MiB)" in result["reason"], _explain(result)


def test_a_fork_bomb_stops_at_the_process_count(batch: dict) -> None:
    result = _result(batch, "a_fork_bomb")
    assert [e["points"] for e in result["exercises"]] == FIRST_ONLY(batch["exercises"]), _explain(result)


def test_the_cpu_hog_ends_at_its_own_deadline(batch: dict) -> None:
    result = _result(batch, "a_cpu_hog")
    assert [e["points"] for e in result["exercises"]] == FIRST_ONLY(batch["exercises"]), _explain(result)
    assert "took longer than the limit" in result["reason"], _explain(result)


@pytest.mark.parametrize("student", HONEST)
def test_honest_classmates_are_graded_as_in_a_quiet_batch(batch: dict, student: str) -> None:
    """Graded while the hogs ran: the same points, verdicts, messages and reason as alone."""
    result, quiet = _result(batch, student), batch["quiet"][student]
    assert result["score"] == result["max_score"] > 0, _explain(result)
    assert result["reason"] == quiet["reason"] == ""
    assert _verdicts(result) == _verdicts(quiet)


def test_no_group_outlives_the_batch(batch: dict) -> None:
    where = cgroups.find()
    assert not isinstance(where, str)
    _, own = where
    left = [p for folder in own.values() for p in folder.glob(f"gradtutor-*{batch['pid']}")]
    assert left == [], json.dumps([str(p) for p in left])
