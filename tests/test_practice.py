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

from autograder import registry
from autograder.answer_key import _same, practice_params, reference
from autograder.judge import quietly
from autograder.kinds import Number, Tensor
from autograder.selfcheck import check

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
        exec("import torch\nimport torch.nn.functional as F\n" + ex.setup_code(ex.params), ns)  # noqa: S102
        exec(answer_cell, ns)  # noqa: S102
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
        for w in ex.wrong:
            assert not _same(ex, ref, quietly(ex.kind.of, quietly(w.value, **params))), w.misconception
        if varies:
            assert not _same(ex, ref, reference(ex.id, 0))


@pytest.mark.parametrize("ex", EXERCISES, ids=IDS)
def test_the_solution_is_right_at_the_practice_values(ex) -> None:
    fb = _in_kernel(ex, kit.solution(ex))
    assert fb.verdict == "correct", fb
    assert [v["status"] for v in fb.variants] == ["correct"] * 3


NUMERIC = [ex for ex in EXERCISES if isinstance(ex.kind, Number | Tensor) and not ex.is_function]


@pytest.mark.parametrize("ex", NUMERIC, ids=[ex.id for ex in NUMERIC])
def test_a_typed_in_number_is_caught(ex) -> None:
    """The reference at the shown values typed in: right there, wrong at a practice value,
    and the message says where (the practice values are public) and that it looks typed in."""
    if not _varies(ex):
        pytest.skip("the answer does not depend on the parameters")
    fb = _in_kernel(ex, kit.hardcoded(ex))
    assert fb.variants[0]["status"] == "correct"
    assert fb.verdict == "partial", fb
    assert "re-ran your answer cell with `" in fb.message
    assert "typed in" in fb.message


def test_outside_a_kernel_only_the_shown_values_are_judged() -> None:
    ex = registry.get("sum_rule")
    fb = check(ex.id, ex.reference(**ex.params))
    assert fb.verdict == "correct" and len(fb.variants) == 1
