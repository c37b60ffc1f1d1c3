"""Trusted side: a child's typed messages in, a scored result out.

Nothing here runs student code or unpickles anything. The messages were checked by
``autograder.contract`` as they arrived; the answers are judged by ``autograder.judge`` against
references the parent computes itself; every exercise without usable answers still gets a line
with a reason, in the grader's own words. A failure here is the grader's, never the student's:
it propagates, and the submission is recorded as not graded.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from autograder.contract import CellStopped, Done
from autograder.judge import judge
from autograder.sandbox.limits import Limits, describe
from gradtutor.course import grade_cells
from gradtutor.grading.outcome import Outcome, answers_of
from gradtutor.key import registry
from gradtutor.key.answer_key import fingerprint
from gradtutor.records.results import ExerciseResult, SubmissionResult


def result(outcome: Outcome | None, source: Any, limits: Limits, *, unreadable: str = ""
           ) -> SubmissionResult:
    """One notebook's result: status, reason, score and one entry per grade cell."""
    notes = [] if outcome is None else _notes(outcome, limits)
    answers = {} if outcome is None else answers_of(outcome)
    exercises = []
    for grade_id, max_points in grade_cells(source):
        if unreadable:
            entry = _missing(grade_id, max_points, "The notebook could not be read, so this "
                                                   "exercise was not graded.")
        else:
            entry = _exercise(grade_id, max_points, answers.get(grade_id), notes)
        exercises.append(entry)
    return SubmissionResult(  # one notebook's part: the caller names the student and assignment
        status="failed" if unreadable else "graded",
        reason=unreadable[:500] if unreadable else "; ".join(notes),
        score=round(sum(e.points for e in exercises), 6),
        max_score=round(sum(e.max_points for e in exercises), 6),
        duration_s=round(outcome.duration_s, 3) if outcome is not None else 0.0,
        exercises=exercises,
    )


def _notes(outcome: Outcome, limits: Limits) -> list[str]:
    notes = [f"cell {m.cell + 1} {describe(m.why, limits)}" for m in outcome.messages
             if isinstance(m, CellStopped)][:5]
    if outcome.ended:
        notes.append(outcome.ended)
    elif not any(isinstance(m, Done) for m in outcome.messages):
        notes.append("the notebook's process stopped before the end")
    return notes


def _missing(grade_id: str, max_points: float, message: str) -> ExerciseResult:
    return ExerciseResult(grade_id, 0.0, max_points, verdict="error", score=0.0, message=message)


def _exercise(grade_id: str, max_points: float, answers: tuple[dict, ...] | None,
              notes: list[str]) -> ExerciseResult:
    if grade_id not in registry.ids():
        return _missing(grade_id, max_points, "Not an autograded exercise: grade it by hand.")
    if answers is None:
        why = "; ".join(notes) or "its grade cell was never reached"
        return replace(_missing(grade_id, max_points, f"No answer reached the grader ({why})."),
                       **_fingerprints(grade_id))
    return judged(grade_id, max_points, list(answers))


MAX_STORED_BYTES = 2**20


def judged(grade_id: str, max_points: float, answers: list[dict]) -> ExerciseResult:
    """The result entry of these plain answers (one per variant, shown values first), judged
    against the unit as it is now; the answers are kept in it (what ``gradtutor regrade``
    judges again), unless they are larger than ``MAX_STORED_BYTES``."""
    fb = judge(grade_id, answers)
    kept = answers if len(json.dumps(answers)) <= MAX_STORED_BYTES else None
    return ExerciseResult(grade_id, float(round(max_points * fb.score, 6)), max_points,
                          verdict=fb.verdict, score=fb.score, misconception=fb.misconception,
                          message=fb.message, answers=kept, **_fingerprints(grade_id))


def _fingerprints(grade_id: str) -> dict[str, str]:
    unit, inputs = fingerprint(grade_id)
    return {"unit": unit, "inputs": inputs}
