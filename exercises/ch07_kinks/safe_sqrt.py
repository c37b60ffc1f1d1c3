"""Write a square root that is 0 for x <= 0 and whose gradient never holds NaN: the double where.

safe_sqrt(x) = where(x > 0, sqrt(where(x > 0, x, 1)), 0): the inner where feeds sqrt a harmless
1 wherever the result is not used, so its backward multiplies 0 by a finite slope. Graded on
fresh inputs that include zeros and negative numbers.
"""

import math

import torch

from autograder.harness import call, value_and_grad
from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong

NAN = float("nan")


def _double_where(x: torch.Tensor) -> torch.Tensor:
    positive = x > 0
    return torch.where(positive, torch.where(positive, x, 1.0).sqrt(), 0.0)


def reference(x: list[float]) -> torch.Tensor:
    return value_and_grad(_double_where, x)


def analytic(x: list[float]) -> list[list[float]]:
    # sqrt(v) and 1/(2 sqrt(v)) where v > 0; the constant 0 (slope 0) elsewhere
    return [[math.sqrt(v) if v > 0 else 0.0 for v in x],
            [0.5 / math.sqrt(v) if v > 0 else 0.0 for v in x]]


def _values_with_grads(grad_of) -> callable:
    return lambda x: [analytic(x)[0], [grad_of(v) for v in x]]


def _draw(rng) -> dict:
    x = [0.0, -rng.uniform(0.1, 5), rng.uniform(0.1, 9), rng.choice((0.0, rng.uniform(0.1, 9)))]
    rng.shuffle(x)
    return {"x": x}


# No finite_diff witness: at 0 the function has a corner (slope infinite from the right,
# 0 from the left), and the value 0 for the gradient there is the convention we choose.

SETUP = '''x_values = {{x}}
from autograder.harness import value_and_grad   # what the grader runs: fn's values and the gradient of their sum'''

EXERCISE = Exercise(
    title="Write a square root that is safe in both directions",
    prompt=r"""
Write a function `safe_sqrt(x)` that returns $\sqrt{x}$ where $x > 0$ and $0$ where
$x \le 0$, **and** whose gradient is $\frac{1}{2\sqrt{x}}$ where $x > 0$ and exactly $0$
elsewhere: no `inf`, no NaN, even at $x = 0$.

The grader calls `value_and_grad(safe_sqrt, x_values)` (defined in the setup cell) with
`x_values = {{x}}` and with fresh inputs that include zeros and negative numbers, and compares
both rows: the values and the gradient.
""",
    setup=SETUP,
    answer="safe_sqrt",
    call=call("value_and_grad(safe_sqrt, x_values)"),
    placeholder="def safe_sqrt(x):\n    return ...",
    solution="""def safe_sqrt(x):
    positive = x > 0
    # the inner where hands sqrt a harmless 1 wherever its result will be thrown away
    return torch.where(positive, torch.where(positive, x, 1.0).sqrt(), 0.0)""",
    kind=Tensor(shape=(2, 4)),
    params={"x": [0.0, 4.0, -1.0, 2.25]},
    hidden=({"x": [-4.0, 0.0, 1.0, 0.0]}, {"x": [0.0, 0.0, 16.0, -2.5]}),
    draw=_draw,
    reference=reference,
    analytic=analytic,
    wrong=(
        Wrong("where_nan", _values_with_grads(lambda v: 0.5 / math.sqrt(v) if v > 0 else NAN),
              "This is the single where, torch.where(x > 0, x.sqrt(), 0). The forward values "
              "are right, but x.sqrt() still runs on every entry, and its backward multiplies "
              "the 0 coming from where() by an infinite (x = 0) or NaN (x < 0) slope.",
              "Make sure sqrt never sees an input <= 0 in the first place: choose its input "
              "with a where of its own."),
        Wrong("sqrt_slope_at_zero",
              _values_with_grads(lambda v: 0.5 / math.sqrt(v) if v > 0 else
                                 math.inf if v == 0 else 0.0),
              "This is x.clamp(min=0).sqrt(). Negative entries are safe now (clamp sends them "
              "gradient 0), but at exactly 0 clamp passes the gradient on with slope 1 and "
              "sqrt's slope at 0 is infinite.",
              "The input that sqrt sees at a 'switched off' entry must be strictly positive."),
        Wrong("where_nan",
              lambda x: [[math.sqrt(v) if v > 0 else 1.0 for v in x],
                         [0.5 / math.sqrt(v) if v > 0 else 0.0 for v in x]],
              "The gradient is safe, but the values are wrong: where(x > 0, x, 1).sqrt() "
              "returns 1 at every non-positive entry. The inner where protects sqrt; an outer "
              "where is still needed to put the 0 back.",
              "Two wheres: one to choose sqrt's input, one to choose the output."),
    ),
)
