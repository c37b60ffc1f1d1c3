"""Reference set 002 (c): a typed-in leaf has no grad_fn."""

import torch

from autograder.kinds import Choice
from gradtutor.key.exercise import Exercise, Wrong

OPTIONS = (None, "AddBackward0", "AccumulateGrad", "LeafBackward0", "CopyBackwards")


def reference(x0: float, y0: float) -> str | None:
    x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    y = torch.tensor(y0, dtype=torch.float64, requires_grad=True)
    _ = x + y
    return None if x.grad_fn is None else type(x.grad_fn).__name__


def analytic(x0: float, y0: float) -> None:
    # x was typed in, not computed: nothing produced it, so there is no backward to remember
    return None


EXERCISE = Exercise(
    title="Does a leaf have a recipe?",
    prompt=r"""
Same graph: `x` and `y` typed in, `z = x + y`. What is `x.grad_fn`? Give a class name as a
string, or `None`.
""",
    setup="""x = torch.tensor({{x0}}, requires_grad=True)
y = torch.tensor({{y0}}, requires_grad=True)
z = x + y""",
    answer="x_grad_fn",
    solution="x_grad_fn = x.grad_fn",
    kind=Choice(options=OPTIONS),
    params={"x0": 2.0, "y0": 3.0},
    hidden=({"x0": 1.5, "y0": -2.0},),
    draw=lambda rng: {"x0": rng.uniform(-5, 5), "y0": rng.uniform(-5, 5)},
    reference=reference,
    analytic=analytic,
    wrong=(
        Wrong("grad_fn_of_leaf", lambda x0, y0: "AccumulateGrad",
              "AccumulateGrad does appear in the graph next to x (look at "
              "z.grad_fn.next_functions), but it is a node of the graph, not x's grad_fn. x was "
              "not computed from anything, so x.grad_fn is None.",
              "Ask whether any operation produced x."),
        Wrong("grad_fn_of_leaf", lambda x0, y0: "AddBackward0",
              "AddBackward0 is attached to the output of the addition, z. The inputs of an "
              "operation do not change: x is still the raw number you typed in.",
              "grad_fn is stored on the result of an operation. Is x a result?"),
    ),
)
