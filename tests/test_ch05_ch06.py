"""Chapters 5 and 6 beyond the per-unit self-tests: the reference document's numbers (set 002,
4.1, 3.3 and 5.1) are the right answers, the wrong results it explains are diagnosed, and
students' step and cross-entropy functions are graded on fresh inputs at the hidden variants."""

from __future__ import annotations

import pytest

from autograder import check
from autograder.selfcheck import grade_feedback
from gradtutor.key import registry

# (exercise, the number reference set 002 or the content map states)
SEED_ANSWERS = [
    ("linear_layer_wgrad", [[1.0, 1.0], [2.0, 2.0]]),  # 002 4.1
    ("linear_layer_xgrad", [0.2, 0.6]),  # 002 4.1
    ("detach_cut", 4.0),  # 002 3.3
    ("data_silent_grad", [-0.6757, -1.3416]),  # content map M14, to its 4 printed decimals
    ("xent_grad_single", [-0.3348, 0.2447, 0.0900]),  # content map Ch 5 outline
    ("outer_product_vwx", [[1.0, 0.0, -1.0], [10.0, 0.0, -10.0]]),
    ("mse_mean_grad", [0.5, 1.0, 1.5, 2.0]),
    ("repeated_index_grad", [3.0, 3.0, 0.0]),
    ("bias_batch_grad", [[4.0] * 3, [1 / 3] * 3]),
    ("no_grad_detach_grads", [3.0, 10.0]),
]


@pytest.mark.parametrize(("exercise_id", "stated"), SEED_ANSWERS, ids=[s[0] for s in SEED_ANSWERS])
def test_reference_numbers_are_the_right_answer(exercise_id, stated):
    fb = check(exercise_id, stated)
    assert fb.correct, str(fb)


# (exercise, a wrong result the reference explains or a learner reports, the diagnosis it needs)
SEED_WRONGS = [
    ("linear_layer_wgrad", [[1.0, 2.0], [1.0, 2.0]], "matmul_transpose"),  # 002 4.1: the transpose
    ("linear_layer_xgrad", [0.7, 0.1], "matmul_transpose"),  # Wᵀ contracted: column sums of W
    ("detach_cut", 12.0, "detach_cuts_path"),  # 002 3.3: 3x² without the cut
    ("data_silent_grad", [0.1966, 0.1050], "data_silent"),  # M14: the true sigmoid' expected
    ("xent_grad_single", [0.6652, 0.2447, 0.0900], "xent_onehot"),  # the softmax itself
    ("mse_mean_grad", [2.0, 4.0, 6.0, 8.0], "mean_scales"),  # M23: the sum reduction
    ("bias_batch_grad", [[1.0] * 3, [1 / 12] * 3], "broadcast_sums"),  # M24: per-sample thinking
    ("repeated_index_grad", [2.0, 3.0, 0.0], "repeated_index"),  # M26: last write wins
    ("detach_inplace_error", None, "detach_shares_version"),
]


@pytest.mark.parametrize(("exercise_id", "wrong", "misconception"), SEED_WRONGS,
                         ids=[f"{s[0]}-{s[2]}" for s in SEED_WRONGS])
def test_reported_wrong_results_are_diagnosed(exercise_id, wrong, misconception):
    fb = check(exercise_id, wrong)
    assert fb.score == 0.0 and fb.misconception == misconception, str(fb)


def test_linear_layer_variants_keep_both_relu_units_on_and_transposes_visible():
    # the brief's condition: at every variant both ReLU inputs are positive, so W.grad is a
    # plain outer product and its transpose differs from it
    ex = registry.get("linear_layer_wgrad")
    for p in ex.variants():
        z = [sum(p["x"][i] * p["W"][i][j] for i in range(2)) + p["b"][j] for j in range(2)]
        assert min(z) > 0.1, p
        assert p["x"][0] != p["x"][1], p


