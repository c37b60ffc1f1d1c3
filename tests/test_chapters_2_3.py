"""Chapters 2 and 3 reproduce their source documents' numbers, and the function exercise tells
a real central-difference gradient from the usual substitutes.

The literals below are the published values (reference set 002 and the micrograd exercises),
asserted against what the exercise units compute; they are never used as references.
"""

from __future__ import annotations

import pytest
import torch

from autograder.answers import read_answer
from autograder.judge import judge, quietly
from gradtutor.key import registry
from gradtutor.key.answer_key import run_at, spec


def ref(exercise_id: str, variant: int = 0):
    ex = registry.get(exercise_id)
    return quietly(ex.reference, **ex.variants()[variant])


def diagnosis(exercise_id: str, answer) -> str | None:
    return check_quietly(exercise_id, answer).misconception


def check_quietly(exercise_id: str, answer):
    from autograder import check

    return quietly(check, exercise_id, answer)


def test_seed_3_1_three_unzeroed_backwards_give_12_and_4_is_overwrite_thinking():
    assert registry.get("accumulate_three").params == {"x0": 2.0, "n": 3}
    assert float(ref("accumulate_three")) == 12.0
    assert diagnosis("accumulate_three", 4.0) == "accumulation"


def test_seed_3_2_retain_graph_gives_54_27_is_overwrite_and_no_retain_raises():
    assert registry.get("retain_graph_twice").params == {"x0": 3.0}
    assert float(ref("retain_graph_twice")) == 54.0
    assert diagnosis("retain_graph_twice", 27.0) == "accumulation"
    assert ref("backward_twice_error") == "RuntimeError"
    assert diagnosis("backward_twice_error", None) == "graph_freed"
    assert check_quietly("backward_twice_error", RuntimeError).correct


def test_micrograd_gradient_and_its_published_wrong_answers():
    grad = ref("micrograd_grad")
    assert torch.allclose(grad, torch.tensor([-12.3536, 10.2570, 0.0625], dtype=torch.float64),
                          atol=1e-4)
    right = grad.tolist()
    slips = {1: (12.0793, "chain_rule_dropped"), 0: (-11.6464, "sign_error"),
             2: (-0.0625, "sign_error")}
    for i, (value, misconception) in slips.items():
        answer = list(right)
        answer[i] = value
        assert diagnosis("micrograd_grad", answer) == misconception


def test_smaller_step_is_not_better():
    assert ref("step_size_best") == 1e-5
    assert diagnosis("step_size_best", 1e-14) == "finite_diff_step"


def test_gradcheck_verdicts_float32_and_kinks():
    verdicts = {k: v["passes"] for k, v in ref("gradcheck_verdicts").items()}
    assert verdicts == {"sin_float32": False, "sin_float64": True, "relu_with_0": False,
                        "abs_with_0": True}


def test_zero_grad_leaves_none():
    assert ref("zero_grad_states")["E"]["grad"] is None


CENTRAL = """def central_grad(f, x, h={h}):
    g = torch.zeros_like(x)
    for i in range(x.numel()):
        s = torch.zeros_like(x)
        s[i] = h
        g[i] = (f(x + s) - f(x - s)) / (2 * h)
    return g"""
FORWARD = """def central_grad(f, x, h={h}):
    g = torch.zeros_like(x)
    for i in range(x.numel()):
        s = torch.zeros_like(x)
        s[i] = h
        g[i] = (f(x + s) - f(x)) / h
    return g"""


def score_of(source: str) -> float:
    ex = registry.get("central_grad")
    ns: dict = {}
    exec("import torch", ns)
    exec(ex.setup_code(ex.params), ns)
    exec(source, ns)
    answers = [read_answer(spec(ex), ns)] + [run_at(ex, ns, source, p) for p in ex.hidden]
    return judge(ex.id, answers).score


@pytest.mark.parametrize("h", ["1e-4", "1e-5", "1e-6", "1e-7"])
def test_central_grad_accepts_central_differences_with_sensible_steps(h):
    assert score_of(CENTRAL.format(h=h)) == 1.0


@pytest.mark.parametrize("source", [FORWARD.format(h="1e-6"), FORWARD.format(h="1e-7"),
                                    FORWARD.format(h="1e-8"), CENTRAL.format(h="1e-3"),
                                    CENTRAL.format(h="1e-10")])
def test_central_grad_refuses_full_marks_to_forward_differences_and_bad_steps(source):
    assert score_of(source) < 1.0


def test_central_grad_wrong_function_is_diagnosed():
    halved = CENTRAL.format(h="1e-5").replace("(2 * h)", "h")
    ex = registry.get("central_grad")
    ns: dict = {}
    exec("import torch", ns)
    exec(ex.setup_code(ex.params), ns)
    exec(halved, ns)
    assert judge(ex.id, [read_answer(spec(ex), ns)]).misconception == "difference_quotient"
