"""Chapters 7 and 8 pose the reference questions with the reference numbers, and diagnose the
wrong results reported there; kink exercises stay exactly on their kinks at every variant."""

from __future__ import annotations

import random

import pytest
import torch

from autograder.judge import judge
from autograder.plain import to_plain
from gradtutor.key import registry


def _value(exercise_id: str, params: dict | None = None) -> float:
    ex = registry.get(exercise_id)
    return float(ex.reference(**(params or ex.params)))


def _diagnosis(exercise_id: str, answer) -> str | None:
    return judge(exercise_id, [to_plain(answer)]).misconception


def test_relu_corner_is_seed_002_2_3():
    # x.grad = 1 · ReLU'(0) · (-1) = 0; ReLU'(0) read as 1 gives -1, as the average gives -0.5
    assert registry.get("relu_corner_chain").params == {"x0": 1.0}
    assert _value("relu_corner_chain") == 0.0
    assert _diagnosis("relu_corner_chain", torch.tensor(-1.0)) == "relu_chain"
    assert _diagnosis("relu_corner_chain", -0.5) == "kink_convention"


def test_inner_update_step_is_seed_000():
    ex = registry.get("inner_step_meta")
    assert ex.params == {"x0": 1.0, "y": 4.0, "step": 0.001, "a": 3.0}
    assert _value("inner_step_meta") == pytest.approx(-6.108486, abs=1e-9)
    x, y = 1.0, 4.0  # the poster's own algebra, verbatim
    assert ex.analytic(**ex.params) == pytest.approx(2 * (y - 3 * x - 0.027 * x + 0.009 * y) * (-3 - 0.027))
    assert _diagnosis("inner_step_meta", torch.tensor([-6.0540])) == "meta_create_graph"
    assert judge("inner_step_meta", [to_plain(torch.tensor([-6.1085]))]).verdict == "correct"


def test_maml_one_step_numbers():
    assert _value("maml_one_step") == pytest.approx(1.28)
    assert _diagnosis("maml_one_step", 1.6) == "meta_create_graph"
    assert _diagnosis("maml_one_step", -0.32) == "detach_cuts_path"


def test_second_derivative_accumulation_gives_24():
    assert registry.get("second_derivative_cube").reference(x0=2.0).tolist() == [12.0, 12.0]
    assert _diagnosis("second_derivative_cube", [12.0, 24.0]) == "second_derivative_accumulates"


@pytest.mark.parametrize("exercise_id, key", [("relu_corner_chain", "x0"), ("kink_conventions", "a")])
def test_kink_variants_sit_exactly_on_the_kink(exercise_id, key):
    # the input to the kinked function is x0 - x (resp. x - a) with x built from the same float:
    # exactly 0 in float32 and float64, so the wrong conventions never coincide with the answer
    ex = registry.get(exercise_id)
    rng = random.Random(0)
    for params in ex.variants() + [ex.draw(rng) for _ in range(20)]:
        for dtype in (torch.float32, torch.float64):
            x = torch.tensor(params[key], dtype=dtype)
            assert (params[key] - x).item() == 0.0


def test_where_trap_and_double_where_numbers():
    assert registry.get("where_nan_trap").reference(x=[0.0, 4.0, -1.0]).tolist()[1] == 0.25
    grads = registry.get("safe_sqrt").reference(x=[0.0, 4.0, -1.0, 2.25])[1].tolist()
    assert grads[:3] == [0.0, 0.25, 0.0]


@pytest.mark.parametrize("exercise_id", ["where_nan_trap", "safe_sqrt", "zero_norms", "tie_gradients"])
def test_trap_variants_keep_their_trap(exercise_id):
    # a variant without a zero (or without a tie) would make the right and wrong answers agree
    ex = registry.get(exercise_id)
    rng = random.Random(1)
    for params in ex.variants() + [ex.draw(rng) for _ in range(20)]:
        if exercise_id == "zero_norms":
            assert [0.0, 0.0] in params["X"]
        elif exercise_id == "tie_gradients":
            assert params["x"].count(max(params["x"])) >= 2
        else:
            assert 0.0 in params["x"]
