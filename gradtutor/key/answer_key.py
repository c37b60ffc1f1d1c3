"""Trusted side: the answer key as data, each exercise's reference and wrong answers per variant.

Computed here from the exercise units (torch references in float64, the wrong
answers' formulas), never typed. The judge reads them through ``autograder.checkdata.get``;
the student runtime wheel (``gradtutor.authoring.runtime``) ships the checks at the shown and
the practice values (``practice_check``), and the grading sandbox ships none.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

from autograder.answers import at_params
from autograder.checkdata import Check, RequireInfo, Variant, WrongInfo, from_json, to_json
from autograder.contract import AnswerSpec
from autograder.judge import quietly, same
from autograder.kinds import Canonical
from autograder.plain import Plain
from gradtutor.key import misconceptions, registry
from gradtutor.key.exercise import Exercise, Params


def variant_at(ex: Exercise, params: Params) -> Variant:
    """The reference and every listed wrong answer at these values, as canonical values."""
    with single_threaded():
        return Variant(quietly(ex.kind.of, quietly(ex.reference, **params)),
                       tuple((i, quietly(ex.kind.of, quietly(w.value, **params)))
                             for i, w in enumerate(ex.wrong)))


@contextlib.contextmanager
def single_threaded() -> Iterator[None]:
    """torch on one thread meanwhile, as in the sandbox. References are the same bits wherever
    they are computed (grade, regrade, the build; any number of cores): a reduction split over
    threads adds in another order (batchnorm_backward's last bits differed with 2 threads), and
    its fingerprint would differ. One thread is also faster here: the tensors are tiny, and
    beside busy grading children a second thread only spins (138 exercises, a loaded machine:
    6 s of CPU with one thread, 40 s with two)."""
    import torch  # loaded already (autograder.judge); named here, where it is used

    before = torch.get_num_threads()
    if before == 1:
        yield
        return
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


# full checks read back from a trusted cache folder (``keep_checks``): every variant's values
_KEPT: dict[str, Check] = {}


@cache
def _grading_variant(exercise_id: str, variant: int) -> Variant:
    kept = _KEPT.get(exercise_id)
    if kept is not None:
        return kept.variants[variant]
    ex = registry.get(exercise_id)
    return variant_at(ex, ex.variants()[variant])


def reference(exercise_id: str, variant: int) -> Canonical:
    return _grading_variant(exercise_id, variant).reference


def wrong_values(exercise_id: str, variant: int) -> tuple[tuple[int, Canonical], ...]:
    return _grading_variant(exercise_id, variant).wrong


def spec(ex: Exercise, variants: int | None = None) -> AnswerSpec:
    """How to read the answer, with the setup code of the first ``variants`` variants."""
    return spec_with(ex, tuple(ex.setup_code(p) for p in ex.variants()[:variants]))


def spec_with(ex: Exercise, setups: tuple[str, ...]) -> AnswerSpec:
    return AnswerSpec(ex.answer, ex.call, setups, by_hand=ex.by_hand,
                      requires=tuple((r.code, r.expression) for r in ex.requires), refuse=ex.refuse)


def _requires(ex: Exercise) -> tuple[RequireInfo, ...]:
    return tuple(RequireInfo(r.code, r.name, r.explanation, r.hint) for r in ex.requires)


def ids() -> list[str]:
    return registry.ids()


def chapter_ids(chapter: int) -> list[str]:
    """The chapter's exercises in lesson order (the order and numbers of its notebook)."""
    return next((ch.exercise_ids() for ch in registry.chapters() if ch.number == chapter), [])


def is_by_hand(exercise_id: str) -> bool:
    return exercise_id in registry.ids() and registry.get(exercise_id).by_hand


def shown(exercise_id: str) -> tuple[str, str]:
    """(answer name, setup code at the shown values): what the kernel re-runs before an answer
    cell (``autograder.answer_cells``); loads that one unit only."""
    ex = registry.get(exercise_id)
    return ex.answer, ex.setup_code(ex.params)


PRACTICE_SETS = 2
PRACTICE_TRIES = 60


def practice_params(exercise_id: str) -> tuple[dict[str, Any], ...]:
    return tuple(params for params, _ in _practice(exercise_id))


@cache
def _practice(exercise_id: str) -> tuple[tuple[dict[str, Any], Variant], ...]:
    """Values the self-check re-runs the answer cell at, fixed at build time: drawn with the
    unit's own ``draw`` (seeded by the id), never a grading variant, and chosen so that the
    reference differs there from every listed wrong answer and (when the answer depends on
    the parameters at all) from the reference at the shown values, so that a typed-in number
    or a formula right only at the shown values shows. Where the unit declares regions (the
    branches of its reference), the draws reach them, one region per practice set while
    there are sets left; a wrong answer the region is declared blind to may agree there."""
    import random

    ex = registry.get(exercise_id)
    rng = random.Random(f"practice:{exercise_id}")
    grading = [dict(v) for v in ex.variants()]
    # what the student's code sees is the setup: a draw whose setup is a grading variant's
    # would give that variant's answer away (when the setup depends on the values at all)
    setups = {ex.setup_code(v) for v in grading}
    shown = reference(exercise_id, 0)
    # the grading variants' references only: their wrong answers are not needed here (a training
    # loop's eight wrong loops at every variant were most of a cold self-check's wait)
    varies = any(not _same(ex, quietly(ex.kind.of, quietly(ex.reference, **v)), shown) for v in grading[1:])
    coincide = coinciding(exercise_id)
    # the practice values reach every region they can, those the shown values miss first
    unreached = sorted((r.name for r in ex.regions), key=lambda name: name in ex.regions_at(ex.params))
    chosen: list[tuple[dict[str, Any], Variant]] = []
    for attempt in range(2 * PRACTICE_TRIES):
        if len(chosen) == PRACTICE_SETS:
            break
        params = ex.draw(rng)
        if params in grading or any(params == p for p, _ in chosen) or \
                (len(setups) > 1 and ex.setup_code(params) in setups):
            continue
        # as many slots as regions still unreached are kept for draws that reach one of them
        missing = [name for name in unreached if not any(name in ex.regions_at(p) for p, _ in chosen)]
        if missing and PRACTICE_SETS - len(chosen) <= len(missing) and \
                not set(missing) & set(ex.regions_at(params)):
            continue
        # first try draws where every parameter moves off its shown value, so that a parameter
        # typed in as a number (3 passes for n) shows too; then any draw
        if attempt < PRACTICE_TRIES and any(params.get(k) == v for k, v in ex.params.items()):
            continue
        try:
            at = variant_at(ex, params)
        except Exception:  # a draw the unit cannot compute at: not a practice value
            continue
        blind = ex.blind_at(params)  # wrong answers the unit declares equal to the reference here
        if any(_same(ex, at.reference, w) for i, w in at.wrong if i not in blind) or \
                (varies and _same(ex, at.reference, shown)):
            continue
        values = dict(at.wrong)
        if any(_same(ex, values[a], values[b]) for a, b in coincide):
            continue  # the self-check must tell apart the mistakes the shown values cannot
        chosen.append((params, at))
    return tuple(chosen)


def coinciding(exercise_id: str) -> list[tuple[int, int]]:
    """Pairs of listed wrong answers that give the same answer at the shown values (the
    practice values and a grading variant must tell them apart; ``judge.believed``)."""
    ex = registry.get(exercise_id)
    wrong = wrong_values(exercise_id, 0)
    return [(a, b) for a, va in wrong for b, vb in wrong if a < b and _same(ex, va, vb)]


def _same(ex: Exercise, a: Canonical, b: Canonical) -> bool:
    return same(ex.kind, a, b)


@cache
def practice_check(exercise_id: str) -> Check:
    """The self-check's data: the shown values, then the practice values (no grading variant).
    Kept on disk (``_stored``): drawing practice values runs the unit's references and wrong
    answers at many draws (half a minute for a training loop), and a notebook's self-check and
    ``review()`` must answer at once."""
    return _stored(exercise_id, _practice_check)


def _practice_check(exercise_id: str) -> Check:
    ex = registry.get(exercise_id)
    practice = _practice(exercise_id)
    setups = (ex.setup_code(ex.params), *(ex.setup_code(p) for p, _ in practice))
    return Check(id=ex.id, title=ex.title, chapter=ex.chapter, points=ex.points, kind=ex.kind,
                 spec=spec_with(ex, setups),
                 variants=(_grading_variant(exercise_id, 0), *(v for _, v in practice)),
                 wrong=_wrong_info(ex), requires=_requires(ex))


def cache_dir() -> Path:
    """Where computed practice checks are kept: $GRADTUTOR_CACHE, else the user's cache folder."""
    home = os.environ.get("GRADTUTOR_CACHE") or Path(os.environ.get("XDG_CACHE_HOME") or
                                                     Path.home() / ".cache") / "gradtutor"
    return Path(home) / "practice"


@cache
def code_digest(chapter_folder: str) -> str:
    """A digest of every source a chapter's practice checks are computed from: its unit folder,
    the shared exercise code, the runtime (kinds, harness, judge), the key and torch's version.
    Any edit there makes new files."""
    import torch

    digest = hashlib.sha256(torch.__version__.encode())
    roots = [(Path(importlib.util.find_spec(p).origin).parent, "**/*.py")
             for p in ("autograder", "gradtutor.key")]
    roots += [(registry.ROOT, "*.py"), (registry.ROOT / chapter_folder, "*.py")]
    for root, pattern in roots:
        for path in sorted(root.glob(pattern)):
            digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:20]


