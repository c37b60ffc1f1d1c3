"""Forward-mode AD with dual numbers: write jvp_dual(f, x, v) with torch.autograd.forward_ad.
Graded on f(x) = [x0 x1, sin x2 + x0², x1 x2] at fresh x, v: the tangent J v (not vᵀJ)."""

import math
import random

import torch

from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong

N = 3


def f_torch(t: torch.Tensor) -> torch.Tensor:
    return torch.stack([t[0] * t[1], torch.sin(t[2]) + t[0] ** 2, t[1] * t[2]])


def f_plain(x: list) -> list:
    return [x[0] * x[1], math.sin(x[2]) + x[0] ** 2, x[1] * x[2]]


def _jacobian(x: list) -> list[list[float]]:
    return [[x[1], x[0], 0.0], [2 * x[0], 0.0, math.cos(x[2])], [0.0, x[2], x[1]]]


def reference(x: list, v: list) -> torch.Tensor:
    tx, tv = torch.tensor(x, dtype=torch.float64), torch.tensor(v, dtype=torch.float64)
    return torch.func.jvp(f_torch, (tx,), (tv,))[1]


def analytic(x: list, v: list) -> list[float]:
    return [sum(J_ij * v_j for J_ij, v_j in zip(row, v, strict=True)) for row in _jacobian(x)]


def finite_diff(x: list, v: list, h: float = 1e-6) -> list[float]:
    up = f_plain([a + h * b for a, b in zip(x, v, strict=True)])
    down = f_plain([a - h * b for a, b in zip(x, v, strict=True)])
    return [(u - d) / (2 * h) for u, d in zip(up, down, strict=True)]


def _vjp(x: list, v: list) -> list[float]:
    J = _jacobian(x)
    return [sum(v[i] * J[i][j] for i in range(N)) for j in range(N)]


def draw(rng: random.Random) -> dict:
    return {"x": [rng.choice((-1, 1)) * rng.uniform(0.5, 2) for _ in range(N)],
            "v": [rng.choice((-1, 1)) * rng.uniform(0.5, 2) for _ in range(N)]}


EXERCISE = Exercise(
    title="A Jacobian-vector product with dual numbers",
    prompt=r"""
Write `jvp_dual(f, x, v)` that returns $J_f(x)\,v$ with forward-mode AD, using
`torch.autograd.forward_ad` (imported as `fwAD` in the setup): inside a `fwAD.dual_level()`,
make the dual tensor `fwAD.make_dual(x, v)`, run `f` on it, and read the tangent of the
output with `fwAD.unpack_dual`. No backward pass.

The grader calls `jvp_dual(f, x, v)` with the setup's
$f(x) = (x_0 x_1,\ \sin x_2 + x_0^2,\ x_1 x_2)$, `x = {{x}}`, `v = {{v}}`, and at fresh
values, and compares with `torch.func.jvp`.
""",
    setup="""import torch.autograd.forward_ad as fwAD

def f(t):
    return torch.stack([t[0] * t[1], torch.sin(t[2]) + t[0] ** 2, t[1] * t[2]])

x = torch.tensor({{x}}, dtype=torch.float64)
v = torch.tensor({{v}}, dtype=torch.float64)""",
    answer="jvp_dual",
    call="jvp_dual(f, x.clone(), v.clone())",
    placeholder="def jvp_dual(f, x, v):\n    return ...",
    solution="""def jvp_dual(f, x, v):
    with fwAD.dual_level():
        out = f(fwAD.make_dual(x, v))
        return fwAD.unpack_dual(out).tangent""",
    kind=Tensor(shape=(N,)),
    params={"x": [1.0, 2.0, 0.5], "v": [1.0, 0.0, -1.0]},
    hidden=({"x": [-0.5, 1.5, 2.0], "v": [0.5, 1.0, 2.0]},),
    draw=draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("jvp_vs_vjp", _vjp,
              "This is vᵀJ, a vector-Jacobian product (what backward with seed v gives), not "
              "J v. Forward mode pushes the tangent v through the function along with the "
              "values: output tangent = J v. The two agree only for a symmetric Jacobian.",
              "Which does a tangent carried forward through f give: J v or vᵀJ?"),
        Wrong("value_not_derivative", lambda x, v: f_plain(x),
              "This is f(x), the primal of the dual output. unpack_dual returns a pair "
              "(primal, tangent); the derivative along v is the tangent.",
              "Which part of unpack_dual(out) holds the derivative?"),
        Wrong("onehot_seed", lambda x, v: analytic(x, [1.0] * N),
              "This is J times a vector of ones, the sum of each row of J, whatever v is: the "
              "tangent given to make_dual was ones, not the direction asked for. The tangent of "
              "the input is the direction the derivative is taken along.",
              "Which argument of make_dual sets the direction, and what should it be here?"),
    ),
)
