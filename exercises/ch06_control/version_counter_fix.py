"""Fix it: scaling sigmoid's output in place breaks backward; the version counter says so.

y = x.sigmoid(); y.mul_(k): SigmoidBackward saved y itself (its derivative is y(1 - y)), and
mul_ bumped y's version, so backward raises "one of the variables needed for gradient
computation has been modified by an inplace operation". The repair is out of place, y = y * k:
the gradient of sum(k σ(x)) is k σ(x)(1 - σ(x)). Hiding the change with y.data.mul_(k) runs, and
returns k σ (1 - k σ): the backward reads the altered output and the scaling is not recorded.
"""

import math

import torch

from autograder.harness import call
from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong
from gradtutor.key.numeric import central_diff

N = 3


def _sigmoid(v: float) -> float:
    return 1 / (1 + math.exp(-v))


def reference(x: list[float], k: float) -> torch.Tensor:
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    (t.sigmoid() * k).sum().backward()
    return t.grad


def analytic(x: list[float], k: float) -> list[float]:
    return [k * _sigmoid(v) * (1 - _sigmoid(v)) for v in x]


def finite_diff(x: list[float], k: float) -> list[float]:
    return [central_diff(lambda u: k * _sigmoid(u), v) for v in x]


def _draw(rng) -> dict:
    return {"x": [rng.uniform(-3, 3) for _ in range(N)], "k": rng.choice((-1, 1)) * rng.uniform(1.5, 4)}


SETUP = '''x_values, k = {{x}}, {{k}}
from autograder.harness import grads_of as grad_of   # what the grader runs: fn on a fresh x, backward(), x.grad'''

EXERCISE = Exercise(
    title="Fix it: an in-place scale that backward refuses",
    prompt=r"""
This function scales a sigmoid in place, and `backward()` on its result raises a `RuntimeError`
about a variable "modified by an inplace operation":

```python
def scaled_sigmoid_sum(x):
    y = x.sigmoid()
    y.mul_(k)
    return y.sum()
```

Run `grad_of(scaled_sigmoid_sum, x_values)` (setup cell) in a `try` to see the message. What
does the error protect you from? Repair the function so that `backward()` runs **and** gives the
true gradient of $\sum_i k\,\sigma(x_i)$. The grader calls `grad_of(scaled_sigmoid_sum, x_values)`
with `x_values = {{x}}`, $k = {{k|pretty}}$, and with fresh values.
""",
    setup=SETUP,
    answer="scaled_sigmoid_sum",
    call=call("grads_of(scaled_sigmoid_sum, x_values)"),
    placeholder="def scaled_sigmoid_sum(x):\n    return ...",
    solution="""def scaled_sigmoid_sum(x):
    y = x.sigmoid()
    y = y * k          # out of place: the y that SigmoidBackward saved stays as it was
    return y.sum()""",
    kind=Tensor(shape=(N,)),
    params={"x": [0.5, -1.0, 2.0], "k": 3.0},
    hidden=({"x": [-2.0, 0.0, 1.5], "k": -2.0}, {"x": [1.0, 3.0, -0.5], "k": 2.5}),
    draw=_draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("data_silent",
              lambda x, k: [k * _sigmoid(v) * (1 - k * _sigmoid(v)) for v in x],
              "This is y.data.mul_(k): no error, wrong numbers, exactly what the version counter "
              "exists to prevent. Changes through .data do not bump the version, so "
              "SigmoidBackward computes y(1 - y) from the altered output k·σ, and the scaling "
              "itself is not recorded: k σ (1 - k σ) instead of k σ (1 - σ).",
              "Make the scaling a recorded, out-of-place operation: a new tensor, not a "
              "changed one."),
        Wrong("chain_rule_dropped",
              lambda x, k: [_sigmoid(v) * (1 - _sigmoid(v)) for v in x],
              "This is the gradient of the unscaled sum of sigmoids: the factor k is missing. "
              "The scaling is part of the function, so its derivative k multiplies σ'.",
              "Keep the multiplication by k, as an out-of-place operation."),
    ),
)
