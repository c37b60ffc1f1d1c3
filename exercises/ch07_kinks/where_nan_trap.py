"""The torch.where NaN trap: where(x > 0, sqrt(x), 0) at [0, 4, -1] has gradient [nan, 0.25, nan].

The unselected branch still runs its backward, with an upstream gradient of 0; sqrt's local
derivative there is inf (at 0) or NaN (at -1), and 0 · inf = 0 · NaN = NaN.
"""

import math

import torch

from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong

NAN = float("nan")


def reference(x: list[float]) -> torch.Tensor:
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    torch.where(t > 0, t.sqrt(), 0.0).sum().backward()
    return t.grad


def analytic(x: list[float]) -> list[float]:
    # selected entries: d sqrt(v)/dv = 1 / (2 sqrt(v)); unselected: 0 · (1 / (2 sqrt(v))),
    # which is 0 · inf at v = 0 and 0 · nan at v < 0: NaN either way
    return [0.5 / math.sqrt(v) if v > 0 else NAN for v in x]


def _draw(rng) -> dict:
    x = [0.0, rng.uniform(0.25, 9), -rng.uniform(0.25, 9)]
    rng.shuffle(x)
    return {"x": x}


# No finite_diff witness: at 0 and below, sqrt is not defined on both sides of the point;
# the question is what autograd's formulas produce there, not a limit of slopes.

EXERCISE = Exercise(
    title="torch.where does not guard the backward pass",
    prompt=r"""
A "safe" square root that returns 0 for non-positive inputs:

```python
x = torch.tensor({{x}}, requires_grad=True)
y = torch.where(x > 0, x.sqrt(), 0.0)
y.sum().backward()
```

The forward values are fine (no NaN in `y`). What is `x.grad`? Give the three numbers; write
`float("nan")` where autograd produces NaN.
""",
    setup="x_values = {{x}}",
    answer="where_grad",
    solution="""x = torch.tensor(x_values, requires_grad=True)
y = torch.where(x > 0, x.sqrt(), 0.0)
y.sum().backward()
where_grad = x.grad""",
    kind=Tensor(shape=(3,)),
    params={"x": [0.0, 4.0, -1.0]},
    hidden=({"x": [-2.0, 0.0, 9.0]}, {"x": [6.25, -0.5, 0.0]}),
    draw=_draw,
    reference=reference,
    analytic=analytic,
    wrong=(
        Wrong("where_nan", lambda x: [0.5 / math.sqrt(v) if v > 0 else 0.0 for v in x],
              "These would be the gradients if the unselected branch took no part in backward. "
              "It does: x.sqrt() was computed for every entry, and its backward multiplies the "
              "upstream gradient 0 by 1/(2 sqrt(x)), which is inf at 0 and NaN below 0. "
              "0 · inf and 0 · NaN are both NaN, and the NaN flows into x.grad.",
              "Evaluate x.sqrt() on its own at each entry, then think of its backward as "
              "upstream gradient times local derivative."),
        Wrong("where_nan", lambda x: [0.5 / math.sqrt(v) if v > 0 else NAN if v == 0 else 0.0
                                      for v in x],
              "Right at 0, where sqrt's slope is infinite, but a negative entry is poisoned "
              "too: sqrt of a negative number is already NaN in the forward pass, so its local "
              "derivative is NaN, and 0 · NaN is NaN.",
              "What is torch.tensor(-1.0).sqrt()? What does that do to its derivative?"),
        Wrong("norm_at_zero", lambda x: [0.5 / math.sqrt(v) if v > 0 else math.inf if v == 0
                                         else NAN for v in x],
              "sqrt's own slope at 0 is inf, but this entry was not selected: where() sends it "
              "an upstream gradient of 0, and 0 · inf is NaN, not inf.",
              "Multiply the upstream gradient from where() by sqrt's local derivative."),
    ),
)
