"""The gradient of a matrix product with respect to its left factor, by hand: dA = G Bᵀ."""

import random

import torch

from autograder.kinds import TensorOrSlip
from gradtutor.key.exercise import Exercise, Wrong
from gradtutor.key.numeric import central_diff

F64 = torch.float64


def _t(v):
    return torch.tensor(v, dtype=F64)


def reference(A, B, G):
    At = _t(A).requires_grad_(True)
    (_t(G) * (At @ _t(B))).sum().backward()
    return At.grad


def analytic(A, B, G):
    return [[sum(G[i][k] * B[j][k] for k in range(2)) for j in range(4)] for i in range(3)]


def finite_diff(A, B, G):
    out = [[0.0] * 4 for _ in range(3)]
    for i in range(3):
        for j in range(4):
            def f(v, i=i, j=j):
                M = _t(A)
                M[i, j] += v
                return float((_t(G) * (M @ _t(B))).sum())
            out[i][j] = central_diff(f, 0.0)
    return out


def draw(rng: random.Random) -> dict:
    def m(r, c):
        return [[round(rng.uniform(-2, 2), 2) for _ in range(c)] for _ in range(r)]
    return {"A": m(3, 4), "B": m(4, 2), "G": m(3, 2)}


EXERCISE = Exercise(
    title="The matrix product, backwards",
    prompt=r"""
$C = A B$ with `A` of shape (3, 4) and `B` of shape (4, 2), and $L = \sum_{ik} G_{ik} C_{ik}$,
so the gradient arriving at $C$ is `G`, of shape (3, 2).

By hand: set `dA` to $\partial L / \partial A$, an expression of `A`, `B` and `G` (torch
arithmetic, no autograd). Start from one entry, $\partial L / \partial A_{ij} = \sum_k G_{ik}
B_{jk}$, then read it as a matrix product; the shapes tell you where the transpose goes.
""",
    setup="""A = torch.tensor({{A}}, dtype=torch.float64)
B = torch.tensor({{B}}, dtype=torch.float64)
G = torch.tensor({{G}}, dtype=torch.float64)""",
    answer="dA",
    solution="dA = G @ B.T   # (3, 2) @ (2, 4): the shape of A",
    by_hand=True,
    kind=TensorOrSlip(shape=(3, 4), slips=((4, 3),)),
    params={"A": [[1.0, 0.5, -1.0, 2.0], [0.0, 1.5, 1.0, -0.5], [2.0, -1.0, 0.5, 1.0]],
            "B": [[1.0, -1.0], [0.5, 2.0], [-1.5, 0.0], [1.0, 1.0]],
            "G": [[1.0, 0.5], [-1.0, 2.0], [0.5, -0.5]]},
    hidden=({"A": [[0.5, 1.0, 1.5, -2.0], [1.0, 0.0, -1.0, 0.5], [-0.5, 2.0, 1.0, 0.0]],
             "B": [[2.13, 0.58], [-1.07, 1.21], [0.04, -1.53], [1.46, 0.52]],
             "G": [[0.37, -1.12], [2.05, 0.83], [-0.61, 1.49]]},),
    draw=draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("matmul_grad_transposed", lambda A, B, G: (_t(B) @ _t(G).T),
              "This is B Gᵀ, the transpose of the gradient: shape (4, 3), where A is (3, 4). "
              "Every gradient has the shape of its tensor; the two factors are right, in the "
              "wrong order.",
              "Which product of G (3, 2) and B, transposed or not, has A's shape (3, 4)?"),
        Wrong("chain_rule_dropped", lambda A, B, G: torch.ones(3, 2, dtype=F64) @ _t(B).T,
              "This is the gradient of the plain sum of C: the upstream gradient G is left out. "
              "Each C_ik enters L with weight G_ik, and that weight travels back to A.",
              "Where does G appear in dL/dA_ij = sum over k of dL/dC_ik · dC_ik/dA_ij?"),
    ),
)
