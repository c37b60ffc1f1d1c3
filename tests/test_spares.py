"""The children forked ahead (``gradtutor.grading.forkserver``, spares): each still serves one
submission only, gets its job only once it is placed, and none outlives the batch.

The batch runs the sandbox itself (the zygote and its children, as root) on jobs whose cells
leave marks where a reused process would find them: a file in its /tmp, an attribute on torch,
a global of the shell. No timing is asserted.
"""

from __future__ import annotations

import os
import select

import pytest

from autograder.contract import CellFailed, Job, JobCell
from autograder.sandbox.limits import Limits
from gradtutor.grading.forkserver import Sandbox

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox's children need root")]

# raises (AssertionError) where a process that ran an earlier job runs this one
MARKS = """
import os, torch
assert not os.path.exists("/tmp/mark") and not hasattr(torch, "_mark") and "mark" not in globals()
open("/tmp/mark", "w").close()
torch._mark = mark = 1
"""
JOBS = 7


def _job(i: int) -> Job:
    return Job(cells=(JobCell("code", MARKS, None), JobCell("code", f"n = {i}", None)), specs={})


class Stop(Exception):
    pass


@pytest.fixture(scope="module")
def batch() -> dict:
    """One batch graded in full, then one stopped by its caller after the first outcome (the
    spares forked by then are dropped)."""
    out: dict = {"outcomes": [], "pids": [], "groups": [], "forks_at_start": [], "stopped_pids": []}
    with Sandbox(limits=Limits(), course_dir=None) as sandbox:
        place, fork, start = sandbox._place, sandbox._fork, sandbox._start
        forks = []

        def placed(run):  # every child the batch forks, spares included, with its group
            ok = place(run)
            out["pids"].append(os.pidfd_open(run.pid))  # this process, whatever reuses its pid
            out["groups"].append(run.group)
            return ok

        def forked():
            forks.append(1)
            return fork()

        def started(key, job):
            out["forks_at_start"].append(len(forks))
            return start(key, job)

        sandbox._place, sandbox._fork, sandbox._start = placed, forked, started
        sandbox.grade_all([(i, _job(i)) for i in range(JOBS)], workers=2, on_done=out["outcomes"].append)
        out["spares_left"] = list(sandbox.spares)
        graded = len(out["pids"])

        def stop(outcome):
            raise Stop

        with pytest.raises(Stop):
            sandbox.grade_all([(i, _job(i)) for i in range(JOBS)], workers=2, on_done=stop)
        out["spares_after_stop"] = list(sandbox.spares)
        out["stopped_pids"] = out["pids"][graded:]
    return out


def test_every_job_ran_in_a_fresh_child(batch: dict) -> None:
    assert sorted(o.key for o in batch["outcomes"]) == list(range(JOBS))
    for outcome in batch["outcomes"]:
        assert outcome.started and not outcome.ended and not outcome.not_graded
        assert not [m for m in outcome.messages if isinstance(m, CellFailed)], outcome.key


def test_children_were_forked_ahead(batch: dict) -> None:
    # the first two jobs find none; each later one a child asked for before it was started
    starts = batch["forks_at_start"][:JOBS]
    assert starts[:2] == [0, 1] and all(forks > k for k, forks in enumerate(starts) if k >= 2)
    assert len(batch["pids"]) - len(batch["stopped_pids"]) == JOBS  # none forked in vain


def test_no_child_outlives_its_batch(batch: dict) -> None:
    assert not batch["spares_left"] and not batch["spares_after_stop"]
    assert batch["stopped_pids"]  # the stopped batch had forked children, spares among them
    for pidfd in batch["pids"]:  # readable once the process has ended
        assert select.select([pidfd], [], [], 30)[0], "a child of the batch is still running"


def test_each_child_had_a_group_of_its_own_and_none_is_left(batch: dict) -> None:
    groups = batch["groups"]
    if all(g is None for g in groups):
        pytest.skip("this host gives the grader no cgroups")
    assert all(g is not None for g in groups) and len({id(g) for g in groups}) == len(groups)
    assert all(g.removed for g in groups)
