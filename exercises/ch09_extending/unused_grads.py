"""Gradients that are not there: with allow_unused=True an input the output never used gets
None; one used only through round() gets 0 (round's derivative); one used only through a
comparison gets None (a bool result has no graph, so the input was never reached)."""

import random

import torch

from autograder.kinds import Number, Table
from gradtutor.key.exercise import Exercise, Wrong, table_with

from ._common import central

ROWS = ("a", "b", "c", "d")
KIND = Table(rows=ROWS, columns=(("grad", Number()),))


def reference(a0: float, b0: float, c0: float, d0: float) -> dict:
    a, b, c, d = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (a0, b0, c0, d0))
    out = a * a + torch.round(c) * a + (d > 0).double() * a
    grads = torch.autograd.grad(out, (a, b, c, d), allow_unused=True)
    return {name: {"grad": g} for name, g in zip(ROWS, grads, strict=True)}


def analytic(a0: float, b0: float, c0: float, d0: float) -> dict:
    return {"a": {"grad": 2 * a0 + round(c0) + (1.0 if d0 > 0 else 0.0)}, "b": {"grad": None},
            "c": {"grad": 0.0}, "d": {"grad": None}}


def finite_diff(a0: float, b0: float, c0: float, d0: float) -> dict:
    def out(a: float, c: float) -> float:
        return a * a + round(c) * a + (1.0 if d0 > 0 else 0.0) * a
    return {"a": {"grad": central(lambda a: out(a, c0), a0)}, "b": {"grad": None},
            "c": {"grad": central(lambda c: out(a0, c), c0)}, "d": {"grad": None}}


def draw(rng: random.Random) -> dict:
    c = rng.randint(-3, 3) + rng.uniform(-0.4, 0.4)  # away from the .5 jumps of round
    return {"a0": rng.uniform(0.5, 3), "b0": rng.uniform(-2, 2), "c0": c,
            "d0": rng.choice((-1, 1)) * rng.uniform(0.2, 2)}


EXERCISE = Exercise(
    title="Gradients that are not there",
    prompt=r"""

```python
a, b, c, d = (torch.tensor(v, requires_grad=True) for v in ({{a0}}, {{b0}}, {{c0}}, {{d0}}))
out = a * a + torch.round(c) * a + (d > 0).float() * a      # b is never used
grads = torch.autograd.grad(out, (a, b, c, d), allow_unused=True)
```

Fill in `missing = {"a": {"grad": ...}, "b": {"grad": ...}, "c": {"grad": ...}, "d": {"grad": ...}}`
with the four entries of `grads` (a number, or `None`).
""",
    setup="a0, b0, c0, d0 = {{a0}}, {{b0}}, {{c0}}, {{d0}}",
    answer="missing",
    placeholder='missing = ...  # {"a": {"grad": ...}, "b": {"grad": ...}, "c": {"grad": ...}, "d": {"grad": ...}}',
    solution="""missing = {"a": {"grad": 2 * a0 + round(c0) + (1.0 if d0 > 0 else 0.0)},
           "b": {"grad": None},   # not in the graph at all
           "c": {"grad": 0.0},    # in the graph, through round, whose derivative is 0
           "d": {"grad": None}}   # d > 0 is a bool with no grad_fn: d is never reached""",
    by_hand=True,
    kind=KIND,
    params={"a0": 2.0, "b0": 3.0, "c0": 1.3, "d0": 0.5},
    hidden=({"a0": 1.5563, "b0": -1.0, "c0": -2.2, "d0": -0.75},),
    draw=draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("unused_grad_none", table_with(analytic, b={"grad": 0.0}),
              "b is not in out's graph at all, so autograd has no gradient for it: with "
              "allow_unused=True it returns None, not 0 (materialize_grads=True would turn "
              "None into zeros; without allow_unused, grad raises).",
              "Is there any path from out back to b?"),
        Wrong("round_zero_gradient", table_with(analytic, c=lambda a0, b0, c0, d0: {"grad": a0}),
              "This treats round(c) as if it were c. round is in the graph (RoundBackward0), "
              "but it is a staircase: flat between the jumps, so its derivative, and c's "
              "gradient, is 0. Passing the gradient through anyway is a deliberate choice "
              "(the straight-through estimator), never the default.",
              "What is the slope of round(c) near c = 1.3?"),
        Wrong("comparison_no_graph", table_with(analytic, d={"grad": 0.0}),
              "d > 0 returns a bool tensor with no grad_fn, and .float() of it has none "
              "either: the comparison is not recorded, so d is not in the graph, exactly like "
              "b. Its gradient is None, not 0 (that is the difference from round).",
              "Does (d > 0) have a grad_fn?"),
    ),
)
