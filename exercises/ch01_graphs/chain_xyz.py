"""The smallest circuit with a chain: f = (x + y)·z at (-2, 5, -4) (CS231n's first example)."""

import torch

from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong
from gradtutor.key.numeric import gradient


def f_value(x: float, y: float, z: float) -> float:
    return (x + y) * z


def reference(x: float, y: float, z: float) -> torch.Tensor:
    leaves = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (x, y, z)]
    tx, ty, tz = leaves
    ((tx + ty) * tz).backward()
    return torch.stack([t.grad for t in leaves])


def analytic(x: float, y: float, z: float) -> list[float]:
    # q = x + y, f = q z: df/dq = z, dq/dx = dq/dy = 1, df/dz = q
    return [z, z, x + y]


EXERCISE = Exercise(
    title="A two-box circuit",
    prompt=r"""
Take $q = x + y$ and $f = q\,z$ with $x = {{x|pretty}}$, $y = {{y|pretty}}$, $z = {{z|pretty}}$
(leaves that require grad). After `f.backward()`, what are
$\left(\frac{\partial f}{\partial x}, \frac{\partial f}{\partial y}, \frac{\partial f}{\partial z}\right)$?
Give them as a list in that order, as expressions of `x0`, `y0` and `z0`.
""",
    setup="x0, y0, z0 = {{x}}, {{y}}, {{z}}",
    answer="grads_xyz",
    placeholder="grads_xyz = ...  # [df/dx, df/dy, df/dz]",
    solution="""q0 = x0 + y0                  # the sum box: passes the gradient on unchanged
grads_xyz = [z0, z0, q0]       # df/dq = z, times dq/dx = dq/dy = 1; df/dz = q""",
    by_hand=True,
    kind=Tensor(shape=(3,)),
    params={"x": -2.0, "y": 5.0, "z": -4.0},
    hidden=({"x": 1.35, "y": -0.4625, "z": 2.35},),
    draw=lambda rng: {k: rng.uniform(-4, 4) for k in "xyz"},
    reference=reference,
    analytic=analytic,
    finite_diff=lambda x, y, z: gradient(f_value, [x, y, z]),
    wrong=(
        Wrong("local_gradient_only", lambda x, y, z: [1.0, 1.0, x + y],
              "1 is the local gradient of the sum box (dq/dx = dq/dy = 1). The gradient "
              "arriving from above, df/dq = z, still has to multiply it.",
              "Write df/dx as (df/dq)(dq/dx) and evaluate both factors."),
        Wrong("value_not_derivative", lambda x, y, z: [z, z, (x + y) * z],
              "The third entry is f itself, (x + y)z. The derivative of q·z with respect to "
              "z is the other input, q = x + y.",
              "What does a product box send back to each of its inputs?"),
    ),
)
