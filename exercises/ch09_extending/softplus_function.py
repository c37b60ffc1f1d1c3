"""Write a numerically stable softplus as a custom Function: forward max(x, 0) + log1p(e^{-|x|}),
backward sigmoid(x) · grad_out, differentiable twice. Graded on inputs that overflow e^x."""

import math
import random

import torch
import torch.nn.functional as F

from autograder.byhand import AUTOGRAD
from autograder.kinds import Bool, Table, Tensor
from gradtutor.key.exercise import Exercise, Wrong

from ._common import call, central, function_report, report_row, sigmoid, softplus

N = 3
KIND = Table(rows=("report",), columns=(("value", Tensor(shape=(N,))), ("grad", Tensor(shape=(N,))),
                                        ("gradcheck", Bool()), ("gradgradcheck", Bool())))


class _Naive(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.log(1 + torch.exp(x))

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.exp(x) / (1 + torch.exp(x))


class _Stable(torch.autograd.Function):
    """The right forward, with a backward of the caller's choosing (set by subclasses)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.clamp(x, min=0) + torch.log1p(torch.exp(-torch.abs(x)))


class _Detached(_Stable):
    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.sigmoid(x.detach())


class _NaiveBackward(_Stable):
    """Half fixed: the stable forward, the backward still as it reads."""

    backward = staticmethod(_Naive.backward)


class _NaiveForward(_Naive):
    """Half fixed: a stable backward, the forward still as it reads."""

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.sigmoid(x)


class _Flipped(_Stable):
    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.sigmoid(-x)


def _run(apply):
    def value(x: list, g: list) -> dict:
        return function_report(apply, [torch.tensor(x, dtype=torch.float64)], torch.tensor(g, dtype=torch.float64))
    return value


def reference(x: list, g: list) -> dict:
    return _run(F.softplus)(x, g)


def analytic(x: list, g: list) -> dict:
    return report_row([softplus(v) for v in x],
                      {"grad": [sigmoid(v) * w for v, w in zip(x, g, strict=True)]}, True)


def finite_diff(x: list, g: list) -> dict:
    return report_row([softplus(v) for v in x],
                      {"grad": [central(softplus, v) * w for v, w in zip(x, g, strict=True)]}, True)


def draw(rng: random.Random) -> dict:
    # one input beyond log(max float64) ≈ 709.8, where e^x overflows
    return {"x": [rng.uniform(-4, 4), rng.uniform(-40, -10), rng.uniform(720, 900)],
            "g": [rng.choice((-1, 1)) * rng.uniform(0.5, 2) for _ in range(N)]}


EXERCISE = Exercise(
    title="A numerically stable softplus, forward and backward",
    prompt=r"""
$\mathrm{softplus}(x) = \log(1 + e^x)$ is a smooth relu. Written as it reads, it overflows:
in float64 $e^x$ is `inf` once $x > \log(\text{max float64}) \approx """
    + f"{math.log(torch.finfo(torch.float64).max):.1f}" + r"""$.

Write a `torch.autograd.Function` called `Softplus` whose `forward` is stable for every $x$
(rewrite $\log(1+e^x)$ so that nothing you exponentiate is positive) and whose `backward` you
derive **by hand**: $\frac{d}{dx}\log(1+e^x)$, written so that it cannot overflow either.
Save what `backward` needs with `ctx.save_for_backward`, and build `backward` from torch
operations, so that it can itself be differentiated (`gradgradcheck`).

The grader runs `function_report(Softplus.apply, [x], g)` with `x = {{x}}`, `g = {{g}}`, and
at fresh inputs, one of them always above $709.8$; it compares with
`torch.nn.functional.softplus`.
""",
    setup="""x = torch.tensor({{x}}, dtype=torch.float64)
g = torch.tensor({{g}}, dtype=torch.float64)   # the gradient arriving at the output
from autograder.harness import function_report   # what the grader runs""",
    answer="Softplus",
    call=call("function_report(Softplus.apply, [x], g)"),
    placeholder="Softplus = ...  # replace with your class Softplus(torch.autograd.Function)",
    solution="""class Softplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        # log(1 + e^x) = max(x, 0) + log(1 + e^{-|x|}): the exponent is never positive
        return torch.clamp(x, min=0) + torch.log1p(torch.exp(-torch.abs(x)))

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.sigmoid(x)   # e^x / (1 + e^x), computed stably by torch""",
    refuse=AUTOGRAD,
    kind=KIND,
    params={"x": [-2.0, 0.5, 800.0], "g": [1.0, -2.0, 0.5]},
    hidden=({"x": [3.0, -30.0, 750.0], "g": [0.5, 1.0, -1.0]}, {"x": [0.0, -50.0, 710.0], "g": [2.0, -0.5, 1.5]}),
    draw=draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("softplus_overflow", _run(_Naive.apply),
              "log(1 + exp(x)) as written: exp(800) is inf in float64, so the value is inf, "
              "and the backward exp(x) / (1 + exp(x)) is inf / inf = nan. The maths is right; "
              "the order of operations overflows.",
              "For x > 0, factor e^x out of 1 + e^x. What is left inside the log?"),
        # half fixed: each says only what is still wrong (the other half is right)
        Wrong("softplus_overflow", _run(_NaiveBackward.apply),
              "Your forward is stable now, but the backward still computes e^x / (1 + e^x): at "
              "an input above 709.8 both are inf in float64, and inf / inf is nan. The "
              "derivative overflows the way the forward did.",
              "Rewrite the derivative the way you rewrote the forward: so that nothing you "
              "exponentiate is positive."),
        Wrong("softplus_overflow", _run(_NaiveForward.apply),
              "Your backward is stable, but the forward still computes log(1 + e^x): above "
              "709.8, e^x is inf in float64, and so is the value.",
              "For x > 0, factor e^x out of 1 + e^x. What is left inside the log?"),
        Wrong("backward_not_differentiable", _run(_Detached.apply),
              "The first derivative is right (gradcheck passes), but the backward computes it "
              "from x.detach(), so the gradient has no graph back to x and its own derivative "
              "comes out wrong: gradgradcheck fails. The same happens with .numpy(), .item() "
              "or torch.no_grad() inside backward. Inside backward, autograd records the torch "
              "operations you run on the saved tensors, as long as you do not cut them off.",
              "Build backward from torch operations on the saved tensor itself."),
        Wrong("sign_error", _run(_Flipped.apply),
              "This backward returns sigmoid(-x) · grad_out = grad_out / (1 + e^x): the "
              "derivative of log(1 + e^{-x}), not of log(1 + e^x). softplus rises with x, so "
              "its slope goes to 1 for large x and to 0 for very negative x.",
              "Check your derivative at x = 800: should the slope be near 0 or near 1?"),
    ),
)
