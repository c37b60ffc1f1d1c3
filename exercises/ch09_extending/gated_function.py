"""A fused op of two inputs as a custom Function: out = x · sigmoid(y), the gate of GLU-style
layers. backward returns one gradient per input, in order: (g·σ(y), g·x·σ(y)(1 − σ(y)))."""

import random

import torch

from autograder.byhand import AUTOGRAD
from autograder.kinds import Bool, Table, Tensor
from gradtutor.key.exercise import Exercise, Wrong

from ._common import call, central, function_report, report_row, sigmoid

N = 3
KIND = Table(rows=("report",), columns=(
    ("value", Tensor(shape=(N,))), ("grad_x", Tensor(shape=(N,))), ("grad_y", Tensor(shape=(N,))),
    ("gradcheck", Bool()), ("gradgradcheck", Bool())))


class _Gate(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * torch.sigmoid(y)


class _Swapped(_Gate):
    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        s = torch.sigmoid(y)
        return g * x * s * (1 - s), g * s


class _NoSigmoidSlope(_Gate):
    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        s = torch.sigmoid(y)
        return g * s, g * x * s


class _SavedIntermediate(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        s = torch.sigmoid(y)   # made inside forward, where autograd records nothing
        ctx.save_for_backward(x, s)
        return x * s

    @staticmethod
    def backward(ctx, g):
        x, s = ctx.saved_tensors
        return g * s, g * x * s * (1 - s)


def _run(apply):
    def value(x: list, y: list, g: list) -> dict:
        return function_report(apply, [torch.tensor(x, dtype=torch.float64), torch.tensor(y, dtype=torch.float64)], torch.tensor(g, dtype=torch.float64))
    return value


def reference(x: list, y: list, g: list) -> dict:
    return _run(lambda a, b: a * torch.sigmoid(b))(x, y, g)


def _value(x: list, y: list) -> list:
    return [a * sigmoid(b) for a, b in zip(x, y, strict=True)]


def analytic(x: list, y: list, g: list) -> dict:
    gx = [w * sigmoid(b) for b, w in zip(y, g, strict=True)]
    gy = [w * a * sigmoid(b) * (1 - sigmoid(b)) for a, b, w in zip(x, y, g, strict=True)]
    return report_row(_value(x, y), {"grad_x": gx, "grad_y": gy}, True)


def finite_diff(x: list, y: list, g: list) -> dict:
    gx = [w * central(lambda t, b=b: t * sigmoid(b), a) for a, b, w in zip(x, y, g, strict=True)]
    gy = [w * central(lambda t, a=a: a * sigmoid(t), b) for a, b, w in zip(x, y, g, strict=True)]
    return report_row(_value(x, y), {"grad_x": gx, "grad_y": gy}, True)


def draw(rng: random.Random) -> dict:
    def some() -> list:
        return [rng.choice((-1, 1)) * rng.uniform(0.3, 2.5) for _ in range(N)]
    return {"x": some(), "y": some(), "g": some()}


EXERCISE = Exercise(
    title="A fused op of two inputs: x · sigmoid(y)",
    prompt=r"""
Gated layers (GLU, SwiGLU) multiply one tensor by a squashed other: $\mathrm{out} = x \odot
\sigma(y)$. Fusing it into one `torch.autograd.Function` saves one intermediate. Write
`Gate` with `forward(ctx, x, y)` and a `backward` you derive **by hand**, returning one
gradient per input of `forward`, in the same order. Use `ctx.needs_input_grad` to skip the
work for an input that does not need a gradient (return `None` for it), and keep `backward`
differentiable: `gradgradcheck` must pass too.

The grader runs `function_report(Gate.apply, [x, y], g)` with `x = {{x}}`, `y = {{y}}`,
`g = {{g}}`, and at fresh inputs; it compares with `x * torch.sigmoid(y)`.
""",
    setup="""x = torch.tensor({{x}}, dtype=torch.float64)
y = torch.tensor({{y}}, dtype=torch.float64)
g = torch.tensor({{g}}, dtype=torch.float64)   # the gradient arriving at the output
from autograder.harness import function_report   # what the grader runs""",
    answer="Gate",
    call=call("function_report(Gate.apply, [x, y], g)"),
    placeholder="Gate = ...  # replace with your class Gate(torch.autograd.Function)",
    solution="""class Gate(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)   # inputs, so a second backward can reach them
        return x * torch.sigmoid(y)

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        s = torch.sigmoid(y)
        grad_x = grad_y = None
        if ctx.needs_input_grad[0]:
            grad_x = g * s
        if ctx.needs_input_grad[1]:
            grad_y = g * x * s * (1 - s)   # σ'(y) = σ(y)(1 − σ(y))
        return grad_x, grad_y""",
    refuse=AUTOGRAD,
    kind=KIND,
    params={"x": [1.0, -2.0, 0.5], "y": [0.0, 1.0, -1.5], "g": [1.0, 0.5, -2.0]},
    hidden=({"x": [2.0, 0.5, -1.0], "y": [-0.5, 2.0, 0.3], "g": [-1.0, 1.5, 1.0]},
            {"x": [-1.5, 1.0, 2.5], "y": [1.5, -2.0, 0.5], "g": [0.5, -1.0, 2.0]}),
    draw=draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("custom_grad_order", _run(_Swapped.apply),
              "The two gradients are right but swapped: backward returns them in the order of "
              "forward's inputs, (dL/dx, dL/dy). Autograd matches them by position, not by "
              "name, and with equal shapes nothing warns you.",
              "Which input is first in forward(ctx, x, y)? Which gradient must come first?"),
        Wrong("sigmoid_derivative", _run(_NoSigmoidSlope.apply),
              "grad_y here is g · x · σ(y): the derivative of σ is missing. By the chain rule "
              "d(x σ(y))/dy = x σ'(y), and σ'(y) = σ(y)(1 − σ(y)).",
              "Differentiate σ(y) = 1 / (1 + e^{-y}) and write it in terms of σ(y)."),
        Wrong("saved_intermediate", _run(_SavedIntermediate.apply),
              "Values and first gradients are right, but gradgradcheck fails. σ(y) was computed "
              "inside forward, where autograd records nothing, and then saved: to the second "
              "backward it is a constant with no path back to y, so the y-dependence of grad_x "
              "is lost. Save the inputs (or forward's outputs) and recompute σ(y) in backward, "
              "where the operations are recorded when create_graph=True.",
              "Which saved tensor has no history back to y?"),
    ),
)
