"""micrograd's neuron o = tanh(x1 w1 + x2 w2 + b), differentiated by hand (lecture 1's numbers)."""

import math
import random

import torch

from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong

NAMES = ("x1", "w1", "x2", "w2", "b")


def _n(x1, w1, x2, w2, b):
    return x1 * w1 + x2 * w2 + b


def reference(x1, w1, x2, w2, b):
    leaves = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (x1, w1, x2, w2, b)]
    o = torch.tanh(leaves[0] * leaves[1] + leaves[2] * leaves[3] + leaves[4])
    return torch.stack(torch.autograd.grad(o, leaves))


def _from_dn(dn, x1, w1, x2, w2, b):
    return [w1 * dn, x1 * dn, w2 * dn, x2 * dn, dn]


def analytic(x1, w1, x2, w2, b):
    return _from_dn(1 - math.tanh(_n(x1, w1, x2, w2, b)) ** 2, x1, w1, x2, w2, b)


def finite_diff(x1, w1, x2, w2, b, h=1e-6):
    vals = [x1, w1, x2, w2, b]
    out = []
    for i in range(5):
        up, down = list(vals), list(vals)
        up[i] += h
        down[i] -= h
        out.append((math.tanh(_n(*up)) - math.tanh(_n(*down))) / (2 * h))
    return out


def draw(rng: random.Random) -> dict:
    return {"x1": rng.uniform(-2, 2), "w1": rng.uniform(-2, 2), "x2": rng.uniform(-2, 2),
            "w2": rng.uniform(-2, 2), "b": rng.uniform(-1, 1)}


EXERCISE = Exercise(
    title="Backpropagate through one neuron by hand",
    prompt=r"""
A neuron with two inputs: $n = x_1 w_1 + x_2 w_2 + b$ and $o = \tanh(n)$, with
$x_1 = {{x1|pretty}}$, $w_1 = {{w1|pretty}}$, $x_2 = {{x2|pretty}}$, $w_2 = {{w2|pretty}}$,
$b = {{b|pretty}}$ (the numbers of micrograd's first lecture).

Work backwards from $\frac{\partial o}{\partial o} = 1$: first $\frac{\partial o}{\partial n}$
(write $\tanh'$ in terms of the output $o$), then each input through the $+$ and the $\times$
nodes. Give `grads`, the five numbers
$\left(\frac{\partial o}{\partial x_1}, \frac{\partial o}{\partial w_1},
\frac{\partial o}{\partial x_2}, \frac{\partial o}{\partial w_2}, \frac{\partial o}{\partial b}\right)$,
computed from the parameters with `math` (not autograd).
""",
    setup="x1, w1, x2, w2, b = {{x1}}, {{w1}}, {{x2}}, {{w2}}, {{b}}\nimport math",
    answer="grads",
    solution="""o = math.tanh(x1 * w1 + x2 * w2 + b)
dn = 1 - o ** 2                      # tanh'(n) = 1 - tanh(n)^2 = 1 - o^2
grads = [w1 * dn, x1 * dn, w2 * dn, x2 * dn, dn]""",
    by_hand=True,
    kind=Tensor(shape=(5,)),
    params={"x1": 2.0, "w1": -3.0, "x2": 0.0, "w2": 1.0, "b": 6.881373587019543},
    hidden=({"x1": 1.5, "w1": 0.5, "x2": -1.0, "w2": 0.8, "b": 0.2},
            {"x1": -0.7, "w1": 1.2, "x2": 2.0, "w2": -0.4, "b": -0.3}),
    draw=draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("tanh_derivative_input",
              lambda **p: _from_dn(1 - _n(**p) ** 2, **p),
              "You used 1 - n² for tanh'(n): the formula 1 - tanh² wants the output o = tanh(n), "
              "not the input n. This is the slip of the whole chapter's engine too: a local "
              "derivative written with the wrong variable.",
              "tanh'(n) = 1 - tanh(n)². Which of n and o is tanh(n)?"),
        Wrong("local_gradient_only",
              lambda **p: _from_dn(1.0, **p),
              "These are the local derivatives of n only: the factor ∂o/∂n that the tanh node "
              "contributes was left out of every gradient.",
              "Every path from an input to o goes through the tanh node. What does it multiply by?"),
        Wrong("local_derivative",
              lambda **p: [p["x1"] * _dn(**p), p["w1"] * _dn(**p), p["x2"] * _dn(**p), p["w2"] * _dn(**p), _dn(**p)],
              "The tanh factor ∂o/∂n is right, but each input of a × node got its own value: the "
              "local derivative of x·w with respect to x is w, the other factor, and with respect "
              "to w it is x.",
              "Nudge x1 by a small h: by how much does x1·w1 move?"),
        Wrong("local_derivative",
              lambda **p: _from_dn(1 - math.tanh(_n(**p)), **p),
              "The chain is right, but tanh'(n) was taken as 1 - tanh(n): the square is missing. "
              "tanh'(n) = 1 - tanh(n)².",
              "Differentiate tanh(n) = sinh(n)/cosh(n) once, and write the result with tanh."),
    ),
)


def _dn(x1, w1, x2, w2, b):
    return 1 - math.tanh(_n(x1, w1, x2, w2, b)) ** 2
