"""Hessian of xᵀMx with M = [[1, 2], [0, 3]]: M + Mᵀ = [[2, 2], [2, 6]], for every x."""

import torch

from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong

from ._numeric import hessian


def f(M: list[list[float]]):
    return lambda x: sum(x[i] * M[i][j] * x[j] for i in range(2) for j in range(2))


def reference(M: list[list[float]], x: list[float]) -> torch.Tensor:
    Mt = torch.tensor(M, dtype=torch.float64)
    t = torch.tensor(x, dtype=torch.float64)
    return torch.autograd.functional.hessian(lambda v: v @ Mt @ v, t)


def analytic(M: list[list[float]], x: list[float]) -> list[list[float]]:
    # ∂²/∂x_i∂x_j Σ_kl x_k M_kl x_l = M_ij + M_ji
    return [[M[i][j] + M[j][i] for j in range(2)] for i in range(2)]


def _draw(rng) -> dict:
    M = [[float(rng.randint(-4, 4)) for _ in range(2)] for _ in range(2)]
    while M[0][1] == M[1][0]:  # keep M non-symmetric, where the lesson is
        M[1][0] = float(rng.randint(-4, 4))
    return {"M": M, "x": [rng.uniform(-2, 2), rng.uniform(-2, 2)]}


EXERCISE = Exercise(
    title="The Hessian of a quadratic form",
    prompt=r"""
Let $f(x) = x^\top M x$ with `M = torch.tensor({{M}})` (not symmetric) at
`x = torch.tensor({{x}})`. What is the Hessian of $f$, shape (2, 2)? Compute it with
`torch.autograd.functional.hessian` or `torch.func.hessian`, or derive it by hand and write it
in terms of `M`.
""",
    setup="M_values, x_values = {{M}}, {{x}}",
    answer="H_quad",
    solution="""M = torch.tensor(M_values)
H_quad = torch.func.hessian(lambda v: v @ M @ v)(torch.tensor(x_values))""",
    kind=Tensor(shape=(2, 2)),
    params={"M": [[1.0, 2.0], [0.0, 3.0]], "x": [0.5, -1.0]},
    hidden=({"M": [[2.0, -1.0], [3.0, 0.0]], "x": [1.0, 2.0]},
            {"M": [[0.0, 4.0], [1.0, -2.0]], "x": [-1.5, 0.25]}),
    draw=_draw,
    reference=reference,
    analytic=analytic,
    finite_diff=lambda M, x: hessian(f(M), x),
    wrong=(
        Wrong("quadratic_hessian", lambda M, x: M,
              "M itself would be the answer only if M were symmetric. Each pair x_i x_j "
              "appears twice in xᵀMx, once with M_ij and once with M_ji, so the mixed "
              "second derivative collects both: H = M + Mᵀ.",
              "Expand xᵀMx for 2 × 2 by hand and differentiate the x_1 x_2 terms."),
        Wrong("quadratic_hessian", lambda M, x: [[2 * v for v in row] for row in M],
              "2M is the rule for a symmetric M (where M + Mᵀ = 2M). For a non-symmetric M "
              "the off-diagonal entries are M_ij + M_ji, not 2M_ij.",
              "Is the Hessian you wrote symmetric? A Hessian of a smooth function always is."),
        Wrong("quadratic_hessian", lambda M, x: [[2 * M[j][i] for j in range(2)] for i in range(2)],
              "This is 2Mᵀ: the transpose doubled, which is again the right answer only for a "
              "symmetric M. Each entry x_i x_j of xᵀMx is weighted by both M_ij and M_ji.",
              "Expand xᵀMx for a 2 × 2 M and differentiate it twice by hand."),
    ),
)