def warm() -> None:
    """Compute and keep every exercise's practice check (``make lab`` runs it once per change),
    so that no self-check in the lab waits for one."""
    for exercise_id in registry.ids():
        practice_check(exercise_id)


def _stored(exercise_id: str, compute: Any) -> Check:
    """``compute(exercise_id)``, read from the cache folder when this code computed it before;
    a folder that cannot be written only costs the time."""
    folder = registry.module_path(exercise_id).split(".")[1]
    path = cache_dir() / f"{exercise_id}-{code_digest(folder)}.json"
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        return from_json(json.loads(path.read_text()))
    check = compute(exercise_id)
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")  # atomic: kernels race
        with os.fdopen(fd, "w") as f:
            json.dump(to_json(check), f)
        os.replace(tmp, path)
    return check


def keep_checks(folder: Path, exercise_ids: Iterable[str]) -> list[str]:
    """Every variant's check of these exercises read from ``folder``, where a run of the same
    code (``code_digest``: the unit's chapter, the shared exercise code, the runtime, the key,
    torch's version) wrote it before; the others computed now and written there. Returns the
    ids it computed. The files hold the grading variants' values: ``folder`` must be the
    trusted side's (the course's, which the sandbox cannot see), and it is made private."""
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o700)
    computed = []
    for exercise_id in sorted(set(exercise_ids)):
        if exercise_id in _KEPT:
            continue
        path = folder / f"{exercise_id}-{code_digest(registry.module_path(exercise_id).split('.')[1])}.json"
        kept = _read_check(path, exercise_id)
        if kept is None:
            kept = check_for(exercise_id)
            computed.append(exercise_id)
            _write_check(path, kept)
        _KEPT[exercise_id] = kept
    return computed


