"""Reference set 002 (b): the grad_fn of z = x + y is AddBackward0."""

import torch

from autograder.kinds import Choice
from gradtutor.key.exercise import Exercise, Wrong

OPTIONS = (None, "AddBackward0", "MulBackward0", "SumBackward0", "AccumulateGrad", "AddBackward")


def reference(x0: float, y0: float) -> str:
    x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    y = torch.tensor(y0, dtype=torch.float64, requires_grad=True)
    return type((x + y).grad_fn).__name__


def analytic(x0: float, y0: float) -> str:
    # a tensor made by an operation remembers that operation's backward: + gives AddBackward0
    return "AddBackward0"


EXERCISE = Exercise(
    title="The recipe card of z",
    prompt=r"""
With `x` and `y` as in the setup and `z = x + y`, what is `z.grad_fn`? Give the name of its
class as a string (for example `"SomethingBackward0"`), or `None` if `z` has no `grad_fn`.
""",
    setup="""x = torch.tensor({{x0}}, requires_grad=True)
y = torch.tensor({{y0}}, requires_grad=True)
z = x + y""",
    answer="z_grad_fn",
    solution="z_grad_fn = type(z.grad_fn).__name__",
    kind=Choice(options=OPTIONS),
    params={"x0": 2.0, "y0": 3.0},
    hidden=({"x0": -0.5, "y0": 4.0},),
    draw=lambda rng: {"x0": rng.uniform(-5, 5), "y0": rng.uniform(-5, 5)},
    reference=reference,
    analytic=analytic,
    wrong=(
        Wrong("grad_fn_of_leaf", lambda x0, y0: None,
              "Only leaves have no grad_fn. z came out of an operation, so autograd attached the "
              "backward of that operation to it, the recipe for sending gradients back to x and y.",
              "Does z have an arrow pointing into its box?"),
        Wrong("grad_fn_name", lambda x0, y0: "AccumulateGrad",
              "AccumulateGrad is the node that deposits gradients into a leaf's .grad; it sits "
              "behind x and y, not on z. z's grad_fn is named after the operation that made it.",
              "Name the operation that produced z, then add PyTorch's Backward suffix."),
        Wrong("grad_fn_name", lambda x0, y0: "SumBackward0",
              "SumBackward0 belongs to a reduction such as z.sum(). Adding two tensors with + is "
              "a different operation with a different backward node.",
              "Which function does the + operator call: torch.add or torch.sum?"),
    ),
)
