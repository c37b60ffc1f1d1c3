"""Judge plain answers against references: validity, then correctness, then diagnosis.

This is the trusted side. It sees only plain data (``plain.py``), computes every reference
itself from the exercise unit, and never calls anything on a student object.
"""

from __future__ import annotations

import contextlib
import io
import warnings
from functools import cache
from typing import Any

import torch

from . import misconceptions, registry
from .exercise import Exercise
from .feedback import Feedback
from .kinds import Canonical, Invalid, Kind, Table
from .plain import Plain

NOT_ANSWERED = ("Not answered yet: replace the ... in the answer cell above with your answer, "
                "run that cell, then run this one.")


def quietly(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Run trusted torch code without letting its warnings reach stderr (nbgrader scores
    any stderr output as a failed test)."""
    with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _canonical_of(kind: Kind, value: Any) -> Canonical:
    return quietly(kind.of, value)


@cache
def reference(exercise_id: str, variant: int) -> Canonical:
    ex = registry.get(exercise_id)
    params = ex.variants()[variant]
    return _canonical_of(ex.kind, quietly(ex.reference, **params))


@cache
def wrong_values(exercise_id: str, variant: int) -> tuple[tuple[int, Canonical], ...]:
    ex = registry.get(exercise_id)
    params = ex.variants()[variant]
    return tuple((i, _canonical_of(ex.kind, quietly(w.value, **params))) for i, w in enumerate(ex.wrong))


def diagnose(ex: Exercise, answer: Canonical, variant: int = 0) -> int | None:
    """Index of the known wrong answer this answer matches, if any."""
    for i, value in wrong_values(ex.id, variant):
        if _same(ex.kind, answer, value):
            return i
    return None


def _same(kind: Kind, a: Canonical, b: Canonical) -> bool:
    if a is None or b is None:
        return a is b
    if isinstance(a, dict) != isinstance(b, dict):
        return False
    try:
        return kind.same(a, b)
    except (TypeError, KeyError, RuntimeError):
        return False


def judge_variant(ex: Exercise, variant: int, answer: Plain) -> dict:
    """One variant: {"status", "score", "wrong" (index or None), "message", "canonical"}."""
    if answer.get("t") == "ellipsis":
        return {"status": "not_answered", "score": 0.0, "message": NOT_ANSWERED}
    if answer.get("t") == "missing":
        return {"status": "invalid", "score": 0.0, "message": answer.get("reason", "No answer.")}
    if answer.get("t") == "error":
        return {"status": "invalid", "score": 0.0,
                "message": f"Your code raised {answer.get('v', 'an error')}: {answer.get('text', '')}".strip()}
    try:
        canon = ex.kind.canonical(answer)
    except Invalid as e:
        return {"status": "invalid", "score": 0.0, "message": str(e)}
    ref = reference(ex.id, variant)
    if _same(ex.kind, canon, ref):
        return {"status": "correct", "score": 1.0, "canonical": canon}
    # a table is right only when every entry is; the message names the wrong entries
    result = {"status": "wrong", "score": 0.0, "canonical": canon, "wrong": diagnose(ex, canon, variant)}
    if isinstance(ex.kind, Table) and ref is not None:
        result["cells"] = ex.kind.wrong_cells(canon, ref)
    return result


def judge(exercise_id: str, answers: list[Plain], *, title_note: str = "") -> Feedback:
    """Judge the answers for the first ``len(answers)`` variants (shown values first)."""
    ex = registry.get(exercise_id)
    results = [judge_variant(ex, i, a) for i, a in enumerate(answers)]
    public = results[0]
    fb = Feedback(exercise=ex.id, title=ex.title + title_note, verdict="wrong", score=0.0, message="",
                  variants=[{"status": r["status"], "score": r["score"]} for r in results])
    if public["status"] in ("not_answered", "invalid"):
        fb.verdict, fb.message = public["status"], public["message"]
        return fb
    fb.score = sum(r["score"] for r in results) / len(results)
    fb.verdict = "correct" if fb.score == 1.0 else "partial" if fb.score > 0 else "wrong"
    fb.message = _summary(ex, results)
    hit = next((r["wrong"] for r in results if r.get("wrong") is not None), None)
    if hit is not None:
        w = ex.wrong[hit]
        fb.misconception, fb.explanation, fb.hint = w.misconception, w.explanation, w.hint
        fb.misconception_name = misconceptions.name(w.misconception)
    return fb


def _summary(ex: Exercise, results: list[dict]) -> str:
    public, hidden = results[0], results[1:]
    if public["status"] == "correct" and all(r["status"] == "correct" for r in hidden):
        extra = f" It also holds at {len(hidden)} other set(s) of values." if hidden else ""
        return "Right." + extra
    if public["status"] == "correct":
        bad = sum(r["status"] != "correct" for r in hidden)
        msg = f"Right at the shown values, but not at {bad} of {len(hidden)} other set(s) of values."
        if _constant(ex, results):
            msg += (" Your answer does not change when the parameters change: it looks typed in. "
                    "Compute it from the parameters in the setup cell instead.")
        return msg
    if public.get("cells"):
        shown = ", ".join(public["cells"][:6])
        return f"Some entries are not right yet: {shown}."
    if public["status"] == "wrong" and public.get("wrong") is None:
        return _shape_note(ex, public) or (
            "This is not the value PyTorch gives, and it matches none of the usual mistakes.")
    if public["status"] == "wrong":
        return "This is a known mistake."
    return public.get("message", "")


def _shape_note(ex: Exercise, public: dict) -> str | None:
    """Kinds may read answers of a slip's shape so they can be diagnosed; say so if undiagnosed."""
    got, ref = public.get("canonical"), reference(ex.id, 0)
    if isinstance(got, torch.Tensor) and isinstance(ref, torch.Tensor) and got.shape != ref.shape:
        return (f"Your answer has shape {tuple(got.shape)}, but the expected answer has shape "
                f"{tuple(ref.shape)}: count how many numbers it should hold, and why.")
    return None


def _constant(ex: Exercise, results: list[dict]) -> bool:
    canon = [r.get("canonical") for r in results]
    if any(c is None for c in canon):
        return False
    return all(_same(ex.kind, canon[0], c) for c in canon[1:])
