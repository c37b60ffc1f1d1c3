"""The student writes a central-difference gradient; it is graded on other functions and points.

The function family f(a, b, c) = -a^p + sin(q·b) - 1/c + b^2.5 - a^0.5 generalises the micrograd
exercise; every hidden variant changes p, q and the point, so only a real gradient routine
passes. The tolerance (rtol 1e-7) is met by central differences with steps from 1e-7 to 1e-4, while a
forward difference (steps 1e-6, 1e-7, 1e-8 tried) or a central one with 1e-3 or 1e-10 fails at
least one variant.
"""

import math

import torch

from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Require, Wrong
from gradtutor.key.numeric import gradient


def _f(p: float, q: float):
    return lambda a, b, c: -(a**p) + math.sin(q * b) - 1 / c + b**2.5 - a**0.5


def reference(p: float, q: float, point: list[float]) -> torch.Tensor:
    v = torch.tensor(point, dtype=torch.float64, requires_grad=True)
    a, b, c = v
    (-(a**p) + torch.sin(q * b) - 1 / c + b**2.5 - a**0.5).backward()
    return v.grad


def analytic(p: float, q: float, point: list[float]) -> list[float]:
    a, b, c = point
    return [-p * a ** (p - 1) - 0.5 * a**-0.5, q * math.cos(q * b) + 2.5 * b**1.5, 1 / c**2]


def _scaled(k: float):
    return lambda p, q, point: [k * g for g in analytic(p, q, point)]


EXERCISE = Exercise(
    title="Write your own gradient checker",
    prompt=r"""
Write `central_grad(f, x)`: given a function `f` that maps a 1-D float64 tensor to a scalar
tensor, and a 1-D float64 tensor `x`, return the tensor of central-difference estimates

$$g_i = \frac{f(x + h\,e_i) - f(x - h\,e_i)}{2h}, \qquad i = 0, \dots, n-1,$$

where $e_i$ is the $i$-th unit vector. Choose the step $h$ yourself (the previous exercises
tell you which). The check calls `central_grad(f, point.clone())` on the `f` and `point` of
the setup cell, $f(a, b, c) = -a^{p} + \sin(q\,b) - 1/c + b^{2.5} - a^{0.5}$ with
$p = {{p|pretty}}$, $q = {{q|pretty}}$, and the grader calls it again on other functions and
points, so make it general. Leave `x` as it was: the caller's tensor must not change (shift a
copy, not `x` itself). Your estimate must match the true gradient to a relative error of
about $10^{-7}$.
""",
    setup="""p, q = {{p}}, {{q}}


def f(v):
    a, b, c = v
    return -a**p + torch.sin(q * b) - 1 / c + b**2.5 - a**0.5


point = torch.tensor({{point}}, dtype=torch.float64)""",
    answer="central_grad",
    call="central_grad(f, (x_in := point.clone()))",
    placeholder='''def central_grad(f, x):
    """Central-difference gradient of the scalar function f at the 1-D tensor x."""
    return ...''',
    solution='''def central_grad(f, x, h=1e-5):
    """Central-difference gradient of the scalar function f at the 1-D tensor x."""
    grad = torch.zeros_like(x)
    for i in range(x.numel()):
        step = torch.zeros_like(x)
        step[i] = h
        grad[i] = (f(x + step) - f(x - step)) / (2 * h)
    return grad''',
    requires=(Require("input_unchanged", "torch.equal(x_in, point)", "the input x left unchanged",
                      "Your function changed the tensor it was given: shifting x in place and back "
                      "does not restore it exactly in floating point (x + h - h is not always x), "
                      "and the caller's point has moved.",
                      "Build each shifted point as a new tensor, e.g. x + step with a fresh step "
                      "vector, and never write into x."),),
    kind=Tensor(shape=(3,), rtol=1e-7, atol=1e-9),
    params={"p": 3.0, "q": 3.0, "point": [2.0, 3.0, 4.0]},
    hidden=({"p": 2.0, "q": -1.5, "point": [1.2, 0.7, -0.6]},
            {"p": 1.5, "q": 4.0, "point": [0.8, 2.4, 0.7]}),
    draw=lambda rng: {"p": rng.uniform(1, 4), "q": rng.uniform(-4, 4),
                      "point": [rng.uniform(0.5, 3), rng.uniform(0.5, 3),
                                rng.choice([-1, 1]) * rng.uniform(1, 4)]},
    reference=reference,
    analytic=analytic,
    finite_diff=lambda p, q, point: gradient(_f(p, q), point, h=1e-5),
    wrong=(
        Wrong("difference_quotient", _scaled(2.0),
              "Every entry is twice the gradient: the difference f(x + h·eᵢ) - f(x - h·eᵢ) was "
              "divided by h, but the two points are 2h apart.",
              "Divide the rise by the full distance between the two points."),
        Wrong("perturb_one_coordinate",
              lambda p, q, point: [sum(analytic(p, q, point))] * 3,
              "Every entry equals the sum of the partial derivatives: all coordinates were nudged "
              "at once (x ± h·[1, 1, 1]), which measures the slope along the diagonal. A partial "
              "derivative moves one coordinate and holds the others still.",
              "Build a step vector that is zero except at position i."),
        Wrong("sign_error", _scaled(-1.0),
              "Every entry has the wrong sign: the difference was taken as f(x - h·eᵢ) - "
              "f(x + h·eᵢ). A slope is the value on the right minus the value on the left.",
              "Check the order of the two evaluations in the numerator."),
    ),
)
