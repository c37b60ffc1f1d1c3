"""Fix it: sinc(x) = sin(x)/x, with 1 at x = 0, written with torch.where, has a NaN gradient at 0.

torch.where(x != 0, torch.sin(x) / x, 1.0) computes sin(x)/x on every entry; at x = 0 its
backward multiplies where's 0 by the local derivative (x cos x - sin x)/x², which is 0/0 = NaN.
The repair, the double where, feeds the division a harmless 1 at the zeros. sinc is smooth, so
the true derivative (x cos x - sin x)/x², with limit 0 at 0, is also a finite-difference witness.
"""

import math

import torch

from autograder.harness import call, value_and_grad
from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong
from gradtutor.key.numeric import central_diff

NAN = float("nan")
EPS = 1e-8  # the "fix" of a small denominator shift


def _sinc_fixed(x: torch.Tensor) -> torch.Tensor:
    nonzero = x != 0
    safe = torch.where(nonzero, x, 1.0)
    return torch.where(nonzero, torch.sin(safe) / safe, 1.0)


def reference(x: list[float]) -> torch.Tensor:
    return value_and_grad(_sinc_fixed, x)


def _sinc(v: float) -> float:
    return math.sin(v) / v if v != 0 else 1.0


def _dsinc(v: float) -> float:
    return (v * math.cos(v) - math.sin(v)) / v**2 if v != 0 else 0.0


def analytic(x: list[float]) -> list[list[float]]:
    return [[_sinc(v) for v in x], [_dsinc(v) for v in x]]


def finite_diff(x: list[float]) -> list[list[float]]:
    # sinc is smooth everywhere (its series is 1 - x²/6 + ...), so differences are honest at 0 too
    return [[_sinc(v) for v in x], [central_diff(_sinc, v) for v in x]]


def _draw(rng) -> dict:
    x = [0.0, rng.uniform(-6, -0.5), rng.uniform(0.5, 6), rng.choice((0.0, rng.uniform(-6, 6)))]
    rng.shuffle(x)
    return {"x": x}


SETUP = '''x_values = {{x}}
from autograder.harness import value_and_grad   # what the grader runs: fn's values and the gradient of their sum'''

EXERCISE = Exercise(
    title="Fix it: a sinc whose gradient is NaN at 0",
    prompt=r"""
$\mathrm{sinc}(x) = \frac{\sin x}{x}$, with the value $1$ at $x = 0$, is smooth everywhere; its
slope at $0$ is $0$. A colleague wrote it like this:

```python
def sinc(x):
    return torch.where(x != 0, torch.sin(x) / x, 1.0)
```

The values are right, but `value_and_grad(sinc, x_values)` (setup cell) shows a NaN in the
gradient wherever $x = 0$. Repair `sinc` so that both rows, values and gradient, are right and
finite. The grader runs your `sinc` on `x_values = {{x}}` and on fresh inputs with zeros.
""",
    setup=SETUP,
    answer="sinc",
    call=call("value_and_grad(sinc, x_values)"),
    placeholder="def sinc(x):\n    return ...",
    solution="""def sinc(x):
    nonzero = x != 0
    safe = torch.where(nonzero, x, 1.0)          # the division never sees a 0
    return torch.where(nonzero, torch.sin(safe) / safe, 1.0)""",
    kind=Tensor(shape=(2, 4)),
    params={"x": [0.0, 1.5, -3.0, 0.0]},
    hidden=({"x": [2.0, 0.0, -0.5, 4.0]}, {"x": [0.0, -2.5, 0.25, 0.0]}),
    draw=_draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("where_nan",
              lambda x: [analytic(x)[0], [NAN if v == 0 else _dsinc(v) for v in x]],
              "This is the snippet as written. torch.where picks values, but both branches were "
              "computed on every entry: sin(x)/x ran at x = 0 too. In the backward pass where "
              "sends 0 to that branch at 0, and the division's backward multiplies it by "
              "(x cos x - sin x)/x², which is 0/0 there: 0 · NaN = NaN.",
              "Make sure the division never sees a 0: replace x by a harmless value first, "
              "inside the branch."),
        Wrong("where_nan", lambda x: value_and_grad(lambda t: torch.sin(t) / (t + EPS), x),
              "Adding a small epsilon to the denominator, sin(x) / (x + 1e-8), removes the NaN "
              "but not the problem: at x = 0 the value is sin(0)/1e-8 = 0 instead of 1, and the "
              "slope is cos(0)/1e-8 = 1e8 instead of 0. The where must stay; what it guards "
              "must change.",
              "Keep the where, and feed the division a harmless value at the zeros."),
    ),
)
