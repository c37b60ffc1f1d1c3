"""A child's last words and its exit, seen in either order (``gradtutor.grading.forkserver``).

The grading loop reads the children's pipes, then the zygote's word that a child exited, then
judges each child. A child that writes "done" and exits between the first and the second is
seen as exited with its "done" still unread in the pipe. Seen once under load (a whole-course
run beside another: "the notebook's process stopped before the end" on a submission whose every
answer had arrived). The loop's judgement is run here on a real pipe in that state, no process
and no timing involved.
"""

from __future__ import annotations

import os
import selectors

from autograder.contract import encode_message
from autograder.sandbox.limits import Limits
from gradtutor.grading.forkserver import Sandbox, _Running
from gradtutor.grading.outcome import Outcome
from gradtutor.grading.profile import OFF

GONE_PID = 2**22 + 12345  # above the most pids a 64-bit Linux allows: no process is ever hit


def _loop_state() -> Sandbox:
    """The grading loop's state without a zygote: what ``_poll`` reads."""
    sandbox = object.__new__(Sandbox)
    sandbox.limits, sandbox.profile, sandbox.groups, sandbox.root = Limits(), OFF, None, True
    sandbox.exited = {}
    return sandbox


def _child_that_said(*messages: dict) -> tuple[_Running, selectors.BaseSelector]:
    r, w = os.pipe()
    os.write(w, b"".join(encode_message(m) for m in messages))
    os.close(w)
    os.set_blocking(r, False)
    sel = selectors.DefaultSelector()
    sel.register(r, selectors.EVENT_READ)
    run = _Running(7, 0, r, Outcome(None), {}, deadline=float("inf"), started=0.0, pid=GONE_PID)
    return run, sel


def test_a_child_whose_done_is_still_in_the_pipe_when_its_exit_is_seen_ended_well() -> None:
    sandbox = _loop_state()
    run, sel = _child_that_said({"type": "ready"}, {"type": "done"})
    sandbox.exited[GONE_PID] = 0  # the zygote's word came first
    sandbox._poll(run, sel)
    os.close(run.rfd)
    assert run.status == 0
    assert run.done
    assert not run.outcome.ended, run.outcome.ended


def test_a_child_that_exited_without_done_still_gets_the_reason() -> None:
    sandbox = _loop_state()
    run, sel = _child_that_said({"type": "ready"})
    sandbox.exited[GONE_PID] = 0
    sandbox._poll(run, sel)
    os.close(run.rfd)
    assert run.status == 0
    assert not run.done
    assert run.outcome.ended == "the notebook's process stopped before the end"
