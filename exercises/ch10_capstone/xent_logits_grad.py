"""The gradient of cross-entropy with respect to the logits: softmax minus one-hot."""

import math
import random

import torch
import torch.nn.functional as F

from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong

C = 4


def _softmax(z):
    m = max(z)
    e = [math.exp(v - m) for v in z]
    return [v / sum(e) for v in e]


def reference(z, t):
    zt = torch.tensor(z, dtype=torch.float64, requires_grad=True)
    F.cross_entropy(zt[None], torch.tensor([t])).backward()
    return zt.grad


def analytic(z, t):
    return [p - (i == t) for i, p in enumerate(_softmax(z))]


def finite_diff(z, t, h=1e-6):
    def loss(v):
        return -math.log(_softmax(v)[t])
    out = []
    for i in range(C):
        up, down = list(z), list(z)
        up[i] += h
        down[i] -= h
        out.append((loss(up) - loss(down)) / (2 * h))
    return out


def draw(rng: random.Random) -> dict:
    return {"z": [rng.uniform(-2, 2) for _ in range(C)], "t": rng.randrange(C)}


EXERCISE = Exercise(
    title="Cross-entropy's gradient at the logits",
    prompt=r"""
One example with logits $z = {{z|pretty}}$ and true class $t = {{t}}$ (counting from 0). Its
loss is $L = -\log p_t$ with $p = \mathrm{softmax}(z)$, $p_i = e^{z_i} / \sum_j e^{z_j}$.

Derive $\frac{\partial L}{\partial z_i}$ by hand (write $L = -z_t + \log\sum_j e^{z_j}$ first), then
set `dz` to the four numbers, computed from `z` and `t` with `math` (not autograd). This is the
first line of every hand-written classifier backward.
""",
    setup="z, t = {{z}}, {{t}}\nimport math",
    answer="dz",
    solution="""m = max(z)
e = [math.exp(v - m) for v in z]          # shifting by max(z) changes nothing but overflow
p = [v / sum(e) for v in e]
dz = [p[i] - (1.0 if i == t else 0.0) for i in range(len(z))]""",
    by_hand=True,
    kind=Tensor(shape=(C,)),
    params={"z": [1.0, -0.5, 2.0, 0.3], "t": 0},
    hidden=({"z": [0.2, 1.5, -1.0, 0.7], "t": 3}, {"z": [-1.2, 0.4, 0.9, 2.2], "t": 1}),
    draw=draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("xent_softmax_only", lambda z, t: _softmax(z),
              "This is softmax(z) itself. The log-sum-exp term gives p_i, but the -z_t term gives "
              "-1 at the true class: the gradient is p minus the one-hot vector of t, which is why "
              "the entries of the right answer sum to zero.",
              "Differentiate -z_t with respect to z_i. For which i is it not zero?"),
        Wrong("xent_wrt_probs", lambda z, t: [-1 / _softmax(z)[t] if i == t else 0.0 for i in range(C)],
              "This is ∂L/∂p, the derivative with respect to the probabilities: -1/p_t at the true "
              "class. The logits are one step further back: every p_j depends on every z_i through "
              "the softmax's normalisation.",
              "Write L in terms of z directly: -z_t + log Σ exp(z_j)."),
        Wrong("xent_onehot", lambda z, t: [q - 1 for q in _softmax(z)],
              "This is softmax(z) minus 1 at every class. The -1 comes from the -z_t term of "
              "L, and z_t is one logit only: its derivative with respect to z_i is -1 for i = t "
              "and 0 for every other i.",
              "Differentiate -z_t with respect to z_i. For which i is it not zero?"),
    ),
)
