"""Per-sample gradients with torch.func: vmap(grad(loss), in_dims=(None, 0, 0)).

loss(w, x, y) = (w·x - y)², w = [0, 0], X = [[1, 2], [3, 4], [0, 1]], y = [1, 2, 3]:
per-sample gradients [[-2, -4], [-12, -16], [0, -6]], which sum to the batch gradient [-14, -26].
"""

import torch

from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong
from gradtutor.key.numeric import gradient


def _loss(w: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return (w @ x - y) ** 2


def reference(w: list[float], X: list[list[float]], y: list[float]) -> torch.Tensor:
    # witness 1 uses plain autograd, one sample at a time (the func route is the solution)
    rows = []
    for x_i, y_i in zip(X, y, strict=True):
        wt = torch.tensor(w, dtype=torch.float64, requires_grad=True)
        _loss(wt, torch.tensor(x_i, dtype=torch.float64), torch.tensor(y_i, dtype=torch.float64)).backward()
        rows.append(wt.grad)
    return torch.stack(rows)


def _residual(w: list[float], x: list[float], y: float) -> float:
    return sum(a * b for a, b in zip(w, x, strict=True)) - y


def analytic(w: list[float], X: list[list[float]], y: list[float]) -> list[list[float]]:
    # ∇_w (w·x - y)² = 2 (w·x - y) x, one row per sample
    return [[2 * _residual(w, x, t) * v for v in x] for x, t in zip(X, y, strict=True)]


def finite_diff(w: list[float], X: list[list[float]], y: list[float]) -> list[list[float]]:
    return [gradient(lambda *wv, x=x, t=t: _residual(list(wv), x, t) ** 2, w)
            for x, t in zip(X, y, strict=True)]


def _draw(rng) -> dict:
    return {"w": [rng.uniform(-2, 2) for _ in range(2)],
            "X": [[rng.uniform(-3, 3) for _ in range(2)] for _ in range(3)],
            "y": [rng.uniform(-3, 3) for _ in range(3)]}


EXERCISE = Exercise(
    title="Per-sample gradients with vmap",
    prompt=r"""
A linear model with squared error on one sample: `loss(w, x, y) = (w @ x - y) ** 2`. The batch
has three samples, the rows of `X = torch.tensor({{X}})` with targets `y = torch.tensor({{y}})`,
and `w = torch.tensor({{w}})`.

Compute the gradient **with respect to `w`** for each sample separately, with
`torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))`: `None` shares `w` across the
batch, `0` maps over the rows of `X` and `y`. Give `per_sample` with shape (3, 2), one row per
sample.
""",
    setup="w_values, X_values, y_values = {{w}}, {{X}}, {{y}}",
    answer="per_sample",
    solution="""def loss(w, x, y):
    return (w @ x - y) ** 2

w, X, y = torch.tensor(w_values), torch.tensor(X_values), torch.tensor(y_values)
per_sample = torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))(w, X, y)""",
    kind=Tensor(shape=(3, 2)),
    params={"w": [0.0, 0.0], "X": [[1.0, 2.0], [3.0, 4.0], [0.0, 1.0]], "y": [1.0, 2.0, 3.0]},
    hidden=({"w": [0.5188, -1.0375], "X": [[2.0, 0.0], [-1.0, 1.0], [1.0, 3.0]], "y": [0.0, 1.0, -2.0]},),
    draw=_draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("per_sample_summed",
              lambda w, X, y: [[sum(col) for col in zip(*analytic(w, X, y), strict=True)]] * 3,
              "Every row is the batch gradient, the sum of the per-sample gradients: what "
              "loss.sum().backward() would give. vmap keeps the samples apart, one gradient "
              "per row.",
              "What does in_dims=(None, 0, 0) do with the rows of X?"),
        Wrong("func_grad_argnums",
              lambda w, X, y: [[2 * _residual(w, x, t) * v for v in w] for x, t in zip(X, y, strict=True)],
              "These are gradients with respect to x, not w. torch.func.grad differentiates "
              "with respect to the first argument of the function (argnums=0), which is w "
              "in loss(w, x, y).",
              "Which argument does torch.func.grad differentiate by default?"),
        Wrong("power_rule",
              lambda w, X, y: [[_residual(w, x, t) * v for v in x] for x, t in zip(X, y, strict=True)],
              "The factor 2 from differentiating the square is missing: d/dw (w·x - y)² = "
              "2 (w·x - y) x.",
              "Differentiate u² with respect to u first."),
    ),
)
