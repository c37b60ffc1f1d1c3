"""Ties in max: the full reduction splits the gradient, max(dim) routes it to one index.

x = [1, 3, 3]: x.max() gives [0, 0.5, 0.5]; x.max(dim=0).values gives [0, 1, 0] (torch 2.13,
CPU: the first index of the maximum). Every variant has a tie at the maximum.
"""

import torch

from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong


def reference(x: list[float]) -> torch.Tensor:
    full = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    full.max().backward()
    along = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    along.max(dim=0).values.backward()
    return torch.stack([full.grad, along.grad])


def _ties(x: list[float]) -> list[bool]:
    top = max(x)
    return [v == top for v in x]


def analytic(x: list[float]) -> list[list[float]]:
    # full reduction: the gradient is shared evenly among the tied maxima;
    # max(dim): one index (the first maximum) takes all of it
    ties = _ties(x)
    first = ties.index(True)
    return [[1.0 / sum(ties) if t else 0.0 for t in ties],
            [1.0 if i == first else 0.0 for i in range(len(x))]]


def _draw(rng) -> dict:
    top = float(rng.randint(-3, 6))
    x = [top - rng.randint(1, 5) for _ in range(3)]
    for i in rng.sample(range(3), rng.choice((2, 3))):
        x[i] = top
    return {"x": x}


def _both(row_fn):
    return lambda x: [row_fn(x), row_fn(x)]


# No finite_diff witness: at a tie the maximum is not differentiable; a central difference
# in each coordinate sees one-sided slopes and gives 0.5 or 1 depending on the direction.

EXERCISE = Exercise(
    title="Who gets the gradient of a tied maximum?",
    prompt=r"""
The maximum of `x = torch.tensor({{x}}, requires_grad=True)` appears more than once. Compute
the gradient of the maximum in two ways:

1. the full reduction `x.max()`, then `.backward()`;
2. the reduction along a dimension `x.max(dim=0).values`, then `.backward()` (on a fresh `x`).

Give both gradients as the two rows of `tie_grads` (shape (2, 3)): row 0 for `x.max()`, row 1
for `x.max(dim=0)`.
""",
    setup="x_values = {{x}}",
    answer="tie_grads",
    placeholder="tie_grads = ...  # [grad of x.max(), grad of x.max(dim=0).values]",
    solution="""rows = []
for reduce in (lambda t: t.max(), lambda t: t.max(dim=0).values):
    x = torch.tensor(x_values, requires_grad=True)
    reduce(x).backward()
    rows.append(x.grad)
tie_grads = torch.stack(rows)""",
    kind=Tensor(shape=(2, 3)),
    params={"x": [1.0, 3.0, 3.0]},
    hidden=({"x": [4.0, 4.0, -1.0]}, {"x": [2.0, 2.0, 2.0]}),
    draw=_draw,
    reference=reference,
    analytic=analytic,
    wrong=(
        Wrong("max_ties", _both(lambda x: [1.0 if t else 0.0 for t in _ties(x)]),
              "This applies the rule 'every input equal to the maximum gets gradient 1' (the "
              "1(x >= y) rule of a max gate drawn in some course notes). The result would then "
              "move by 2 when you nudge both tied entries by 1, but it only moves by 1: "
              "PyTorch's full max splits the gradient evenly, and max(dim) routes it to a "
              "single index.",
              "The gradients of a max must add up to 1 in total. How does each reduction share "
              "that 1 among the tied entries?"),
        Wrong("max_ties", _both(lambda x: analytic(x)[1]),
              "Both rows route the whole gradient to one index. That is right for max(dim=0), "
              "which returns one index per slice, but the full reduction x.max() shares the "
              "gradient evenly among all tied maxima.",
              "Look at row 0 again: does x.max() return an index at all?"),
        Wrong("max_ties", _both(lambda x: analytic(x)[0]),
              "Both rows split the gradient evenly. That is the rule of the full reduction "
              "x.max(); x.max(dim=0) returns values and indices, and its backward sends the "
              "gradient only to the returned index.",
              "Print x.max(dim=0).indices. Where does the gradient of row 1 go?"),
    ),
)
