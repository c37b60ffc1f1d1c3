"""Write hvp(f, x, v): a Hessian-vector product by double backward, never forming H.

Graded on f(x) = sum(x³) + x₀x₁ at fresh x and v: H v = [6x₀v₀ + v₁, v₀ + 6x₁v₁].
"""

import torch

from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong

from ._numeric import hvp


def f_plain(x: list[float]) -> float:
    return x[0] ** 3 + x[1] ** 3 + x[0] * x[1]


def _f(t: torch.Tensor) -> torch.Tensor:
    return (t**3).sum() + t[0] * t[1]


def reference(x: list[float], v: list[float]) -> torch.Tensor:
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(_f(t), t, create_graph=True)
    (hv,) = torch.autograd.grad(g @ torch.tensor(v, dtype=torch.float64), t)
    return hv


def _grad(x: list[float]) -> list[float]:
    return [3 * x[0] ** 2 + x[1], 3 * x[1] ** 2 + x[0]]


def _hessian(x: list[float]) -> list[list[float]]:
    return [[6 * x[0], 1.0], [1.0, 6 * x[1]]]


def analytic(x: list[float], v: list[float]) -> list[float]:
    return [sum(h * w for h, w in zip(row, v, strict=True)) for row in _hessian(x)]


def _draw(rng) -> dict:
    return {"x": [rng.uniform(-2, 2), rng.uniform(-2, 2)],
            "v": [rng.choice((-1, 1)) * rng.uniform(0.5, 2), rng.choice((-1, 1)) * rng.uniform(0.5, 2)]}


SETUP = """x_values, v_values = {{x}}, {{v}}

def f(x):
    return (x**3).sum() + x[0] * x[1]

x = torch.tensor(x_values, dtype=torch.float64, requires_grad=True)
v = torch.tensor(v_values, dtype=torch.float64)"""

EXERCISE = Exercise(
    title="Write a Hessian-vector product",
    prompt=r"""
A Hessian-vector product $Hv$ costs two backward passes, whatever the size of $H$: take the
gradient $g = \nabla f(x)$ with `create_graph=True`, then differentiate the scalar $g \cdot v$
once more. Write a function `hvp(f, x, v)` that returns $H v$ this way (or with `torch.func`),
without building $H$: a tensor of the shape of `x` (not the tuple that `torch.autograd.grad`
returns).

`x` requires grad (float64); `v` has the shape of `x`. The grader calls `hvp(f, x, v)` with the
setup's $f(x) = \sum_i x_i^3 + x_0 x_1$ at `x = {{x}}`, `v = {{v}}`, and at fresh values.
""",
    setup=SETUP,
    answer="hvp",
    call="hvp(f, x, v)",
    placeholder="def hvp(f, x, v):\n    return ...",
    solution="""def hvp(f, x, v):
    (g,) = torch.autograd.grad(f(x), x, create_graph=True)
    (hv,) = torch.autograd.grad(g @ v, x)
    return hv""",
    kind=Tensor(shape=(2,)),
    params={"x": [1.0, 2.0], "v": [1.0, 0.0]},
    hidden=({"x": [-1.0, 0.5], "v": [2.0, -1.0]}, {"x": [0.2594, -2.075], "v": [-0.5, 1.5]}),
    draw=_draw,
    reference=reference,
    analytic=analytic,
    finite_diff=lambda x, v: hvp(f_plain, x, v),
    wrong=(
        Wrong("hvp_vector", lambda x, v: [6 * x[0] + 1, 1 + 6 * x[1]],
              "This is H applied to a vector of ones: the gradient of g.sum(). The vector v "
              "must enter the second backward, as the weights of g (differentiate g · v), or "
              "as its seed: torch.autograd.grad(g, x, grad_outputs=v).",
              "Where does v appear in your second differentiation?"),
        Wrong("hvp_vector", lambda x, v: [g * w for g, w in zip(_grad(x), v, strict=True)],
              "This is the gradient multiplied entry by entry by v: one differentiation, not "
              "two. Hv needs the change of the gradient along v, a second derivative.",
              "Differentiate g · v with respect to x; g must come from a call with "
              "create_graph=True."),
        Wrong("value_not_derivative", lambda x, v: _grad(x),
              "This is the gradient g itself. The Hessian-vector product differentiates g "
              "once more, along v.",
              "After computing g, what scalar do you differentiate a second time?"),
        Wrong("hessian_rows", lambda x, v: [(6 * x[0] + 1) * v[0], (1 + 6 * x[1]) * v[1]],
              "This is the gradient of g.sum(), each row of H added up, then multiplied entry by "
              "entry by v. Differentiating the sum of g's entries adds the rows of H together "
              "before v can weigh them; multiplying afterwards cannot take them apart again.",
              "In your second differentiation, which scalar is differentiated, and does v "
              "weigh g's entries before or after?"),
    ),
)
