"""Repair the penalty: finite gradients at a pruned column, graded on fresh weights."""

import math

import torch

from autograder.harness import function_report
from autograder.kinds import Bool, Table, Tensor
from gradtutor.key.exercise import Exercise, Wrong

from ._common import LASSO_COLS, LASSO_ROWS, call, lasso_draw

ROWS, COLS = LASSO_ROWS, LASSO_COLS
KIND = Table(rows=("report",), columns=(("value", Tensor(shape=())), ("grad", Tensor(shape=(ROWS, COLS))),
                                        ("gradcheck", Bool())))


def _where(W):
    sq = (W ** 2).sum(0)
    return torch.where(sq > 0, sq.sqrt(), 0.0).sum()


def _run(fn):
    return lambda W: function_report(fn, [torch.tensor(W, dtype=torch.float64)],
                                     torch.tensor(1.0, dtype=torch.float64), second=False)


def reference(W):
    return _run(lambda w: torch.linalg.vector_norm(w, dim=0).sum())(W)


def _table(W, grad_at):
    norms = [math.sqrt(sum(W[i][j] ** 2 for i in range(ROWS))) for j in range(COLS)]
    grad = [[W[i][j] / norms[j] if norms[j] > 0 else grad_at for j in range(COLS)] for i in range(ROWS)]
    return {"report": {"value": sum(norms), "grad": grad, "gradcheck": True}}


def analytic(W):
    return _table(W, 0.0)


draw = lasso_draw


EXERCISE = Exercise(
    title="Repair the penalty (fix-it)",
    points=2,
    prompt=r"""
Write `group_lasso(W)`: the same penalty $\sum_j \lVert W_{:, j} \rVert$ (a 0-dimensional tensor),
whose gradient is **finite** everywhere, and at a zero column is $0$ (the subgradient a
pruned unit should get: no push in any direction). Away from zero columns nothing may change.

The grader runs `function_report(group_lasso, [W], torch.tensor(1.0), second=False)` on
`W = {{W}}` and on fresh weights with a zero column somewhere else, and compares value,
gradient and `gradcheck` with torch's own norm.
""",
    setup="""W = torch.tensor({{W}}, dtype=torch.float64)
from autograder.harness import function_report   # what the grader runs""",
    answer="group_lasso",
    call=call("function_report(group_lasso, [W], torch.tensor(1.0, dtype=torch.float64), second=False)"),
    placeholder="def group_lasso(W):\n    return ...",
    solution="""def group_lasso(W):
    sq = (W ** 2).sum(0)
    safe = torch.where(sq > 0, sq, 1.0)           # the inner where: sqrt never sees a 0 ...
    return torch.where(sq > 0, safe.sqrt(), 0.0).sum()   # ... and the outer one picks""",
    kind=KIND,
    params={"W": [[0.6, 0.0, -1.5], [0.8, 0.0, 2.0]]},
    hidden=({"W": [[0.0, 1.2, -0.5], [0.0, -0.9, 1.2]]}, {"W": [[2.0, -0.3, 0.0], [-1.0, 0.4, 0.0]]}),
    draw=draw,
    reference=reference,
    analytic=analytic,
    wrong=(
        Wrong("where_nan", _run(_where),
              "This is the guarded version as it was: the value is right but the zero column's "
              "gradient is NaN, because the square root is still differentiated at 0 in the "
              "branch torch.where does not pick (0 · inf = NaN).",
              "Make sure sqrt never receives a 0, even in the branch that is thrown away."),
    ),
)
