"""The gradient of a broadcast add, by hand: the input of shape (3, 1) was used along a whole
row, so its gradient sums the row."""

import random

import torch

from autograder.kinds import TensorOrSlip
from gradtutor.key.exercise import Exercise, Wrong
from gradtutor.key.numeric import central_diff

F64 = torch.float64


def _t(v):
    return torch.tensor(v, dtype=F64)


def reference(a, b, W):
    at = _t(a).requires_grad_(True)
    (_t(W) * (at + _t(b))).sum().backward()
    return at.grad


def analytic(a, b, W):
    return [[sum(row)] for row in W]


def finite_diff(a, b, W):
    out = []
    for i in range(3):
        def f(v, i=i):
            shifted = [[a[k][0] + (v if k == i else 0.0)] for k in range(3)]
            return float((_t(W) * (_t(shifted) + _t(b))).sum())
        out.append([central_diff(f, 0.0)])
    return out


def draw(rng: random.Random) -> dict:
    def u():
        return round(rng.uniform(-2, 2), 2)
    return {"a": [[u()] for _ in range(3)], "b": [[u() for _ in range(4)]],
            "W": [[u() for _ in range(4)] for _ in range(3)]}


EXERCISE = Exercise(
    title="A broadcast add, backwards",
    prompt=r"""
`a` has shape (3, 1) and `b` shape (1, 4); `a + b` broadcasts both to (3, 4), and
$L = \sum_{ij} W_{ij}\,(a + b)_{ij}$ with `W` of shape (3, 4). Entry $a_i$ appears in every
entry of row $i$ of `a + b`.

By hand: set `grad_a` to $\partial L / \partial a$, an expression of `W` (torch arithmetic,
no autograd). What shape must it have?
""",
    setup="""a = torch.tensor({{a}}, dtype=torch.float64)
b = torch.tensor({{b}}, dtype=torch.float64)
W = torch.tensor({{W}}, dtype=torch.float64)""",
    answer="grad_a",
    solution="grad_a = W.sum(1, keepdim=True)   # row i of a + b used a_i four times: add them up",
    by_hand=True,
    kind=TensorOrSlip(shape=(3, 1), slips=((3, 4), (4,))),
    params={"a": [[1.0], [-0.5], [2.0]], "b": [[0.5, -1.0, 1.5, 0.25]],
            "W": [[1.0, 2.0, -1.0, 0.5], [0.0, 1.5, 1.0, -2.0], [-1.0, 0.5, 2.0, 1.0]]},
    hidden=({"a": [[0.3], [1.2], [-0.7]], "b": [[-1.0, 0.4, 0.9, 2.0]],
             "W": [[0.5, -1.5, 2.0, 1.0], [1.0, 1.0, -0.5, 0.25], [2.0, -1.0, 0.5, -0.75]]},),
    draw=draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("unbroadcast_missing", lambda a, b, W: W,
              "This is the gradient with respect to a + b, of shape (3, 4); a has shape (3, 1). "
              "a_i was copied into four positions, and a value used four times gets the sum of "
              "the four gradients: sum it back to a's shape.",
              "Over which axis was a stretched from 1 to 4? Sum the gradient over that axis."),
        Wrong("sum_wrong_axis", lambda a, b, W: [sum(W[i][j] for i in range(3)) for j in range(4)],
              "You summed over the rows (axis 0), which is what b needs: b of shape (1, 4) was "
              "stretched along axis 0. a was stretched along axis 1, the columns.",
              "Which of a's axes has size 1? That is the axis to sum."),
        Wrong("broadcast_sums", lambda a, b, W: [[sum(row) / 4] for row in W],
              "This is the mean of each row of W. Broadcasting copies a_i four times, and the "
              "four copies' gradients add: nothing divides them by 4.",
              "If L used a_i four times with weight 1 each, what would dL/da_i be?"),
        Wrong("chain_rule_dropped", lambda a, b, W: [[4.0] for _ in W],
              "This counts the uses of each a_i (4) but leaves out W: each use contributes its "
              "weight W_ij, the gradient flowing back from L.",
              "Write dL/da_i as a sum over j of dL/d(a + b)_ij times d(a + b)_ij/da_i."),
    ),
)
