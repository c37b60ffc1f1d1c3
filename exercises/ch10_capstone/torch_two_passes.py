"""Our engine zeroes every gradient at the start of backward(); torch accumulates into leaves."""

import math

import torch

from autograder.kinds import Number
from gradtutor.key.exercise import Exercise, Wrong, value_instead


def _f(x):
    return math.tanh(x) * x


def _df(x):
    return (1 - math.tanh(x) ** 2) * x + math.tanh(x)


def reference(x0):
    x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    for _ in range(2):
        (torch.tanh(x) * x).backward()
    return x.grad


def analytic(x0):
    return 2 * _df(x0)


def finite_diff(x0, h=1e-6):
    return 2 * (_f(x0 + h) - _f(x0 - h)) / (2 * h)


EXERCISE = Exercise(
    title="Two backward passes in torch",
    prompt=r"""
The engine you built zeroes every gradient when `backward()` starts, so two passes give the
same `.grad` as one. Does torch? With $x = {{x0|pretty}}$ as a leaf that requires grad, build
$f = \tanh(x)\,x$ **twice** (a fresh graph each time) and call `backward()` on each.

Set `x_grad` to `x.grad` after the second call. Predict it before you run it.
""",
    setup="x0 = {{x0}}",
    answer="x_grad",
    solution="""x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
for _ in range(2):
    (torch.tanh(x) * x).backward()
x_grad = x.grad""",
    kind=Number(),
    params={"x0": 0.8},
    hidden=({"x0": -1.3}, {"x0": 2.1}),
    draw=lambda rng: {"x0": rng.choice((-1, 1)) * rng.uniform(0.3, 2.5)},
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("accumulation", lambda x0: _df(x0),
              "This is the gradient of one pass. torch does not zero a leaf's .grad when backward() "
              "starts: each pass adds into it, so after two passes it holds the sum. That is why a "
              "torch training loop calls optimizer.zero_grad() (or sets .grad = None) every step, "
              "and why our engine, which zeroes, does not need to.",
              "What does backward() do to a .grad that already holds a number?"),
        value_instead(lambda x0: _f(x0), "f = tanh(x)·x"),
    ),
)
