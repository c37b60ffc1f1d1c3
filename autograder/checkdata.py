"""Student side: check data, what judging one exercise needs, as data rather than exercise code.

A ``Check`` holds the answer kind, the reference answer and the known wrong answers (as
canonical values) for some of the exercise's variants, and each wrong answer's misconception,
explanation and hint. The student runtime ships the checks at the shown and the practice values,
as JSON (``_data/checks.json``). Where no data file is bundled, a ``Provider`` computes them: the
trusted package registers its answer key under the entry point group ``autograder.check_data``,
with every grading variant too. ``get`` (grading) and ``practice`` (the self-check) are the
accessors both use, so the judge never needs to know which it runs in.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any, Protocol

from autograder.contract import AnswerSpec, spec_from_json, spec_to_json
from autograder.kinds import (
    Canonical,
    Kind,
    canonical_from_json,
    canonical_to_json,
    kind_from_json,
    kind_to_json,
)

DATA_FILE = Path(__file__).with_name("_data") / "checks.json"
PROVIDER_GROUP = "autograder.check_data"  # the trusted package registers its answer key here
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


class Provider(Protocol):
    """Where checks come from when no data file is bundled: the trusted side computes them from
    the exercise units. The runtime names no module of it; the provider registers itself."""

    def ids(self) -> list[str]: ...
    def chapter_ids(self, chapter: int) -> list[str]: ...
    def is_by_hand(self, exercise_id: str) -> bool: ...
    def check_for(self, exercise_id: str) -> Check: ...
    def practice_check(self, exercise_id: str) -> Check: ...
    def shown(self, exercise_id: str) -> tuple[str, str]: ...


_registered: list[Provider] = []


def register(provider: Provider) -> None:
    """Use ``provider`` for every check from now on (before any entry point)."""
    _registered.append(provider)
    _provider.cache_clear()


@cache
def _provider() -> Provider | None:
    """An explicitly registered provider, else the first entry point of ``PROVIDER_GROUP`` that
    loads. One that does not load (the grading sandbox hides the trusted package) counts as none."""
    if _registered:
        return _registered[-1]
    for point in provider_points():
        try:
            return point.load()
        except ImportError:
            continue
    return None


@cache
def provider_points() -> tuple[EntryPoint, ...]:
    """The entry points of ``PROVIDER_GROUP``, found without loading any: a scan of every
    installed package's metadata (10-20 ms), which the grading zygote does once before it
    forks, so that no child pays for it."""
    return tuple(entry_points(group=PROVIDER_GROUP))


# A provider, where one loads, comes before the bundled data: the instructor's environment holds
# the student wheel (with its shown and practice values) beside the trusted package, and grading
# there must judge every variant. A student's environment has the data and no provider.
def ids() -> list[str]:
    """The exercises this installation can check."""
    provider = _provider()
    if provider is not None:
        return provider.ids()
    bundled = _bundled()
    return list(bundled) if bundled is not None else []


def chapter_ids(chapter: int) -> list[str]:
    """The exercises of a chapter in the order its notebook poses them (exercise ``chapter.n`` is
    the n-th), found without computing any check."""
    provider = _provider()
    if provider is not None:
        return provider.chapter_ids(chapter)
    bundled = _bundled() or {}
    # the data file lists the exercises in lesson order, chapter by chapter
    return [i for i, data in bundled.items() if data.get("chapter") == chapter]


@cache
def is_by_hand(exercise_id: str) -> bool:
    """Is this exercise done by hand (autograd off in its answer cell)? Loads that one unit only."""
    provider = _provider()
    if provider is not None:
        return provider.is_by_hand(exercise_id)
    bundled = _bundled() or {}
    return exercise_id in bundled and bundled[exercise_id]["spec"].get("by_hand") is True


@cache
def shown(exercise_id: str) -> tuple[str, str]:
    """(answer name, setup code at the shown values) of an exercise, without computing its check
    (the kernel asks it each time an answer cell runs); ``KeyError`` where it is unknown."""
    provider = _provider()
    if provider is not None:
        found = getattr(provider, "shown", None)
        if found is None:  # a provider without it: its practice check holds both
            spec = provider.practice_check(exercise_id).spec
            return spec.answer, spec.setups[0]
        return found(exercise_id)
    bundled = _bundled() or {}
    spec = bundled[exercise_id]["spec"]
    return str(spec["answer"]), str(spec["setups"][0])


def _lookup(exercise_id: str, computed: str) -> Check:
    """The check the provider computes (``computed`` names its method), else the runtime's
    bundled one; ``KeyError`` where neither exists (the grading sandbox)."""
    provider = _provider()
    if provider is not None:
        return getattr(provider, computed)(exercise_id)
    bundled = _bundled()
    if bundled is None:
        raise KeyError(exercise_id)
    return from_json(bundled[exercise_id])


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
