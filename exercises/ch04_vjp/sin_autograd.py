"""d2l 2.5, exercise 2: the derivative of sin at many points, found by autograd, not by writing
cos. The grader calls the student's dsin with cos switched off (torch.cos, Tensor.cos, math.cos
and numpy.cos raise while it runs); sin's own backward formula still runs inside autograd.
"""

import math

import torch

from autograder.harness import call
from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong
from gradtutor.key.numeric import central_diff

N = 5


def reference(xs: list[float]) -> torch.Tensor:
    x = torch.tensor(xs, dtype=torch.float64, requires_grad=True)
    torch.sin(x).sum().backward()
    return x.grad


def analytic(xs: list[float]) -> list[float]:
    return [math.cos(v) for v in xs]


def finite_diff(xs: list[float]) -> list[float]:
    return [central_diff(math.sin, v) for v in xs]


def _draw(rng) -> dict:
    return {"xs": sorted(rng.uniform(-4, 4) for _ in range(N))}


SETUP = '''xs_values = {{xs}}
from autograder.harness import without_cos   # what the grader runs: fn with every cos switched off'''

EXERCISE = Exercise(
    title="d2l: the derivative of sin, without cos",
    prompt=r"""
From *Dive into Deep Learning* (section 2.5, exercise 2): "Let $f(x) = \sin(x)$. Plot the graph
of $f$ and of its derivative $f'$. Do not exploit the fact that $f'(x) = \cos(x)$ but rather use
automatic differentiation to get the result."

Write `dsin(x)`: given a tensor `x` of points (not requiring grad), return $f'$ at every point,
computed by autograd. One `backward()` must give all the points at once: which seed, or which
scalar, does that? The grader runs `without_cos(dsin, xs_values)` (setup cell), which switches
`cos` off while your function runs, at `xs_values = {{xs}}` and at fresh points. The plot comes
after the exercise.
""",
    setup=SETUP,
    answer="dsin",
    call=call("without_cos(dsin, xs_values)"),
    placeholder="def dsin(x):\n    return ...",
    solution="""def dsin(x):
    x = x.clone().requires_grad_()
    torch.sin(x).sum().backward()      # the sum seeds every point with 1
    return x.grad""",
    kind=Tensor(shape=(N,)),
    params={"xs": [0.0, 0.5, 1.0, 2.0, 3.0]},
    hidden=({"xs": [-2.0, -0.5, 1.5, 2.5, 4.0]},),
    draw=_draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("value_not_derivative", lambda xs: [math.sin(v) for v in xs],
              "These are the values sin(x), not its slopes. backward() fills x.grad with the "
              "derivative; return that, not the output.",
              "After backward(), which tensor holds the derivative?"),
        Wrong("seed_selects_wrt", lambda xs: [v * math.cos(v) for v in xs],
              "This is sin(x).backward(x): the seed x weighs each output by x, so x.grad is "
              "x · sin'(x). The seed is the gradient arriving from above, not the variable to "
              "differentiate by.",
              "Seed with ones, or differentiate sin(x).sum()."),
        Wrong("sign_error", lambda xs: [-math.cos(v) for v in xs],
              "The sign is flipped: the slope of sin is positive where sin rises, at 0 for "
              "instance. This is the derivative of cos, or a descent step's direction.",
              "Look at the plot of sin near 0: does it rise or fall?"),
    ),
)
