"""The self-check tries other values at once: practice values, fixed at build time.

In a kernel, ``check()`` re-runs the answer cell (found in the kernel's history, as grading
does) at the practice values and judges each. These tests run it as a kernel would: the
setup and the answer cell executed in a namespace, the history holding the answer cell and
then the check cell.
"""

from __future__ import annotations

import contextlib
import io
import warnings

import pytest
from hostile import kit

from autograder.judge import quietly
from autograder.kinds import Number, Tensor
from autograder.selfcheck import check
from gradtutor.key import registry
from gradtutor.key.answer_key import _same, coinciding, practice_params, reference

EXERCISES = registry.all_exercises()
IDS = [ex.id for ex in EXERCISES]


def _varies(ex) -> bool:
    shown = reference(ex.id, 0)
    return any(not _same(ex, reference(ex.id, v), shown) for v in range(1, len(ex.variants())))


def _in_kernel(ex, answer_cell: str):
    """check() as the check cell under ``answer_cell`` runs it in a kernel."""
    ns: dict = {}
    with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()), \
            contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        exec("import torch\nimport torch.nn.functional as F\n" + ex.setup_code(ex.params), ns)
        exec(answer_cell, ns)
        history = ["import torch", ex.setup_code(ex.params), answer_cell, f"check({ex.id!r}, {ex.answer})"]
        return check(ex.id, ns[ex.answer], namespace=ns, history=history)


@pytest.mark.parametrize("ex", EXERCISES, ids=IDS)
def test_practice_values_separate_the_reference(ex) -> None:
    """Two practice sets per exercise, none a grading variant; at each, the reference differs
    from every listed wrong answer and, where the answer depends on the parameters at all,
    from the reference at the shown values (so a typed-in answer fails there)."""
    practice = practice_params(ex.id)
    assert len(practice) == 2
    grading = ex.variants()
    setups = {ex.setup_code(v) for v in grading}
    varies = _varies(ex)
    for params in practice:
        assert params not in grading
        assert len(setups) == 1 or ex.setup_code(params) not in setups  # no grading variant's setup
        ref = quietly(ex.kind.of, quietly(ex.reference, **params))
        blind = ex.blind_at(params)  # a region the unit declares blind to it (tests/test_regions.py)
        for i, w in enumerate(ex.wrong):
            if i in blind:
                continue
            assert not _same(ex, ref, quietly(ex.kind.of, quietly(w.value, **params))), w.misconception
        if varies:
            assert not _same(ex, ref, reference(ex.id, 0))


@pytest.mark.parametrize("ex", EXERCISES, ids=IDS)
def test_the_solution_is_right_at_the_practice_values(ex) -> None:
    fb = _in_kernel(ex, kit.solution(ex))
    assert fb.verdict == "correct", fb
    assert [v.status for v in fb.variants] == ["correct"] * 3


NUMERIC = [ex for ex in EXERCISES if isinstance(ex.kind, Number | Tensor) and not ex.is_function]


@pytest.mark.parametrize("ex", NUMERIC, ids=[ex.id for ex in NUMERIC])
def test_a_typed_in_number_is_caught(ex) -> None:
    """The reference at the shown values typed in: right there, wrong at a practice value,
    and the message says where (the practice values are public) and that it looks typed in."""
    if not _varies(ex):
        pytest.skip("the answer does not depend on the parameters")
    fb = _in_kernel(ex, kit.hardcoded(ex))
    assert fb.variants[0].status == "correct"
    assert fb.verdict == "partial", fb
    assert "re-ran your answer cell with `" in fb.message
    assert "typed in" in fb.message


def test_outside_a_kernel_only_the_shown_values_are_judged() -> None:
    ex = registry.get("sum_rule")
    fb = check(ex.id, ex.reference(**ex.params))
    assert fb.verdict == "correct" and len(fb.variants) == 1


SEED_001_LEARNER = """x = torch.tensor([x0], requires_grad=True)
y = 2 * x
z = y ** 2
x.backward(z)
dz_dx = x.grad"""


def test_seed_001_learners_code_is_diagnosed_as_its_own_mistake() -> None:
    """Reference set 001's `x.backward(z)` at the shown x0 = 1 prints 4, which is also the local
    gradient 4x there; the practice values tell the two apart, so the learner's own code is
    diagnosed as backward on the wrong tensor, and the shown value stays the seed's."""
    ex = registry.get("chain_2x_squared")
    assert ex.params == {"x0": 1.0}
    fb = _in_kernel(ex, SEED_001_LEARNER)
    assert fb.verdict == "wrong" and fb.misconception == "backward_wrong_tensor", fb
    assert "x.backward(z)" in fb.explanation
    typed = _in_kernel(ex, "dz_dx = 4.0")  # 4 typed in: a known mistake only where two coincide
    assert typed.misconception is None, typed
    local = _in_kernel(ex, "dz_dx = 2 * (2 * x0)")  # dz/dy alone, at every value
    assert local.misconception == "local_gradient_only", local


# every exercise, not only those whose wrong answers coincide: which ones do is known only after
# running every listed wrong answer (most of 20 s of CPU), and every pytest worker imports this
# module to collect it
@pytest.mark.parametrize("ex", EXERCISES, ids=IDS)
def test_mistakes_that_coincide_at_the_shown_values_are_told_apart(ex) -> None:
    """The general rule (judge.believed): each of two wrong answers equal at the shown values,
    answered at the shown and practice values, is diagnosed as itself; at the shown values
    alone, the feedback says the two were not told apart. Where no two coincide, the shown
    values alone name each listed mistake."""
    from autograder.judge import judge
    from autograder.plain import to_plain
    from gradtutor.key.answer_key import practice_check

    if not coinciding(ex.id):
        for w in ex.wrong:
            fb = judge(practice_check(ex.id), [to_plain(quietly(w.value, **ex.params))])
            assert fb.misconception == w.misconception, (w.misconception, fb)
        return
    values = [ex.params, *practice_params(ex.id)]
    for w in ex.wrong:
        fb = judge(practice_check(ex.id), [to_plain(quietly(w.value, **p)) for p in values])
        assert fb.misconception == w.misconception and fb.explanation.startswith(w.explanation[:40]), w
    a, _ = coinciding(ex.id)[0]
    only_shown = judge(practice_check(ex.id), [to_plain(quietly(ex.wrong[a].value, **ex.params))])
    assert "not tried" in only_shown.message
