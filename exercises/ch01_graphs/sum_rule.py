"""Reference set 002, 2.1: z = x² + 5x at x = 3 gives dz/dx = 11."""

import torch

from autograder.kinds import Number
from gradtutor.key.exercise import Exercise, Wrong
from gradtutor.key.numeric import central_diff


def f(x: float) -> float:
    return x**2 + 5 * x


def reference(x0: float) -> torch.Tensor:
    x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    (x**2 + 5 * x).backward()
    return x.grad


EXERCISE = Exercise(
    title="Differentiate term by term",
    prompt=r"""
Let $z = x^2 + 5x$ with `x = torch.tensor({{x0}}, requires_grad=True)`. After `z.backward()`,
what is `x.grad`? Differentiate term by term on paper and write the result as an expression
of `x0` (the setup cell defines it): the grader also tries other values of `x0`.
""",
    setup="x0 = {{x0}}",
    answer="dz_dx",
    solution="""dz_dx = 2 * x0 + 5   # d(x²)/dx + d(5x)/dx""",
    by_hand=True,
    kind=Number(),
    params={"x0": 3.0},
    hidden=({"x0": -1.5}, {"x0": 0.8125}),
    draw=lambda rng: {"x0": rng.uniform(-6, 6)},
    reference=reference,
    analytic=lambda x0: 2 * x0 + 5,
    finite_diff=lambda x0: central_diff(f, x0),
    wrong=(
        Wrong("value_not_derivative", lambda x0: f(x0),
              "That is z itself, the value of the function at x0. x.grad holds the slope dz/dx: "
              "how much z changes per unit nudge of x.",
              "Differentiate each term first, then plug in x0."),
        Wrong("power_rule", lambda x0: x0 + 5,
              "The derivative of x² is 2x, not x: nudging x to x + h changes x² by 2xh + h², "
              "so the rate is 2x.",
              "Expand (x + h)² and keep the part proportional to h."),
        Wrong("chain_rule_dropped", lambda x0: 2 * x0,
              "The 5x term was dropped. A sum is differentiated term by term, and 5x "
              "contributes a slope of 5 everywhere.",
              "How much does 5x change when x moves by h?"),
    ),
)
