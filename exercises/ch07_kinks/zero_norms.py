"""Three ways to take row norms, and their gradients at a zero row (torch 2.13).

linalg.vector_norm: 0 (special-cased); sqrt(sum x²): NaN (sqrt's slope inf times 2x = 0);
F.normalize: 1e12 per entry (x / max(norm, eps) with eps = 1e-12). The other row is smooth.
"""

import math

import torch
import torch.nn.functional as F

from autograder.kinds import Table, Tensor
from gradtutor.key.exercise import Exercise, Wrong

EPS = 1e-12  # F.normalize's default eps
NAN = float("nan")
SPELLINGS = {
    "vector_norm": lambda X: torch.linalg.vector_norm(X, dim=1).sum(),
    "sqrt_sum_squares": lambda X: (X**2).sum(dim=1).sqrt().sum(),
    "normalize": lambda X: F.normalize(X, dim=1).sum(),
}
ROWS = tuple(SPELLINGS)
KIND = Table(rows=ROWS, columns=(("grad", Tensor(shape=(2, 2))),))


def reference(X: list[list[float]]) -> dict:
    table = {}
    for name, loss in SPELLINGS.items():
        t = torch.tensor(X, dtype=torch.float64, requires_grad=True)
        loss(t).backward()
        table[name] = {"grad": t.grad}
    return table


def _rows(X: list[list[float]], at_zero: list[float], smooth) -> list[list[float]]:
    return [at_zero if not any(r) else smooth(r) for r in X]


def _norm_grad(r: list[float]) -> list[float]:
    n = math.hypot(*r)
    return [v / n for v in r]


def _normalize_grad(r: list[float]) -> list[float]:
    # d/dr_j sum_i r_i/|r| = 1/|r| - r_j (sum_i r_i) / |r|^3
    n = math.hypot(*r)
    return [1 / n - v * sum(r) / n**3 for v in r]


def analytic(X: list[list[float]], zero: dict | None = None) -> dict:
    zero = {"vector_norm": [0.0, 0.0], "sqrt_sum_squares": [NAN, NAN],
            "normalize": [1 / EPS, 1 / EPS], **(zero or {})}
    return {"vector_norm": {"grad": _rows(X, zero["vector_norm"], _norm_grad)},
            "sqrt_sum_squares": {"grad": _rows(X, zero["sqrt_sum_squares"], _norm_grad)},
            "normalize": {"grad": _rows(X, zero["normalize"], _normalize_grad)}}


def _draw(rng) -> dict:
    row = [rng.choice((-1, 1)) * rng.uniform(0.5, 5), rng.choice((-1, 1)) * rng.uniform(0.5, 5)]
    return {"X": [row, [0.0, 0.0]] if rng.random() < 0.5 else [[0.0, 0.0], row]}


# No finite_diff witness: the norm has a cone-shaped kink at the zero row, so no single
# slope exists there; what matters is which convention each formula lands on.

EXERCISE = Exercise(
    title="Norms at zero",
    prompt=r"""
`X = torch.tensor({{X}}, requires_grad=True)` has a row of zeros. Three losses each add up the
norm-related quantity of every row:

| name | loss |
|---|---|
| `"vector_norm"` | `torch.linalg.vector_norm(X, dim=1).sum()` |
| `"sqrt_sum_squares"` | `(X**2).sum(dim=1).sqrt().sum()` |
| `"normalize"` | `F.normalize(X, dim=1).sum()` |

For each, what is `X.grad` (shape (2, 2)) after `loss.backward()` on a fresh `X`? Fill in the
table `norm_grads`, e.g. `{"vector_norm": {"grad": ...}, ...}`.
""",
    setup="""import torch.nn.functional as F

X_values = {{X}}""",
    answer="norm_grads",
    placeholder='norm_grads = ...  # {"vector_norm": {"grad": ...}, "sqrt_sum_squares": ..., "normalize": ...}',
    solution="""losses = {
    "vector_norm": lambda X: torch.linalg.vector_norm(X, dim=1).sum(),
    "sqrt_sum_squares": lambda X: (X**2).sum(dim=1).sqrt().sum(),
    "normalize": lambda X: F.normalize(X, dim=1).sum(),
}
norm_grads = {}
for name, loss in losses.items():
    X = torch.tensor(X_values, requires_grad=True)
    loss(X).backward()
    norm_grads[name] = {"grad": X.grad}""",
    kind=KIND,
    params={"X": [[0.0, 0.0], [3.0, 4.0]]},
    hidden=({"X": [[5.0, -12.0], [0.0, 0.0]]}, {"X": [[0.0, 0.0], [-1.0, 2.0]]}),
    draw=_draw,
    reference=reference,
    analytic=analytic,
    wrong=(
        Wrong("norm_at_zero",
              lambda X: analytic(X, {"sqrt_sum_squares": [0.0, 0.0], "normalize": [0.0, 0.0]}),
              "The three losses agree wherever a row is non-zero, but not at the zero row: "
              "there each one's backward does something of its own. vector_norm's backward "
              "has a special case for a zero row; the hand-written sqrt(sum x²) goes through "
              "sqrt's infinite slope at 0; F.normalize divides by max(norm, eps).",
              "Differentiate each formula as autograd does, one operation at a time, at the "
              "zero row."),
        Wrong("norm_at_zero",
              lambda X: analytic(X, {"sqrt_sum_squares": [math.inf, math.inf]}),
              "sqrt's slope at 0 is infinite, but the chain then multiplies it by "
              "d(x²)/dx = 2x = 0, and a product of an infinite and a zero factor is not infinite "
              "in floating point.",
              "Write the chain for one entry of the zero row: slope of sqrt times slope of "
              "the sum of squares."),
        Wrong("norm_at_zero",
              lambda X: analytic(X, {"normalize": [0.0, 0.0]}),
              "F.normalize computes x / max(‖x‖, eps) with eps = 1e-12, so near 0 it is x "
              "divided by a tiny constant, whose slope is far from 0. A zero row in a "
              "normalised layer can launch enormous gradients.",
              "Read F.normalize's formula in its documentation: what is the denominator "
              "at a zero row?"),
    ),
)
