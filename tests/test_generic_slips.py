"""The generic diagnoses of issue #13 item 4, each shown on an answer cell run as check() runs it
(shown values, then the practice values re-run from the history), and the helpers that let units
share a wrong answer."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "novice"))
import replay

from autograder import checkdata
from autograder.judge import GENERIC, Judgement, _consistent
from gradtutor.key import answer_key, registry
from gradtutor.key.exercise import ORDER_OFF, VALUE_INSTEAD, order_off, value_instead
from gradtutor.key.misconceptions import CATALOGUE

CASES = [
    # (exercise, answer cell, the diagnosis)
    ("sum_rule", "dz_dx = 11", "typed_in"),
    ("sum_rule", "dz_dx = 3 * x0 + 2", "shown_values_only"),  # 11 at x0 = 3 only
    ("sum_rule", "dz_dx = [2 * x0, 5.0]", "per_element"),  # the terms, not their sum
    ("mse_mean_grad", "dz = [2 * (p - t) / len(pred0) for p, t in zip(pred0, target0)]\npred_grad = sum(dz)",
     "summed"),
    ("per_sample_grads", "def loss(w, x, y):\n    return (w @ x - y) ** 2\n"
     "w, X, Y = torch.tensor(w_values), torch.tensor(X_values), torch.tensor(y_values)\n"
     "per_sample = torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))(w, X, Y).sum(0)",
     "summed"),  # over the batch axis
    ("group_lasso_nan", "W = torch.tensor(W0, dtype=torch.float64, requires_grad=True)\n"
     "sq = (W ** 2).sum(0)\npenalty = torch.where(sq > 0, sq.sqrt(), 0.0).sum()\npenalty.backward()\n"
     "W_grad = W.grad.sum(0)", "summed"),  # over an axis, the zero column's NaN carried through
    ("outer_product_vwx", "W_grad_vwx = torch.outer(torch.tensor(x0), torch.tensor(v0))", "transposed"),
    ("retain_grad_values", "both_grads = [[2 * k * k * v for v in x0], [2 * k * v for v in x0]]", "reordered"),
    ("stable_log_sigmoid", "x = torch.tensor(logits, requires_grad=True)\n"
     "torch.log(1 - torch.sigmoid(x)).sum().backward()\ng1 = x.grad\n"
     "x = torch.tensor(logits, requires_grad=True)\nF.logsigmoid(-x).sum().backward()\n"
     "loss_grads = torch.stack([g1, -x.grad])", "sign_flipped"),  # one row flipped, NaN kept
    ("grad_accumulation", "def accumulated_grad(w, X, Y, k):\n"
     "    for Xm, Ym in zip(X.chunk(k), Y.chunk(k)):\n"
     "        (torch.nn.functional.mse_loss(Xm @ w, Ym) / len(X)).backward()\n    return w.grad\n",
     "factor_one_over_k"),  # 1/2 here, another fraction at the practice values: one family
    # a table wrong in one of the two cells a listed mistake changes, there as that mistake has it
    ("tracked_abcd", 'tracked = {"a": {"requires_grad": False, "grad_fn": None},\n'
     '           "b": {"requires_grad": True, "grad_fn": None},\n'
     '           "c": {"requires_grad": True, "grad_fn": None},\n'
     '           "d": {"requires_grad": True, "grad_fn": "MulBackward0"}}', "detach_cuts_path"),
]


@pytest.mark.parametrize(("exercise", "source", "diagnosis"), CASES, ids=[f"{c[0]}-{c[2]}" for c in CASES])
def test_a_generic_diagnosis(exercise: str, source: str, diagnosis: str) -> None:
    fb = replay.run_one(exercise, source)
    assert not fb.correct
    assert fb.misconception == diagnosis, (fb.misconception, fb.message)
    assert fb.explanation and fb.hint


def test_an_answer_right_at_the_shown_values_is_not_given_a_listed_mistake() -> None:
    # x typed as the shown a = 0.0: at the practice values the cell computes off the kink, where
    # its numbers match a listed wrong answer; the answer does not follow that mistake
    source = ('kink_grads = {}\nfor name, fn in spellings.items():\n'
              '    x = torch.tensor(0.0, requires_grad=True)\n    fn(x - a).backward()\n'
              '    kink_grads[name] = {"grad": x.grad}\n')
    fb = replay.run_one("kink_conventions", source)
    assert fb.verdict == "partial" and fb.misconception == "shown_values_only"


def test_a_slip_at_the_shown_values_alone_is_not_named() -> None:
    twice, other = Judgement("wrong", 0.0, slip="factor_two"), Judgement("wrong", 0.0, slip=None)
    assert _consistent([twice, other]) is None
    assert _consistent([twice, Judgement("wrong", 0.0, slip="factor_k")]) == "factor_k"
    assert _consistent([twice, Judgement("correct", 1.0)]) == "factor_two"
    assert _consistent([Judgement("correct", 1.0), Judgement("wrong", 0.0, slip="rounded")]) == "rounded"


def test_an_answer_cell_that_fails_at_other_values_is_not_called_typed_in() -> None:
    # right at x0 = 3, raises elsewhere: the message says it raised, no 'typed in'
    fb = replay.run_one("sum_rule", "assert x0 == 3.0\ndz_dx = 11")
    assert fb.verdict == "partial" and fb.misconception is None


def test_a_shape_changing_answer_that_is_no_slip_still_cannot_be_judged() -> None:
    fb = replay.run_one("mse_mean_grad", "pred_grad = [1.0, 2.0]")
    assert fb.verdict == "invalid" and "shape" in fb.message


def test_every_generic_slip_is_in_the_catalogue() -> None:
    for slip, (name, explanation, hint) in GENERIC.items():
        assert CATALOGUE[slip] == name and explanation and hint


def test_shared_wrong_answers_share_id_and_text() -> None:
    a = value_instead(lambda x0: x0**2, "z = x²")
    b = order_off(lambda x0: 2 * x0, "the gradient", higher=False)
    assert a.misconception == "value_not_derivative" and a.value(x0=3.0) == 9.0
    assert a.explanation == VALUE_INSTEAD[0].format(what="z = x²")
    assert b.misconception == "derivative_order_off" in CATALOGUE
    assert b.explanation == ORDER_OFF[0].format(what="the gradient", direction="lower")
    shared = VALUE_INSTEAD[0].split("{")[0]
    users = [ex.id for ex in registry.all_exercises()
             if any(w.misconception == "derivative_order_off" or w.explanation.startswith(shared)
                    for w in ex.wrong)]
    assert len(users) >= 8, users


def test_practice_values_move_every_parameter_the_draw_moves() -> None:
    shown = registry.get("accumulate_three").params
    for params in answer_key.practice_params("accumulate_three"):
        assert all(params[k] != v for k, v in shown.items()), params
    assert checkdata.practice("accumulate_three").spec.setups[1:]