def _graded(exercise_id: str, source: str):
    """Grade an answer cell the way the notebook's grade cell does: at every variant."""
    ex = registry.get(exercise_id)
    ns: dict = {}
    exec("import torch", ns)
    exec(ex.setup_code(ex.params), ns)
    exec(source, ns)
    return grade_feedback(exercise_id, ns[ex.answer], namespace=ns, history=[source, "grade cell"])


SGD_STEPS = {
    "in place under no_grad": ("""def sgd_step(w, lr):
    with torch.no_grad():
        w -= lr * w.grad
    w.grad = None
    return w""", "correct", None),
    "uphill": ("""def sgd_step(w, lr):
    with torch.no_grad():
        w += lr * w.grad
    return w""", "wrong", "descent_direction"),
    "out of place": ("""def sgd_step(w, lr):
    w = w - lr * w.grad
    return w""", "wrong", "out_of_place_update"),
    "typed in 1.4": ("""def sgd_step(w, lr):
    with torch.no_grad():
        w.fill_(1.4)
    w.grad = None
    return w""", "partial", None),
}


@pytest.mark.parametrize("name", SGD_STEPS)
def test_sgd_step_functions_are_graded_on_fresh_w_and_lr(name):
    source, verdict, misconception = SGD_STEPS[name]
    fb = _graded("sgd_step", source)
    assert fb.verdict == verdict, str(fb)
    if misconception:
        assert fb.misconception == misconception, str(fb)


def test_sgd_step_without_no_grad_reports_the_leaf_error():
    fb = _graded("sgd_step", """def sgd_step(w, lr):
    w -= lr * w.grad
    return w""")
    assert fb.verdict == "invalid" and "leaf Variable" in fb.message, str(fb)


XENT_FUNCTIONS = {
    "closed form": ("""def xent_grad(logits, targets):
    n, c = logits.shape
    return (torch.softmax(logits, 1) - torch.nn.functional.one_hot(targets, c)) / n""", "correct", None),
    "autograd": ("""def xent_grad(logits, targets):
    z = logits.clone().requires_grad_()
    torch.nn.functional.cross_entropy(z, targets).backward()
    return z.grad""", "correct", None),
    "no 1/N": ("""def xent_grad(logits, targets):
    return torch.softmax(logits, 1) - torch.nn.functional.one_hot(targets, 3)""", "wrong", "mean_scales"),
    "target hard-coded": ("""def xent_grad(logits, targets):
    return (torch.softmax(logits, 1) - torch.tensor([[1, 0, 0], [0, 0, 1]])) / 2""", "partial", None),
}


@pytest.mark.parametrize("name", XENT_FUNCTIONS)
def test_cross_entropy_functions_are_graded_on_fresh_batches(name):
    source, verdict, misconception = XENT_FUNCTIONS[name]
    fb = _graded("xent_batch_fn", source)
    assert fb.verdict == verdict, str(fb)
    if misconception:
        assert fb.misconception == misconception, str(fb)


MATMUL_FUNCTIONS = {
    "Aᵀ G": ("def matmul_grad_B(A, G):\n    return A.T @ G", "correct", None),
    "Gᵀ A": ("def matmul_grad_B(A, G):\n    return G.T @ A", "wrong", "matmul_transpose"),
    # a by-hand exercise: the function runs with autograd off, and the check says so
    "autograd": ("""def matmul_grad_B(A, G):
    B = torch.zeros(3, 3, dtype=A.dtype, requires_grad=True)
    (A @ B).backward(G)
    return B.grad""", "invalid", None),
}


@pytest.mark.parametrize("name", MATMUL_FUNCTIONS)
def test_matmul_gradient_functions_are_graded_on_fresh_matrices(name):
    source, verdict, misconception = MATMUL_FUNCTIONS[name]
    fb = _graded("matmul_grad_fn", source)
    assert fb.verdict == verdict, str(fb)
    if misconception:
        assert fb.misconception == misconception, str(fb)
