"""tanh's backward on a batch, by hand: dout · (1 − h²) with h = tanh(u), the output."""

import math
import random

import torch

from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong

K = 4


def reference(u, g):
    ut = torch.tensor(u, dtype=torch.float64, requires_grad=True)
    (grad,) = torch.autograd.grad(torch.tanh(ut), ut, torch.tensor(g, dtype=torch.float64))
    return grad


def analytic(u, g):
    return [gi / math.cosh(ui) ** 2 for ui, gi in zip(u, g, strict=True)]   # sech² = 1 − tanh²


def finite_diff(u, g, eps=1e-6):
    return [gi * (math.tanh(ui + eps) - math.tanh(ui - eps)) / (2 * eps) for ui, gi in zip(u, g, strict=True)]


def draw(rng: random.Random) -> dict:
    return {"u": [rng.choice((-1, 1)) * rng.uniform(0.2, 1.8) for _ in range(K)],
            "g": [rng.choice((-1, 1)) * rng.uniform(0.2, 1.5) for _ in range(K)]}


EXERCISE = Exercise(
    title="tanh's backward on a batch, by hand",
    prompt=r"""
Four entries of $h_{\mathrm{bn}}$, $u = {{u|pretty}}$, go through $h = \tanh(u)$, and the
gradient that arrives from above is $\partial L/\partial h = {{g|pretty}}$. Give `du`, the
four numbers $\partial L/\partial u$, computed from `u` and `g` with `math` (not autograd):
first the local derivative of $\tanh$ at each entry, then the chain rule.
""",
    setup="u, g = {{u}}, {{g}}\nimport math",
    answer="du",
    solution="""h = [math.tanh(ui) for ui in u]
du = [gi * (1 - hi ** 2) for gi, hi in zip(g, h)]   # tanh' = 1 - tanh^2: the output, squared""",
    by_hand=True,
    kind=Tensor(shape=(K,)),
    params={"u": [0.5, -1.2, 0.9, -0.3], "g": [1.0, -0.4, 0.7, 1.3]},
    hidden=({"u": [1.5, 0.25, -0.8, 1.1], "g": [-0.6, 1.2, 0.5, -1.0]},
            {"u": [-1.7, 0.6, 0.35, -0.95], "g": [0.9, 0.3, -1.4, 0.8]}),
    draw=draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("tanh_derivative_input", lambda u, g: [gi * (1 - ui ** 2) for ui, gi in zip(u, g, strict=True)],
              "You used 1 − u² for tanh'(u): the formula 1 − tanh² squares the output h = tanh(u), "
              "not the input u. In a hand-written backward the two tensors sit side by side, and "
              "the input is the one named like the layer.",
              "tanh'(u) = 1 − tanh(u)². Which of the two, u or h, is tanh(u)?"),
        Wrong("chain_rule_dropped", lambda u, g: [1 - math.tanh(ui) ** 2 for ui in u],
              "These are tanh's local derivatives alone: the gradient that arrives from above, "
              "∂L/∂h, is not multiplied in, so the numbers say how h moves, not how L does.",
              "The chain rule: ∂L/∂u = ∂L/∂h · ∂h/∂u, entry by entry."),
        Wrong("local_derivative", lambda u, g: [gi * (1 - math.tanh(ui)) for ui, gi in zip(u, g, strict=True)],
              "You used 1 − tanh(u) for tanh'(u): the derivative is 1 − tanh(u)², the square "
              "of the output, which is why it never exceeds 1 and is the same at u and −u.",
              "Differentiate tanh = sinh/cosh, or check your formula at u and −u: tanh' is even."),
        Wrong("local_derivative", lambda u, g: [gi * math.tanh(ui) * (1 - math.tanh(ui)) for ui, gi in zip(u, g, strict=True)],
              "You used tanh·(1 − tanh), the pattern of the sigmoid's derivative σ(1 − σ). "
              "tanh's is 1 − tanh²: it is 1 at u = 0, where yours is 0.",
              "Differentiate tanh = sinh/cosh, or check your formula at u = 0, where tanh is steepest."),
    ),
)
