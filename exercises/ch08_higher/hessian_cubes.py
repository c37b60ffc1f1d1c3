"""Hessian of sum(x³) at [1, 2]: [[6, 0], [0, 12]] (diagonal: each x_i only meets itself)."""

import torch

from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong, order_off

from ._numeric import hessian


def f(x: list[float]) -> float:
    return sum(v**3 for v in x)


def reference(x: list[float]) -> torch.Tensor:
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad((t**3).sum(), t, create_graph=True)
    rows = [torch.autograd.grad(g[i], t, retain_graph=True)[0] for i in range(len(x))]
    return torch.stack(rows)


def analytic(x: list[float]) -> list[list[float]]:
    # ∂²/∂x_i∂x_j of Σ x_k³ = 6 x_i if i == j else 0
    return [[6 * x[i] if i == j else 0.0 for j in range(2)] for i in range(2)]


def _draw(rng) -> dict:
    return {"x": [rng.choice((-1, 1)) * rng.uniform(0.5, 3) for _ in range(2)]}


EXERCISE = Exercise(
    title="A Hessian, row by row",
    prompt=r"""
Let $f(x) = \sum_i x_i^3$ at `x = torch.tensor({{x}}, requires_grad=True)`. Compute the
Hessian $H_{ij} = \frac{\partial^2 f}{\partial x_i \partial x_j}$ with autograd: first the
gradient $g$ with `create_graph=True`, then row $i$ of $H$ as the gradient of $g_i$. (You may
check your result with `torch.autograd.functional.hessian`.) Give `H` with shape (2, 2).
""",
    setup="x_values = {{x}}",
    answer="H",
    solution="""x = torch.tensor(x_values, requires_grad=True)
(g,) = torch.autograd.grad((x**3).sum(), x, create_graph=True)
H = torch.stack([torch.autograd.grad(g[i], x, retain_graph=True)[0] for i in range(2)])""",
    kind=Tensor(shape=(2, 2)),
    params={"x": [1.0, 2.0]},
    hidden=({"x": [-1.5, 0.5]}, {"x": [2.5, -3.0625]}),
    draw=_draw,
    reference=reference,
    analytic=analytic,
    finite_diff=lambda x: hessian(f, x),
    wrong=(
        Wrong("hessian_rows", lambda x: [[6 * x[0], 6 * x[1]], [6 * x[0], 6 * x[1]]],
              "Every row is the gradient of g.sum() = g_1 + g_2, which is H applied to a "
              "vector of ones, not a row of H. Row i is the gradient of the single "
              "component g_i.",
              "Differentiate one component of g at a time: torch.autograd.grad(g[i], x, "
              "retain_graph=True)."),
        order_off(lambda x: [[3 * x[0] ** 2, 0.0], [0.0, 3 * x[1] ** 2]],
                  "the gradient 3x_i² placed on the diagonal", higher=False,
                  hint="What is d/dx of 3x²?"),
    ),
)
