"""micrograd's fan-out example: f = (a b)(a + b); a and b each feed two nodes, so their
gradients are sums of two contributions (the bug Karpathy fixes in lecture 1)."""

import random

import torch

from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong


def reference(a, b):
    ta, tb = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (a, b))
    return torch.stack(torch.autograd.grad((ta * tb) * (ta + tb), [ta, tb]))


def analytic(a, b):
    d, e = a * b, a + b
    return [e * b + d, e * a + d]


def finite_diff(a, b, h=1e-6):
    def f(x, y):
        return (x * y) * (x + y)
    return [(f(a + h, b) - f(a - h, b)) / (2 * h), (f(a, b + h) - f(a, b - h)) / (2 * h)]


def draw(rng: random.Random) -> dict:
    return {"a": rng.choice((-1, 1)) * rng.uniform(0.5, 3), "b": rng.choice((-1, 1)) * rng.uniform(0.5, 3)}


EXPLAIN = ("{which} a and b feed two nodes each, d = a·b and e = a + b, so each gradient is the sum "
           "of two contributions: ∂f/∂a = (∂f/∂d)(∂d/∂a) + (∂f/∂e)(∂e/∂a). (In the engine you "
           "write next, that sum is why each _backward adds into .grad with +=.)")

EXERCISE = Exercise(
    title="Fan-out: two uses, two contributions",
    prompt=r"""
Take $a = {{a|pretty}}$, $b = {{b|pretty}}$, and build $d = a\,b$, $e = a + b$, $f = d\,e$.
Draw the graph: $a$ and $b$ each have **two** outgoing edges.

By hand (from the parameters, without autograd), give `grads` $= \left(\frac{\partial f}{\partial a},
\frac{\partial f}{\partial b}\right)$.
""",
    setup="a, b = {{a}}, {{b}}",
    answer="grads",
    solution="""d, e = a * b, a + b
# f = d * e: df/dd = e, df/de = d; then d -> a (x b), e -> a (x 1), and the same for b
grads = [e * b + d * 1, e * a + d * 1]""",
    by_hand=True,
    kind=Tensor(shape=(2,)),
    params={"a": -2.0, "b": 3.0},
    hidden=({"a": 1.5, "b": 0.5}, {"a": -0.8, "b": -2.5}),
    draw=draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("fanout_adds", lambda a, b: [(a + b) * b, (a + b) * a],
              EXPLAIN.format(which="Only the path through d is here."),
              "List every edge leaving a. What happens to the contributions of two edges?"),
        Wrong("fanout_adds", lambda a, b: [a * b, a * b],
              EXPLAIN.format(which="Only the path through e is here."),
              "List every edge leaving a. What happens to the contributions of two edges?"),
        Wrong("local_gradient_only", lambda a, b: [b + 1, a + 1],
              "Both paths are here, but each with its local derivative only (∂d/∂a and ∂e/∂a): "
              "a path's contribution is the local derivative times the gradient arriving from "
              "above, ∂f/∂d on one path and ∂f/∂e on the other.",
              "What does f do with d, and with e? Multiply each path by that."),
    ),
)
