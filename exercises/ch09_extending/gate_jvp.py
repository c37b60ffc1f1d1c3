"""Forward mode through a custom Function: the gate out = x · sigmoid(y) with a jvp staticmethod,
which gets one tangent per input and returns the output's tangent, the sum of both inputs'
contributions: x_t · σ(y) + x · σ(y)(1 − σ(y)) · y_t."""

import random

import torch

from autograder.byhand import AUTOGRAD
from autograder.harness import jvp_report
from autograder.kinds import Bool, Table, Tensor
from gradtutor.key.exercise import Exercise, Wrong

from ._common import call, central, sigmoid

N = 3
KIND = Table(rows=("report",), columns=(
    ("value", Tensor(shape=(N,))), ("tangent", Tensor(shape=(N,))), ("gradcheck", Bool())))


class _Gate(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_forward(x, y)
        return x * torch.sigmoid(y)


class _OneInput(_Gate):
    @staticmethod
    def jvp(ctx, x_t, y_t):
        x, y = ctx.saved_tensors
        return x_t * torch.sigmoid(y)


class _OtherInput(_Gate):
    @staticmethod
    def jvp(ctx, x_t, y_t):
        x, y = ctx.saved_tensors
        s = torch.sigmoid(y)
        return x * s * (1 - s) * y_t


class _NoSigmoidSlope(_Gate):
    @staticmethod
    def jvp(ctx, x_t, y_t):
        x, y = ctx.saved_tensors
        s = torch.sigmoid(y)
        return x_t * s + x * s * y_t


def _run(apply):
    def value(x: list, y: list, tx: list, ty: list) -> dict:
        def f64(v: list) -> torch.Tensor:
            return torch.tensor(v, dtype=torch.float64)
        return jvp_report(apply, [f64(x), f64(y)], [f64(tx), f64(ty)])
    return value


def reference(x: list, y: list, tx: list, ty: list) -> dict:
    return _run(lambda a, b: a * torch.sigmoid(b))(x, y, tx, ty)  # torch's own forward mode


def _row(x: list, y: list, tangent: list) -> dict:
    return {"report": {"value": [a * sigmoid(b) for a, b in zip(x, y, strict=True)],
                       "tangent": tangent, "gradcheck": True}}


def analytic(x: list, y: list, tx: list, ty: list) -> dict:
    tangent = [u * sigmoid(b) + a * sigmoid(b) * (1 - sigmoid(b)) * v
               for a, b, u, v in zip(x, y, tx, ty, strict=True)]
    return _row(x, y, tangent)


def finite_diff(x: list, y: list, tx: list, ty: list) -> dict:
    # the directional derivative: move both inputs along their tangents at once
    tangent = [central(lambda s, a=a, b=b, u=u, v=v: (a + s * u) * sigmoid(b + s * v), 0.0)
               for a, b, u, v in zip(x, y, tx, ty, strict=True)]
    return _row(x, y, tangent)


def draw(rng: random.Random) -> dict:
    def some() -> list:
        return [rng.choice((-1, 1)) * rng.uniform(0.3, 2.5) for _ in range(N)]
    return {"x": some(), "y": some(), "tx": some(), "ty": some()}


EXERCISE = Exercise(
    title="Forward mode through your own Function",
    prompt=r"""
The gate $\mathrm{out} = x \odot \sigma(y)$ again, now for forward mode. Write `GateFwd`, a
`torch.autograd.Function` with `forward(ctx, x, y)` and a `jvp(ctx, x_t, y_t)` staticmethod
that you derive **by hand**: it receives the tangent of each input and returns the tangent of
the output, $J v$ for the direction $v = (x_t, y_t)$. Whatever `jvp` needs from `forward` must
be saved with `ctx.save_for_forward` (a `backward` is not asked for here).

The grader runs `jvp_report(GateFwd.apply, [x, y], [tx, ty])` with `x = {{x}}`, `y = {{y}}`,
tangents `tx = {{tx}}`, `ty = {{ty}}`, and at fresh inputs: it makes each input a dual tensor
carrying its tangent, reads the output's value and tangent, and runs `gradcheck`'s forward-mode
check. It compares with torch's own forward mode through `x * torch.sigmoid(y)`.
""",
    setup="""x = torch.tensor({{x}}, dtype=torch.float64)
y = torch.tensor({{y}}, dtype=torch.float64)
tx = torch.tensor({{tx}}, dtype=torch.float64)   # the tangent carried by x
ty = torch.tensor({{ty}}, dtype=torch.float64)   # the tangent carried by y
from autograder.harness import jvp_report   # what the grader runs""",
    answer="GateFwd",
    refuse=AUTOGRAD,  # the prompt says: backward derived by hand
    call=call("jvp_report(GateFwd.apply, [x, y], [tx, ty])"),
    placeholder="GateFwd = ...  # replace with your class GateFwd(torch.autograd.Function)",
    solution="""class GateFwd(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_forward(x, y)        # what jvp reads back from ctx.saved_tensors
        return x * torch.sigmoid(y)

    @staticmethod
    def jvp(ctx, x_t, y_t):
        x, y = ctx.saved_tensors
        s = torch.sigmoid(y)
        return x_t * s + x * s * (1 - s) * y_t   # both inputs move: their contributions add""",
    kind=KIND,
    params={"x": [1.0, -2.0, 0.5], "y": [0.0, 1.0, -1.5], "tx": [1.0, 0.5, -1.0], "ty": [0.5, -1.0, 2.0]},
    hidden=({"x": [2.0, 0.5, -1.0], "y": [-0.5, 2.0, 0.3], "tx": [-1.0, 1.5, 0.5], "ty": [1.0, 0.5, -2.0]},
            {"x": [-1.5, 1.0, 2.5], "y": [1.5, -2.0, 0.5], "tx": [0.5, -0.5, 1.0], "ty": [-1.5, 2.0, 0.5]}),
    draw=draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("jvp_sums_inputs", _run(_OneInput.apply),
              "The value is right, and the tangent holds x's contribution x_t · σ(y) only. In "
              "forward mode every input that moves moves the output: the output's tangent is "
              "the sum over the inputs of (partial derivative) × (that input's tangent), here "
              "two terms. jvp receives y_t for that reason.",
              "If only y moved (x_t = 0), would the output move? Which term says by how much?"),
        Wrong("jvp_sums_inputs", _run(_OtherInput.apply),
              "The value is right, and the tangent holds y's contribution x · σ'(y) · y_t only. "
              "In forward mode every input that moves moves the output: the output's tangent "
              "is the sum over the inputs of (partial derivative) × (that input's tangent), here "
              "two terms. jvp receives x_t for that reason.",
              "If only x moved (y_t = 0), would the output move? Which term says by how much?"),
        Wrong("sigmoid_derivative", _run(_NoSigmoidSlope.apply),
              "The tangent's y term here is x · σ(y) · y_t: the derivative of σ is missing. By "
              "the chain rule d(x σ(y))/dy = x σ'(y), and σ'(y) = σ(y)(1 − σ(y)).",
              "Differentiate σ(y) = 1 / (1 + e^{-y}) and write it in terms of σ(y)."),
    ),
)
