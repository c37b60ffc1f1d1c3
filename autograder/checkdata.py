"""Check data: what judging one exercise needs, as data rather than exercise code.

Student side. A ``Check`` holds the answer kind, the reference answer and the known wrong
answers (as canonical values) for some of the exercise's variants, and each wrong answer's
misconception, explanation and hint. The student runtime ships the checks at the shown values
only, as JSON (``_data/checks.json``); the full package computes them from the exercise units
(``autograder.answer_key``, trusted side), at the hidden variants too. ``get`` (grading) and ``practice`` (the
self-check) are the accessors both use, so the judge never needs to know which it runs in.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from .contract import AnswerSpec, spec_from_json, spec_to_json
from .kinds import Canonical, Kind, canonical_from_json, canonical_to_json, kind_from_json, kind_to_json

DATA_FILE = Path(__file__).with_name("_data") / "checks.json"
FORMAT = 2


@dataclass(frozen=True)
class WrongInfo:
    """What a known wrong answer reveals (its value lives in each ``Variant``)."""

    misconception: str
    name: str  # the misconception's short name, from the catalogue
    explanation: str
    hint: str


@dataclass(frozen=True)
class RequireInfo:
    """What the prompt asks of the answer beyond its value, by its code in ``AnswerSpec.requires``."""

    code: str
    name: str
    explanation: str
    hint: str


@dataclass(frozen=True)
class Variant:
    reference: Canonical
    wrong: tuple[tuple[int, Canonical], ...]  # (index into Check.wrong, canonical value)


@dataclass(frozen=True)
class Check:
    id: str
    title: str
    chapter: int
    points: float
    kind: Kind
    spec: AnswerSpec
    variants: tuple[Variant, ...]  # the shown values first
    wrong: tuple[WrongInfo, ...]
    requires: tuple[RequireInfo, ...] = ()


def to_json(check: Check) -> dict[str, Any]:
    return {
        "id": check.id, "title": check.title, "chapter": check.chapter, "points": check.points,
        "kind": kind_to_json(check.kind),
        "spec": spec_to_json(check.spec),
        "variants": [{"reference": canonical_to_json(v.reference),
                      "wrong": [[i, canonical_to_json(c)] for i, c in v.wrong]} for v in check.variants],
        "wrong": [[w.misconception, w.name, w.explanation, w.hint] for w in check.wrong],
        "requires": [[r.code, r.name, r.explanation, r.hint] for r in check.requires],
    }


def from_json(data: dict[str, Any]) -> Check:
    kind = kind_from_json(data["kind"])
    return Check(
        id=str(data["id"]), title=str(data["title"]), chapter=int(data["chapter"]),
        points=float(data["points"]), kind=kind,
        spec=spec_from_json(data["spec"]),
        variants=tuple(Variant(canonical_from_json(kind, v["reference"]),
                               tuple((int(i), canonical_from_json(kind, c)) for i, c in v["wrong"]))
                       for v in data["variants"]),
        wrong=tuple(WrongInfo(*map(str, w)) for w in data["wrong"]),
        requires=tuple(RequireInfo(*map(str, r)) for r in data.get("requires", ())),
    )


@cache
def _bundled() -> dict[str, dict[str, Any]] | None:
    """The runtime's data file, if this is the student runtime."""
    if not DATA_FILE.exists():
        return None
    data = json.loads(DATA_FILE.read_text())
    if data.get("format") != FORMAT:
        raise RuntimeError(f"{DATA_FILE} has format {data.get('format')!r}; this runtime reads {FORMAT}")
    return data["exercises"]


def _answer_key() -> Any:
    """The trusted computation from exercise units (absent from the runtime and the sandbox)."""
    try:
        return importlib.import_module("autograder.answer_key")
    except ImportError:
        return None


def ids() -> list[str]:
    """The exercises this installation can check."""
    bundled = _bundled()
    if bundled is not None:
        return list(bundled)
    key = _answer_key()
    return key.ids() if key is not None else []


@cache
def is_by_hand(exercise_id: str) -> bool:
    """Is this exercise done by hand (autograd off in its answer cell)? Loads that one unit only."""
    bundled = _bundled()
    if bundled is not None:
        return exercise_id in bundled and bundled[exercise_id]["spec"].get("by_hand") is True
    key = _answer_key()
    return key.is_by_hand(exercise_id) if key is not None else False


def _lookup(exercise_id: str, computed: str) -> Check:
    """The runtime's bundled check, or the one the answer key computes (``computed`` names the
    answer key's function); ``KeyError`` where neither exists (the grading sandbox)."""
    bundled = _bundled()
    if bundled is not None:
        return from_json(bundled[exercise_id])
    key = _answer_key()
    if key is None:
        raise KeyError(exercise_id)
    return getattr(key, computed)(exercise_id)


@cache
def get(exercise_id: str) -> Check:
    """The check grading uses: every variant this installation has: the hidden ones in the
    instructor's package, the shown and practice values in the runtime."""
    return _lookup(exercise_id, "check_for")


@cache
def practice(exercise_id: str) -> Check:
    """The check the self-check uses: the shown values, then the practice values (the same in
    the runtime and the full package; never a grading variant)."""
    return _lookup(exercise_id, "practice_check")
