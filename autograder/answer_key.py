"""The answer key as data: each exercise's reference and known wrong answers, per variant.

Trusted side. Computed here from the exercise units (torch references in float64, the wrong
answers' formulas), never typed. The judge reads them through ``autograder.checkdata.get``;
the student runtime ships only the shown variant (``autograder.runtime``), and the grading
sandbox ships none.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from . import misconceptions, registry
from .answers import at_params
from .checkdata import Check, Variant, WrongInfo
from .contract import AnswerSpec
from .exercise import Exercise, Params
from .judge import quietly
from .kinds import Canonical
from .plain import Plain


@cache
def reference(exercise_id: str, variant: int) -> Canonical:
    ex = registry.get(exercise_id)
    params = ex.variants()[variant]
    return quietly(ex.kind.of, quietly(ex.reference, **params))


@cache
def wrong_values(exercise_id: str, variant: int) -> tuple[tuple[int, Canonical], ...]:
    ex = registry.get(exercise_id)
    params = ex.variants()[variant]
    return tuple((i, quietly(ex.kind.of, quietly(w.value, **params))) for i, w in enumerate(ex.wrong))


def spec(ex: Exercise, variants: int | None = None) -> AnswerSpec:
    """How to read the answer, with the setup code of the first ``variants`` variants."""
    chosen = ex.variants()[:variants]
    return AnswerSpec(ex.answer, ex.call, tuple(ex.setup_code(p) for p in chosen))


def ids() -> list[str]:
    return registry.ids()


@cache
def check_for(exercise_id: str, variants: int | None = None) -> Check:
    """The check of an exercise at its first ``variants`` variants (default: all of them)."""
    ex = registry.get(exercise_id)
    count = len(ex.variants()) if variants is None else variants
    return Check(
        id=ex.id, title=ex.title, chapter=ex.chapter, points=ex.points, kind=ex.kind,
        spec=spec(ex, count),
        variants=tuple(Variant(reference(ex.id, v), wrong_values(ex.id, v)) for v in range(count)),
        wrong=tuple(WrongInfo(w.misconception, misconceptions.name(w.misconception), w.explanation,
                              w.hint) for w in ex.wrong),
    )


def run_at(ex: Exercise, ns: dict[str, Any], source: str, params: Params) -> Plain:
    """The answer cell ``source`` re-run at ``params`` after the unit's setup, read as plain data
    (what the sandbox does at a hidden variant; the build, the demo class and tests use it)."""
    return at_params(spec(ex, 1), ns, source, ex.setup_code(params))
