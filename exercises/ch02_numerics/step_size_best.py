"""The best step for a central difference in float64 is near 1e-5, not the smallest one.

Truncation error falls like h², rounding error grows like ε·|f|/h (ε ≈ 2.2e-16), so the total is
smallest near h ≈ ε^(1/3) ≈ 6e-6. On f of the micrograd exercise, df/db at 1e-11 is worse than at
1e-3 (content-map M33).
"""

import math
from collections.abc import Callable

import torch

from autograder.kinds import Number
from gradtutor.key.exercise import Exercise, Wrong

STEPS = (1e-1, 1e-3, 1e-5, 1e-8, 1e-11, 1e-14)


def _errors(f: Callable[[float], float], exact: float, b0: float) -> list[float]:
    return [abs((f(b0 + h) - f(b0 - h)) / (2 * h) - exact) for h in STEPS]


def reference(a0: float, b0: float, c0: float) -> float:
    def f(b: float) -> float:
        t = torch.tensor(b, dtype=torch.float64)
        return (-(a0**3) + torch.sin(3 * t) - 1 / c0 + t**2.5 - a0**0.5).item()

    b = torch.tensor(b0, dtype=torch.float64, requires_grad=True)
    (-(a0**3) + torch.sin(3 * b) - 1 / c0 + b**2.5 - a0**0.5).backward()
    errors = _errors(f, b.grad.item(), b0)
    return STEPS[errors.index(min(errors))]


def analytic(a0: float, b0: float, c0: float) -> float:
    # the same experiment with math.sin and the hand-derived derivative, no torch at all
    def f(b: float) -> float:
        return -(a0**3) + math.sin(3 * b) - 1 / c0 + b**2.5 - a0**0.5

    errors = _errors(f, 3 * math.cos(3 * b0) + 2.5 * b0**1.5, b0)
    return STEPS[errors.index(min(errors))]


EXERCISE = Exercise(
    title="Is a smaller step always better?",
    prompt=r"""
Back to $f(a, b, c) = -a^3 + \sin(3b) - \frac{1}{c} + b^{2.5} - a^{0.5}$ at
$a = {{a0|pretty}}$, $b = {{b0|pretty}}$, $c = {{c0|pretty}}$. Estimate
$\frac{\partial f}{\partial b}$ with the central difference in float64, once for each step in
`steps` (from the setup cell), and compare each estimate with the exact derivative. Which step
gives the **smallest absolute error**? Give that step as a number, e.g. `best_h = steps[0]`.
""",
    setup="a0, b0, c0 = {{a0}}, {{b0}}, {{c0}}\nsteps = " + repr(list(STEPS)),
    answer="best_h",
    solution="""import math

def f(b):
    return -a0**3 + math.sin(3 * b) - 1 / c0 + b**2.5 - a0**0.5

exact = 3 * math.cos(3 * b0) + 2.5 * b0**1.5
step_errors = [abs((f(b0 + h) - f(b0 - h)) / (2 * h) - exact) for h in steps]
best_h = steps[step_errors.index(min(step_errors))]""",
    kind=Number(rtol=1e-6, atol=0.0),
    params={"a0": 2.0, "b0": 3.0, "c0": 4.0},
    hidden=({"a0": 1.5, "b0": 0.8, "c0": -2.5},),
    draw=lambda rng: {"a0": rng.uniform(0.5, 3), "b0": rng.uniform(0.5, 3),
                      "c0": rng.choice([-1, 1]) * rng.uniform(1, 4)},
    reference=reference,
    analytic=analytic,
    wrong=(
        Wrong("finite_diff_step", lambda a0, b0, c0: min(STEPS),
              "The smallest step gives one of the worst estimates. f(b + h) and f(b - h) are stored with "
              "about 16 significant digits; with a tiny h they agree in almost all of them, and "
              "the subtraction leaves mostly rounding noise, which the division by 2h then "
              "magnifies. The error of a central difference is about h²·|f'''|/6 + ε·|f|/h.",
              "Print the error for every step: where does it stop shrinking and start growing?"),
        Wrong("forward_difference", lambda a0, b0, c0: 1e-8,
              "h ≈ 1e-8 (the square root of ε) is the best step for a forward difference, whose "
              "truncation error shrinks only like h. The central difference is second-order, so "
              "it can afford a larger step, and its best step sits near ε^(1/3).",
              "Balance h² against ε/h rather than h against ε/h."),
        Wrong("finite_diff_step", lambda a0, b0, c0: max(STEPS),
              "The largest step is far too coarse: the h² term of the Taylor expansion "
              "dominates. A step must be small enough for f to look straight over [b - h, b + h].",
              "Print the error for every step and compare the first two."),
    ),
)
