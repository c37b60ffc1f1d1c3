"""The trusted side: plain JSON from a child in, a scored result out.

Nothing here runs student code or unpickles anything. Messages are checked for shape, the
answers are judged by ``autograder.judge`` against references it computes itself, and every
exercise without usable answers still gets a line with a reason.
"""

from __future__ import annotations

from typing import Any

from .. import registry
from ..judge import judge
from .forkserver import Outcome
from .submission import grade_cells


def result(outcome: Outcome, source: Any) -> dict:
    """One notebook's result: status, reason, score and one entry per grade cell."""
    rejected = next((m for m in outcome.messages if m.get("type") == "rejected"), None)
    notes = _notes(outcome)
    exercises = []
    for grade_id, max_points in grade_cells(source):
        if rejected is not None:
            entry = _missing(grade_id, max_points, "The notebook could not be read, so this "
                                                   "exercise was not graded.")
        else:
            entry = _exercise(grade_id, max_points, _answers_for(outcome, grade_id), notes)
        exercises.append(entry)
    score = sum(e["points"] for e in exercises)
    return {
        "status": "failed" if rejected is not None else "graded",
        "reason": str(rejected.get("reason", ""))[:500] if rejected is not None else "; ".join(notes),
        "score": round(score, 6),
        "max_score": round(sum(e["max_points"] for e in exercises), 6),
        "duration_s": round(outcome.duration_s, 3),
        "exercises": exercises,
    }


def _notes(outcome: Outcome) -> list[str]:
    notes = [f"cell {m['cell'] + 1} {m['error']}" for m in outcome.messages
             if m.get("type") == "cell" and isinstance(m.get("cell"), int)
             and isinstance(m.get("error"), str)]
    notes = [n[:200] for n in notes[:5]]
    notes += [f"the grader's worker failed ({m['error'][:200]})" for m in outcome.messages
              if m.get("type") == "crash" and isinstance(m.get("error"), str)][:1]
    finished = any(m.get("type") in ("done", "rejected") for m in outcome.messages)
    if outcome.ended:
        notes.append(outcome.ended)
    elif not finished:
        notes.append("the notebook's process stopped before the end")
    return notes


def _answers_for(outcome: Outcome, exercise_id: str) -> list[dict] | None:
    """The first well-formed answers message for this exercise, if any."""
    if exercise_id not in registry.ids():
        return None
    expected = 1 + len(registry.get(exercise_id).hidden)
    for m in outcome.messages:
        answers = m.get("answers")
        if m.get("type") == "answers" and m.get("exercise") == exercise_id \
                and isinstance(answers, list) and len(answers) == expected \
                and all(isinstance(a, dict) and isinstance(a.get("t"), str) for a in answers):
            return answers
    return None


def _missing(grade_id: str, max_points: float, message: str) -> dict:
    return {"id": grade_id, "points": 0.0, "max_points": max_points, "verdict": "error",
            "score": 0.0, "misconception": None, "message": message}


def _exercise(grade_id: str, max_points: float, answers: list[dict] | None,
              notes: list[str]) -> dict:
    if grade_id not in registry.ids():
        return _missing(grade_id, max_points, "Not an autograded exercise: grade it by hand.")
    if answers is None:
        why = "; ".join(notes) or "its grade cell was never reached"
        return _missing(grade_id, max_points, f"No answer reached the grader ({why}).")
    try:
        fb = judge(grade_id, answers)
    except Exception:  # malformed plain data: a reason, never a crash of the batch
        return _missing(grade_id, max_points, "The answer could not be read as plain data.")
    return {"id": grade_id, "points": float(round(max_points * fb.score, 6)),
            "max_points": max_points, "verdict": fb.verdict, "score": fb.score,
            "misconception": fb.misconception, "message": fb.message}
