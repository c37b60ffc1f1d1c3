"""The straight-through estimator without a custom Function: round_ste(x) = x + (round(x) - x)
.detach() has round's values and the identity's gradient."""

import random

import torch

from autograder.kinds import Bool, Table, Tensor
from gradtutor.key.exercise import Exercise, Wrong

from ._common import call, function_report, report_row

N = 3
KIND = Table(rows=("report",), columns=(("value", Tensor(shape=(N,))), ("grad", Tensor(shape=(N,))),
                                        ("gradcheck", Bool())))


def _run(fn):
    def value(x: list, g: list) -> dict:
        return function_report(fn, [torch.tensor(x, dtype=torch.float64)], torch.tensor(g, dtype=torch.float64), second=False)
    return value


class _STE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.round(x)

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out


def reference(x: list, g: list) -> dict:
    return _run(_STE.apply)(x, g)


def analytic(x: list, g: list) -> dict:
    # round to nearest (x never at a .5 tie here); the identity gradient is not round's
    # derivative (0), so gradcheck fails
    return report_row([float(round(v)) for v in x], {"grad": list(g)}, False, None)


def draw(rng: random.Random) -> dict:
    return {"x": [rng.randint(-3, 3) + rng.uniform(-0.4, 0.4) for _ in range(N)],
            "g": [rng.choice((-1, 1)) * rng.uniform(0.5, 2) for _ in range(N)]}


EXERCISE = Exercise(
    title="Straight through round(), with detach",
    prompt=r"""
`torch.round` has gradient 0 almost everywhere, so nothing before it learns. Write
`round_ste(x)` (a plain function, no `autograd.Function`) whose **value** is `torch.round(x)`
and whose **gradient** is that of the identity, using `.detach()` to hide part of the
expression from autograd. With autograd.

The grader runs `function_report(round_ste, [x], g, second=False)` with `x = {{x}}`,
`g = {{g}}`, and at fresh inputs.
""",
    setup="""x = torch.tensor({{x}}, dtype=torch.float64)
g = torch.tensor({{g}}, dtype=torch.float64)   # the gradient arriving at the output
from autograder.harness import function_report   # what the grader runs""",
    answer="round_ste",
    call=call("function_report(round_ste, [x], g, second=False)"),
    placeholder="def round_ste(x):\n    return ...",
    solution="""def round_ste(x):
    return x + (torch.round(x) - x).detach()   # value: round(x); gradient: that of x""",
    kind=KIND,
    params={"x": [0.3, 1.7, -2.2], "g": [1.0, -0.5, 2.0]},
    hidden=({"x": [-0.8, 2.4, 0.1], "g": [0.5, 1.5, -1.0]}, {"x": [3.3, -1.4, 0.6], "g": [-2.075, 1.0375, 0.5188]}),
    draw=draw,
    reference=reference,
    analytic=analytic,
    wrong=(
        Wrong("round_zero_gradient", _run(torch.round),
              "This is torch.round itself: right values, but its derivative is 0 between the "
              "jumps, so the gradient is all zeros (and gradcheck passes, since 0 is the true "
              "slope). The straight-through estimator keeps round's values and uses the "
              "identity's gradient instead.",
              "Write the value as x plus a correction, and hide only the correction from "
              "autograd."),
        Wrong("detach_cuts_path", _run(lambda t: t.detach() + (torch.round(t) - t)),
              "The detach is on the wrong term: x.detach() + (round(x) - x) has round's values, "
              "but its gradient is the gradient of round(x) - x, which is -1 everywhere, not +1.",
              "Which part must autograd see: x itself, or the correction round(x) - x?"),
    ),
)
