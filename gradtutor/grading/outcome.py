"""Trusted side: what came back from one sandbox child, as the scorer reads it.

Its own module so that scoring reads a child's outcome without importing the fork server that
produced it (the scorer judges data; it never starts or talks to a process).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from autograder.contract import Answers, Message, Ready


@dataclass
class Outcome:
    """What came back from one child: its typed messages and how it ended."""

    key: Any  # the caller's handle for the submission
    messages: list[Message] = field(default_factory=list)
    ended: str = ""  # "" when the child finished normally, else the grader's words for the student
    not_graded: str = ""  # set when the grader, not the student, failed: retry on the next run
    duration_s: float = 0.0

    @property
    def started(self) -> bool:
        return any(isinstance(m, Ready) for m in self.messages)


def answers_of(outcome: Outcome) -> dict[str, tuple[dict, ...]]:
    """The first answers message for each exercise."""
    out: dict[str, tuple[dict, ...]] = {}
    for m in outcome.messages:
        if isinstance(m, Answers) and m.exercise not in out:
            out[m.exercise] = m.answers
    return out
