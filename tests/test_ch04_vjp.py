"""Chapter 4 beyond the per-unit self-tests: the reference documents' numbers and wrong results,
students' buggy Jacobian functions graded at the hidden variants, and the slip-reading kind."""

from __future__ import annotations

import pytest
import torch

from autograder import check
from autograder.kinds import Invalid, TensorOrSlip
from autograder.plain import to_plain
from autograder.selfcheck import grade_feedback
from gradtutor.key import registry

# (exercise, the number the reference document states) for sets 001, 002 (4.2) and 003
SEED_ANSWERS = [
    ("seed_ones", [2.0, 4.0, 6.0]),
    ("seed_reweights", [2.0, 0.0, 12.0]),
    ("chain_2x_squared", 8.0),
    ("backward_on_input", 4.0),
    ("identity_seed", [-1.0, -0.5, 0.0, 0.5, 1.0]),
    ("square_seed_z", [2.0, 8.0, 18.0, 32.0, 50.0]),
    ("scalar_outputs", {"sum": {"grad": [1.0] * 5}, "sum_of_squares": {"grad": [-2.0, -1.0, 0.0, 1.0, 2.0]}}),
]


@pytest.mark.parametrize(("exercise_id", "stated"), SEED_ANSWERS, ids=[s[0] for s in SEED_ANSWERS])
def test_reference_documents_numbers_are_the_right_answer(exercise_id, stated):
    assert check(exercise_id, stated).correct


# (exercise, the wrong result a reference document reports or explains, the diagnosis it needs)
SEED_WRONGS = [
    ("backward_on_input", 8.0, "backward_wrong_tensor"),  # 001: expected dz/dx from x.backward(z)
    ("identity_seed", [1.0] * 5, "seed_is_vjp"),  # 003: "I would expect a tensor full of 1"
    ("square_seed_z", [2.0, 4.0, 6.0, 8.0, 10.0], "seed_selects_wrt"),  # 003: expected 2z
    ("seed_reweights", [2.0, 4.0, 6.0], "seed_is_vjp"),  # 002 4.2: the seed ignored
    ("seed_reweights", [1.0, 0.0, 2.0], "seed_returned"),
    ("seed_reweights", 14.0, "vjp_summed"),  # the dot product v·2x
    ("chain_2x_squared", 4.0, "local_gradient_only"),
]


@pytest.mark.parametrize(("exercise_id", "wrong", "misconception"), SEED_WRONGS,
                         ids=[f"{s[0]}-{s[2]}" for s in SEED_WRONGS])
def test_reported_wrong_results_are_diagnosed(exercise_id, wrong, misconception):
    fb = check(exercise_id, wrong)
    assert fb.score == 0.0 and fb.misconception == misconception, str(fb)


def test_backward_on_input_explains_that_the_argument_only_scales():
    fb = check("backward_on_input", 8.0)
    assert "starts from the tensor" in fb.explanation and "only scales" in fb.explanation


STUDENT_FUNCTIONS = {
    "honest": ("""def jacobian_rows(f, x):
    x = x.detach().requires_grad_()
    y = f(x)
    rows = []
    for i in range(y.numel()):
        x.grad = None
        y.backward(torch.eye(y.numel(), dtype=y.dtype)[i], retain_graph=True)
        rows.append(x.grad)
    return torch.stack(rows)""", None),
    "forgot_to_zero": ("""def jacobian_rows(f, x):
    x = x.detach().requires_grad_()
    y = f(x)
    rows = []
    for i in range(y.numel()):
        seed = torch.zeros_like(y)
        seed[i] = 1.0
        y.backward(seed, retain_graph=True)
        rows.append(x.grad.clone())
    return torch.stack(rows)""", "accumulation"),
    "zeroed_but_no_copy": ("""def jacobian_rows(f, x):
    x = x.detach().requires_grad_()
    y = f(x)
    rows = []
    for i in range(y.numel()):
        if x.grad is not None:
            x.grad.zero_()
        seed = torch.zeros_like(y)
        seed[i] = 1.0
        y.backward(seed, retain_graph=True)
        rows.append(x.grad)
    return torch.stack(rows)""", "accumulation"),
    "columns_not_rows": ("""def jacobian_rows(f, x):
    return torch.autograd.functional.jacobian(f, x).T""", "jacobian_orientation"),
    "ones_seed": ("""def jacobian_rows(f, x):
    x = x.detach().requires_grad_()
    y = f(x)
    y.sum().backward()
    return torch.stack([x.grad] * y.numel())""", "onehot_seed"),
}


@pytest.mark.parametrize("name", STUDENT_FUNCTIONS)
def test_jacobian_rows_students_are_graded_on_fresh_functions(name):
    source, misconception = STUDENT_FUNCTIONS[name]
    ex = registry.get("jacobian_rows")
    ns: dict = {}
    exec("import torch", ns)
    exec(ex.setup_code(ex.params), ns)
    exec(source, ns)
    fb = grade_feedback(ex.id, ns["jacobian_rows"], namespace=ns, history=[source, "grade(...)"])
    assert len(fb.variants) == 1 + len(ex.hidden)
    if misconception is None:
        assert fb.correct and fb.score == 1.0, str(fb)
    else:
        assert fb.score == 0.0 and fb.misconception == misconception, str(fb)


def test_a_function_that_only_works_at_the_shown_values_loses_the_hidden_marks():
    ex = registry.get("jacobian_rows")
    ns: dict = {}
    exec("import torch", ns)
    exec(ex.setup_code(ex.params), ns)
    # hard-wired to the shown A and sin: right here, wrong for the other functions
    source = """def jacobian_rows(f, x):
    A = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=torch.float64)
    return A * torch.cos(x)"""
    exec(source, ns)
    fb = grade_feedback(ex.id, ns["jacobian_rows"], namespace=ns, history=[source, "grade(...)"])
    assert fb.verdict == "partial" and 0 < fb.score < 1, str(fb)


KIND = TensorOrSlip(shape=(3,), slips=((), (3, 3)))


def test_slip_shapes_are_read_and_never_equal_the_answer():
    scalar = KIND.canonical(to_plain(14.0))
    one_element = KIND.canonical(to_plain([14.0]))
    matrix = KIND.canonical(to_plain(torch.eye(3)))
    assert scalar.shape == one_element.shape == () and matrix.shape == (3, 3)
    right = KIND.canonical(to_plain([[2.0, 0.0, 12.0]]))  # singleton dims are still accepted
    assert right.shape == (3,)
    assert not KIND.same(scalar, right) and not KIND.same(matrix, right)


@pytest.mark.parametrize("bad", [[1.0, 2.0], torch.ones(2, 2), "26", None])
def test_other_shapes_stay_invalid_with_a_reason(bad):
    with pytest.raises(Invalid, match="(?i)expected"):
        KIND.canonical(to_plain(bad))


def test_an_undiagnosed_slip_shape_is_told_the_expected_shape():
    fb = check("seed_reweights", 3.0)
    assert fb.score == 0.0 and "shape (3,)" in fb.message, str(fb)
