"""Trusted side: a submission's results as records, and the validated loader of results files.

``SubmissionResult`` is what ``gradtutor grade`` writes to results/<assignment>/<student>.json
(``to_json``; keys and order as they have always been, optional keys left out when absent) and
what every reader gets back (``read_result``). A results folder anyone can copy into is read
warily: each file is checked field by field, and the stored answers (they came from the student
side) are rebuilt like a child's message (``autograder.contract.clean_plain``).

The gradebook's view (``store.reconcile``: manual grades, extra credit, comments, the penalty
stored now, the total) is declared here too, as fields that are never written to disk.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from autograder.contract import clean_plain

MAX_VARIANTS = 64
_FINGERPRINT = re.compile(r"[0-9a-f]{16}")


@dataclass
class ExerciseResult:
    """One grade cell's result."""

    id: str
    points: float
    max_points: float
    verdict: str = "error"  # a key of autograder.feedback.VERDICTS, or "manual"
    score: float | None = None  # the judge's score in [0, 1]; None in files written before it
    misconception: str | None = None
    message: str = ""
    # what the judge saw, one plain answer per variant (shown values first), or None when no
    # answer reached the grader; read back through ``clean_plain`` like a child's message
    answers: list[dict] | None = None
    unit: str | None = None  # fingerprint of the exercise unit's grading content (answer_key.fingerprint)
    inputs: str | None = None  # fingerprint of what the child ran: answer name, call, variants' setups
    # the gradebook's view (``store.reconcile``), never written to disk:
    manual: bool = False  # a manual grade from the formgrader replaced the auto score
    auto_points: float | None = None  # the auto score it replaced
    extra_credit: float | None = None
    comment: str | None = None  # the grader's comment in the formgrader

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "points": self.points, "max_points": self.max_points,
                               "verdict": self.verdict}
        if self.score is not None:
            out["score"] = self.score
        out.update(misconception=self.misconception, message=self.message, answers=self.answers,
                   unit=self.unit, inputs=self.inputs)
        return out


_OPTIONAL = ("graded_at", "duration_s", "seconds_late", "penalty", "manual_grades", "regraded_at")


@dataclass
class SubmissionResult:
    """One student's assignment, graded (or not readable: ``status`` "failed")."""

    student: str = ""
    assignment: str = ""
    status: str = "graded"  # "graded", or "failed" when the notebook could not be read (the student's)
    reason: str = ""  # the grader's own words, built from codes
    score: float = 0.0
    max_score: float = 0.0
    graded_at: str | None = None
    duration_s: float | None = None
    exercises: list[ExerciseResult] = field(default_factory=list)
    grader: str | None = None  # digest of the judging code that judged it (answer_key.grader_fingerprint)
    # the lateness and the kept manual grades, as the gradebook gave them when it was stored
    seconds_late: float | None = None
    penalty: float | None = None  # also the gradebook's view: the penalty stored now
    manual_grades: int | None = None
    regraded_at: str | None = None
    # the gradebook's view (``store.reconcile``), never written to disk:
    total: float | None = None  # score (with extra credit) minus the penalty

    @property
    def key(self) -> tuple[str, str]:
        return (self.student, self.assignment)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"student": self.student, "assignment": self.assignment,
                               "status": self.status, "reason": self.reason, "score": self.score,
                               "max_score": self.max_score}
        for name in ("graded_at", "duration_s"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        out["exercises"] = [e.to_json() for e in self.exercises]
        out["grader"] = self.grader
        for name in ("seconds_late", "penalty", "manual_grades", "regraded_at"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        return out

    @classmethod
    def from_json(cls, data: Any, *, student: str = "", assignment: str = "") -> SubmissionResult | None:
        return read_result(data, student=student, assignment=assignment)


def read_result(data: Any, *, student: str = "", assignment: str = "") -> SubmissionResult | None:
    """A results file's content, checked field by field (None when it is not one); missing
    fields get their defaults, the names default to the file's place. Results are written by
    the trusted side, but a folder anyone can copy into is read warily."""
    if type(data) is not dict:
        return None
    data = dict(data)
    data.setdefault("student", student)
    data.setdefault("assignment", assignment)
    data.setdefault("status", "graded")
    data.setdefault("exercises", [])
    if data.get("reason") is None:
        data["reason"] = ""
    fields = {"student": str, "assignment": str, "status": str, "reason": str, "exercises": list}
    if any(type(data[k]) is not t for k, t in fields.items()):
        return None
    exercises = []
    for e in data["exercises"]:
        if type(e) is not dict or type(e.get("id")) is not str or \
                any(type(e.get(k)) not in (int, float) for k in ("points", "max_points")):
            return None
        entry = _entry(e)
        if entry is None:
            return None
        exercises.append(entry)
    grader = data.get("grader")
    return SubmissionResult(
        student=data["student"], assignment=data["assignment"], status=data["status"],
        reason=data["reason"],
        score=data.get("score", sum(e.points for e in exercises)),
        max_score=data.get("max_score", sum(e.max_points for e in exercises)),
        exercises=exercises,
        grader=grader if type(grader) is str and _FINGERPRINT.fullmatch(grader) else None,
        **{k: data[k] for k in _OPTIONAL if data.get(k) is not None})


def _entry(e: dict) -> ExerciseResult | None:
    """An entry with its stored answers rebuilt as a child's message is (they came from the
    student side), its fingerprints checked; None when the answers are not a list of plain values."""
    answers = e.get("answers")
    if answers is not None:
        if type(answers) is not list or not 0 < len(answers) <= MAX_VARIANTS:
            return None
        answers = [clean_plain(a) for a in answers]
    unit, inputs = (v if type(v) is str and _FINGERPRINT.fullmatch(v) else None
                    for v in (e.get("unit"), e.get("inputs")))
    return ExerciseResult(id=e["id"], points=e["points"], max_points=e["max_points"],
                          verdict=e.get("verdict", "error"), score=e.get("score"),
                          misconception=e.get("misconception"), message=e.get("message", ""),
                          answers=answers, unit=unit, inputs=inputs)