def _read_check(path: Path, exercise_id: str) -> Check | None:
    try:
        check = from_json(json.loads(path.read_text()))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None  # missing or written by other code: computed again
    return check if check.id == exercise_id else None


def _write_check(path: Path, check: Check) -> None:
    """Atomic (a killed run leaves no half file); older digests of the exercise removed."""
    with contextlib.suppress(OSError):  # a folder that cannot be written only costs the time
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "w") as f:
            json.dump(to_json(check), f)
        os.replace(tmp, path)
        stem = path.name.rsplit("-", 1)[0]
        for old in path.parent.glob(f"{stem}-*.json"):
            if old != path and old.name.rsplit("-", 1)[0] == stem:
                old.unlink(missing_ok=True)


@cache
def check_for(exercise_id: str, variants: int | None = None) -> Check:
    """The check of an exercise at its first ``variants`` variants (default: all of them)."""
    if variants is None and exercise_id in _KEPT:
        return _KEPT[exercise_id]
    ex = registry.get(exercise_id)
    count = len(ex.variants()) if variants is None else variants
    return Check(
        id=ex.id, title=ex.title, chapter=ex.chapter, points=ex.points, kind=ex.kind,
        spec=spec(ex, count),
        variants=tuple(Variant(reference(ex.id, v), wrong_values(ex.id, v)) for v in range(count)),
        wrong=_wrong_info(ex),
        requires=_requires(ex),
    )


def _wrong_info(ex: Exercise) -> tuple[WrongInfo, ...]:
    return tuple(WrongInfo(w.misconception, misconceptions.name(w.misconception), w.explanation, w.hint)
                 for w in ex.wrong)


def run_at(ex: Exercise, ns: dict[str, Any], source: str, params: Params) -> Plain:
    """The answer cell ``source`` re-run at ``params`` after the unit's setup, read as plain data
    (what the sandbox does at a hidden variant; the build, the demo class and tests use it)."""
    return at_params(spec(ex, 1), ns, source, ex.setup_code(params))


@cache
def fingerprint(exercise_id: str) -> tuple[str, str]:
    """(unit, inputs): digests of what grading this exercise depends on. ``unit`` covers the
    answer kind and its tolerances, the points, the references and every wrong answer's value,
    misconception, explanation and hint at every variant: when it changes, stored answers judge
    differently. ``inputs`` covers what the sandbox ran (the answer's name, the call, each
    variant's setup code): when it changes, the stored answers are answers to other questions,
    and only running the notebooks again grades them."""
    data = to_json(check_for(exercise_id))
    inputs = data["spec"]  # answer, call, setups, by_hand, requires: what the sandbox ran
    graded = {k: v for k, v in data.items() if k not in ("title", "chapter")}

    def digest(value: Any) -> str:
        text = json.dumps(value, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    return digest(graded), digest(inputs)


# the code a verdict depends on besides the unit: reading answers, the kinds, the judge, scoring
# (named, not imported: the fingerprint reads their source, and scoring stands above the key)
JUDGING_CODE = ("autograder.contract", "autograder.plain", "autograder.kinds", "autograder.checkdata",
                "autograder.judge", "gradtutor.key.answer_key", "gradtutor.key.misconceptions",
                "gradtutor.grading.scoring")


@cache
def grader_fingerprint() -> str:
    """A digest of the judging code (``JUDGING_CODE``): results judged by other code may judge
    differently even where no unit changed."""
    digest = hashlib.sha256()
    for name in JUDGING_CODE:
        source = Path(importlib.util.find_spec(name).origin).read_bytes()
        digest.update(name.encode() + b"\0" + source + b"\0")
    return digest.hexdigest()[:16]
