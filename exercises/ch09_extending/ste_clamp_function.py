"""A clamp whose backward is straight-through: forward clamps to [lo, hi], backward passes the
incoming gradient unchanged. gradcheck fails on purpose (the backward is not the derivative
outside [lo, hi]); the reference is torch's detach trick x + (clamp(x) - x).detach()."""

import random

import torch

from autograder.byhand import AUTOGRAD
from autograder.kinds import Bool, Table, Tensor
from gradtutor.key.exercise import Exercise, Wrong

from ._common import call, function_report, report_row

N = 4
KIND = Table(rows=("report",), columns=(("value", Tensor(shape=(N,))), ("grad", Tensor(shape=(N,))),
                                        ("gradcheck", Bool())))


class _TrueClamp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lo, hi):
        ctx.save_for_backward(x)
        ctx.lo, ctx.hi = lo, hi
        return x.clamp(lo, hi)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        inside = (x >= ctx.lo) & (x <= ctx.hi)
        return grad_out * inside, None, None


class _NoneBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lo, hi):
        return x.clamp(lo, hi)

    @staticmethod
    def backward(ctx, grad_out):
        return None, None, None


def _run(apply):
    def value(x: list, g: list, lo: float, hi: float) -> dict:
        return function_report(lambda t: apply(t, lo, hi), [torch.tensor(x, dtype=torch.float64)], torch.tensor(g, dtype=torch.float64),
                               second=False)
    return value


def _detach_trick(t, lo, hi):
    return t + (t.clamp(lo, hi) - t).detach()


def reference(x: list, g: list, lo: float, hi: float) -> dict:
    return _run(_detach_trick)(x, g, lo, hi)


def _clamped(x: list, lo: float, hi: float) -> list:
    return [min(max(v, lo), hi) for v in x]


def analytic(x: list, g: list, lo: float, hi: float) -> dict:
    # the backward is the identity, which is the derivative only inside [lo, hi]; every
    # variant has an input outside, so the numerical Jacobian (0 there) disagrees
    outside = any(v < lo or v > hi for v in x)
    return report_row(_clamped(x, lo, hi), {"grad": list(g)}, not outside, None)


def draw(rng: random.Random) -> dict:
    lo, hi = -rng.uniform(0.5, 1.5), rng.uniform(0.5, 1.5)
    x = [rng.uniform(lo - 2, lo - 0.2), rng.uniform(lo + 0.1, hi - 0.1), rng.uniform(hi + 0.2, hi + 2),
         rng.uniform(lo + 0.1, hi - 0.1)]
    return {"x": x, "g": [rng.choice((-1, 1)) * rng.uniform(0.5, 2) for _ in range(N)],
            "lo": lo, "hi": hi}


EXERCISE = Exercise(
    title="A clamp with a straight-through backward",
    prompt=r"""
Quantisation-aware training clamps (or rounds) values in the forward pass, but wants the
gradient to flow **as if the operation were the identity**: the *straight-through estimator*.
Write a `torch.autograd.Function` called `ClampSTE` with `forward(ctx, x, lo, hi)` returning
`x.clamp(lo, hi)` and a `backward` that passes the incoming gradient through unchanged.
`lo` and `hi` are plain numbers: `backward` must still return one gradient per input of
`forward` (what is the gradient of a number that is not a tensor?).

The grader runs
`function_report(lambda t: ClampSTE.apply(t, lo, hi), [x], g, second=False)` with
`x = {{x}}`, `g = {{g}}`, `lo = {{lo}}`, `hi = {{hi}}`, and at fresh inputs. Before you run
it, predict what `gradcheck` will say about your (correct) class.
""",
    setup="""x = torch.tensor({{x}}, dtype=torch.float64)
g = torch.tensor({{g}}, dtype=torch.float64)   # the gradient arriving at the output
lo, hi = {{lo}}, {{hi}}
from autograder.harness import function_report   # what the grader runs""",
    answer="ClampSTE",
    call=call("function_report(lambda t: ClampSTE.apply(t, lo, hi), [x], g, second=False)"),
    placeholder="ClampSTE = ...  # replace with your class ClampSTE(torch.autograd.Function)",
    solution="""class ClampSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lo, hi):
        return x.clamp(lo, hi)

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out, None, None   # straight through; lo and hi get no gradient""",
    refuse=AUTOGRAD,
    kind=KIND,
    params={"x": [-3.0, 0.25, 2.5, -0.5], "g": [1.0, -2.0, 0.5, 1.5], "lo": -1.0, "hi": 1.0},
    hidden=({"x": [0.1, -2.0, 0.9, 4.0], "g": [-1.0, 0.5, 2.0, 1.0], "lo": -0.5, "hi": 1.5},
            {"x": [5.1875, -0.2075, -4.15, 0.6225], "g": [2.0, 1.0, -1.5, 0.5], "lo": -1.0, "hi": 2.0}),
    draw=draw,
    reference=reference,
    analytic=analytic,
    wrong=(
        Wrong("straight_through", _run(_TrueClamp.apply),
              "This backward is the clamp's true derivative: the gradient is zeroed wherever x "
              "was clamped, and gradcheck passes. A straight-through estimator deliberately "
              "replaces that derivative with the identity, so that clamped inputs still learn; "
              "gradcheck fails for it by design, since it compares with the true derivative.",
              "What does 'straight through' mean for the entries outside [lo, hi]?"),
        Wrong("backward_none_is_zero", _run(_NoneBackward.apply),
              "Returning None from backward does not pass the gradient through: None means "
              "'no gradient for this input', which autograd treats as zero, so x gets nothing "
              "(torch.autograd.grad returns None for it). Return grad_out for x and None only "
              "for lo and hi.",
              "Which of backward's return values belongs to x?"),
    ),
)
