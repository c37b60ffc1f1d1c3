"""The values an answer is judged at reach every branch of its reference.

A unit declares the regions of its parameters where its reference takes a different branch
(``Exercise(regions=...)``; clip_grad_norm: the total norm above and below ``max_norm``). The
grading variants and the self-check's values (shown + practice) each reach every region, and
for every unit each listed wrong answer and each generic slip (``autograder.judge.GENERIC``)
differs from the reference somewhere among them: an answer right on one branch only (a clip
that always rescales) is not accepted.
"""

from __future__ import annotations

import random

import pytest

from autograder.answers import read_all
from autograder.judge import GENERIC, judge, quietly, same
from autograder.plain import to_plain
from gradtutor.key import answer_key, registry
from gradtutor.key.answer_key import practice_check, practice_params
from gradtutor.key.slips import SLIPS, slipped

EXERCISES = registry.all_exercises()
IDS = [ex.id for ex in EXERCISES]
RANDOM_DRAWS = 8


def _canon(ex, params):
    return quietly(ex.kind.of, quietly(ex.reference, **params))


def _grading(ex) -> list[dict]:
    return ex.variants()


def _self_check(ex) -> list[dict]:
    return [dict(ex.params), *practice_params(ex.id)]


def test_clip_grad_norm_declares_both_branches():
    ex = registry.get("clip_grad_norm")
    assert len(ex.regions) == 2


@pytest.mark.parametrize("ex", [e for e in EXERCISES if e.regions], ids=[e.id for e in EXERCISES if e.regions])
def test_every_region_is_reached_by_grading_and_by_the_self_check(ex):
    for values, who in ((_grading(ex), "grading"), (_self_check(ex), "self-check")):
        reached = {name for p in values for name in ex.regions_at(p)}
        assert reached == {r.name for r in ex.regions}, (who, reached)


@pytest.mark.parametrize("ex", EXERCISES, ids=IDS)
def test_the_shown_values_are_blind_to_no_listed_wrong_answer(ex):
    # the judge names a mistake only from an answer wrong at the shown values (judge._judge)
    assert not ex.blind_at(ex.params)
    blind = {m for r in ex.regions for m in r.blind}
    assert blind <= {w.misconception for w in ex.wrong}, blind  # a declaration names a listed answer


@pytest.mark.parametrize("ex", EXERCISES, ids=IDS)
def test_each_wrong_answer_differs_from_the_reference_somewhere_and_agrees_only_where_declared(ex):
    # the answer key's own values (computed once, cached): fix_training_loop's take minutes
    checks = ((answer_key.check_for(ex.id), _grading(ex), "grading"),
              (practice_check(ex.id), _self_check(ex), "self-check"))
    for check, values, who in checks:
        for i, w in enumerate(ex.wrong):
            agree = [same(ex.kind, dict(v.wrong)[i], v.reference) for v in check.variants]
            assert not all(agree), (who, w.misconception)
            for p, a in zip(values, agree, strict=True):
                assert not a or i in ex.blind_at(p), (who, w.misconception, p)


# the generic slips made from the reference itself; the others need more than the reference
# (per_element: the entries behind a sum; typed_in and shown_values_only: an answer held fixed
# while the values move, tested in tests/test_practice.py)
NOT_FROM_THE_REFERENCE = {"per_element", "typed_in", "shown_values_only"}


def test_the_slips_tried_are_the_judges_catalogue():
    assert set(SLIPS) | NOT_FROM_THE_REFERENCE == set(GENERIC)


def _differs(ex, ref, slip: str) -> bool:
    try:
        return not same(ex.kind, slipped(ref, slip), ref)
    except Exception:  # a slip the kind cannot even compare (another shape): it differs
        return True


# units whose grading variants are round numbers, where an answer rounded to three digits is
# exact; only their practice values (drawn) would show a rounded answer. Empty: every unit has a
# grading variant that shows it (tools/unround_hidden.py found one for the last four, chapter 9's
# Function units, keeping each variant's signs, ties, regions and the mistakes it tells apart).
# A unit listed here whose grading variants do show the slip fails the test.
ROUND_GRADING: frozenset[str] = frozenset()


@pytest.mark.parametrize("ex", EXERCISES, ids=IDS)
def test_each_generic_slip_differs_from_the_reference_somewhere(ex):
    """A slip that shows at any value the unit can draw (it changes the reference there) shows
    somewhere among the grading variants and the self-check's values, and (but rounding, for the
    units of ``ROUND_GRADING``) at some grading variant."""
    rng = random.Random(f"slips:{ex.id}")
    drawn = []
    for _ in range(RANDOM_DRAWS):
        try:
            drawn.append(_canon(ex, ex.draw(rng)))
        except Exception:  # a draw the reference cannot compute at is not a value
            continue
    grading = [_canon(ex, p) for p in _grading(ex)]
    checked = [_canon(ex, p) for p in _self_check(ex)]
    for slip in SLIPS:
        if any(_differs(ex, ref, slip) for ref in drawn + grading):
            assert any(_differs(ex, ref, slip) for ref in grading + checked), slip
            shows = any(_differs(ex, ref, slip) for ref in grading)
            assert shows or (slip == "rounded" and ex.id in ROUND_GRADING), slip
            assert not (shows and slip == "rounded" and ex.id in ROUND_GRADING), "take it out of ROUND_GRADING"


def _always_rescales(g1: list, g2: list, max_norm: float) -> dict:
    total = sum(v * v for v in g1 + g2) ** 0.5
    scale = max_norm / (total + 1e-6)  # also above 1, when the norm is below max_norm
    return {"clip": {"returned": total, "g1": [v * scale for v in g1], "g2": [v * scale for v in g2]}}


def test_a_clip_that_always_rescales_is_not_accepted():
    ex = registry.get("clip_grad_norm")
    graded = judge(answer_key.check_for(ex.id), [to_plain(_always_rescales(**p)) for p in ex.variants()])
    assert graded.score < 1 and graded.verdict != "correct", graded
    checked = judge(practice_check(ex.id), [to_plain(_always_rescales(**p)) for p in _self_check(ex)])
    assert checked.verdict != "correct", checked
    # as a student writes it, re-run at every variant
    cell = ("import math\ntotal = math.sqrt(sum(v * v for v in g1 + g2))\nscale = max_norm / (total + 1e-6)\n"
            'clipped = {"clip": {"returned": total, "g1": [v * scale for v in g1], '
            '"g2": [v * scale for v in g2]}}')
    spec = answer_key.spec(ex)
    ns: dict = {}
    exec(spec.setups[0], ns)
    exec(cell, ns)
    fb = judge(answer_key.check_for(ex.id), read_all(spec, ns, ["", cell, "check()"]))
    assert fb.score < 1, fb


def test_a_known_mistake_earns_nothing_where_its_region_is_blind_to_it():
    ex = registry.get("clip_grad_norm")
    per_parameter = next(w for w in ex.wrong if w.misconception == "clip_norm_global")
    below = next(p for p in ex.variants() if ex.blind_at(p))
    assert same(ex.kind, _canon(ex, below), quietly(ex.kind.of, per_parameter.value(**below)))
    fb = judge(answer_key.check_for(ex.id), [to_plain(per_parameter.value(**p)) for p in ex.variants()])
    assert fb.score == 0 and fb.misconception == "clip_norm_global", fb
