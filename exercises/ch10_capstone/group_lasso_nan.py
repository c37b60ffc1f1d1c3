"""The group-lasso penalty with its square root guarded by torch.where: at a pruned (all-zero)
column, the gradient is NaN (the title and prompt leave that for the student to find)."""

import math

import torch

from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong

from ._common import LASSO_COLS, LASSO_ROWS, lasso_draw

ROWS, COLS = LASSO_ROWS, LASSO_COLS


def _penalty(W):
    sq = (W ** 2).sum(0)
    return torch.where(sq > 0, sq.sqrt(), 0.0).sum()


def reference(W):
    w = torch.tensor(W, dtype=torch.float64, requires_grad=True)
    _penalty(w).backward()
    return w.grad


def _columns(W, at_zero, scale=1.0):
    out = [[0.0] * COLS for _ in range(ROWS)]
    for j in range(COLS):
        norm = math.sqrt(sum(W[i][j] ** 2 for i in range(ROWS)))
        for i in range(ROWS):
            out[i][j] = at_zero if norm == 0 else scale * W[i][j] / norm ** (scale == 1.0)
    return out


def analytic(W):
    return _columns(W, math.nan)


draw = lasso_draw


EXERCISE = Exercise(
    title="A guarded square root",
    prompt=r"""
The loop you will repair adds a group-lasso penalty, $\lambda \sum_j \lVert W_{:, j} \rVert$,
which pulls whole columns of $W_1$ (all the weights into one hidden unit) towards zero. Its
author guarded the square root with `torch.where`, for the columns that are exactly zero:

```python
sq = (W ** 2).sum(0)                                # squared norm of each column
penalty = torch.where(sq > 0, sq.sqrt(), 0.0).sum()
```

Take `W = {{W}}`, a leaf in float64 that requires grad, with one column already pruned. Run
`penalty.backward()` and set `W_grad` to `W.grad`. Predict first: what does the pruned column
get?
""",
    setup="W0 = {{W}}",
    answer="W_grad",
    solution="""W = torch.tensor(W0, dtype=torch.float64, requires_grad=True)
sq = (W ** 2).sum(0)
penalty = torch.where(sq > 0, sq.sqrt(), 0.0).sum()
penalty.backward()
W_grad = W.grad""",
    kind=Tensor(shape=(ROWS, COLS)),
    params={"W": [[0.6, 0.0, -1.5], [0.8, 0.0, 2.0]]},
    hidden=({"W": [[0.0, 1.2, -0.5], [0.0, -0.9, 1.2]]}, {"W": [[2.0, -0.3, 0.0], [-1.0, 0.4, 0.0]]}),
    draw=draw,
    reference=reference,
    analytic=analytic,
    wrong=(
        Wrong("where_nan", lambda W: _columns(W, 0.0),
              "torch.where picks values in the forward pass, but in the backward pass both branches "
              "are differentiated and the unpicked one is multiplied by 0. At a zero column, "
              "sq.sqrt() has the derivative 1/(2·0) = inf, and 0 · inf = NaN: the guard does not "
              "protect the gradient.",
              "Which branches of torch.where does backward differentiate, and what is d√s/ds at 0?"),
    ),
)
