"""Outline Ch 5 (dA = G Bᵀ, dB = Aᵀ G), as a function the student writes and the grader calls
on fresh matrices. B is square, so a transposed answer has the right shape and must be caught
by its values."""

import random

import torch

from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong
from gradtutor.key.numeric import tensor_gradient

ROWS, K = 2, 3  # A: (2, 3), B: (3, 3), C = A @ B and G: (2, 3)


def reference(A: list, G: list) -> torch.Tensor:
    tA, tG = torch.tensor(A, dtype=torch.float64), torch.tensor(G, dtype=torch.float64)
    B = torch.zeros(K, K, dtype=torch.float64, requires_grad=True)
    (tA @ B).backward(tG)
    return B.grad


def analytic(A: list, G: list) -> list[list[float]]:
    # C_ij = sum_k A_ik B_kj, so dL/dB_kj = sum_i A_ik G_ij: (Aᵀ G)_kj
    return [[sum(A[i][k] * G[i][j] for i in range(ROWS)) for j in range(K)] for k in range(K)]


def finite_diff(A: list, G: list) -> torch.Tensor:
    tA, tG = torch.tensor(A, dtype=torch.float64), torch.tensor(G, dtype=torch.float64)
    return tensor_gradient(lambda B: ((tA @ B) * tG).sum(), torch.zeros(K, K, dtype=torch.float64))


def transposed(A: list, G: list) -> list[list[float]]:
    good = analytic(A, G)
    return [[good[j][k] for j in range(K)] for k in range(K)]


def draw(rng: random.Random) -> dict:
    return {"A": [[rng.uniform(-2, 2) for _ in range(K)] for _ in range(ROWS)],
            "G": [[rng.uniform(-2, 2) for _ in range(K)] for _ in range(ROWS)]}


EXERCISE = Exercise(
    title="The gradient of a matrix product, as code",
    prompt=r"""
For $C = AB$ with $A$ of shape $2\times 3$ and a square $B$ ($3\times 3$), the gradient arriving
at $C$ is a $2\times 3$ matrix $G = \partial L/\partial C$. Write a function
`matmul_grad_B(A, G)` that returns $\partial L/\partial B$ ($3\times 3$). Because $B$ is square,
a transposed answer has the right shape too: let the indices decide. The grader calls your
function on the matrices of the setup cell and on fresh ones.
""",
    setup="""A = torch.tensor({{A}}, dtype=torch.float64)
G = torch.tensor({{G}}, dtype=torch.float64)""",
    answer="matmul_grad_B",
    call="matmul_grad_B(A.clone(), G.clone())",
    placeholder="def matmul_grad_B(A, G):\n    return ...",
    solution="""def matmul_grad_B(A, G):
    return A.T @ G""",
    by_hand=True,
    kind=Tensor(shape=(K, K)),
    params={"A": [[1.0, 2.0, 0.0], [-1.0, 0.5, 3.0]], "G": [[1.0, 0.0, -1.0], [2.0, 1.0, 0.5]]},
    hidden=({"A": [[0.5188, -1.0375, 2.075], [1.5563, 1.0375, -0.5188]], "G": [[-2.0, 1.0, 0.0], [0.5, 0.5, 3.0]]},),
    draw=draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("matmul_transpose", transposed,
              "This is the transpose, Gᵀ A. B_kj multiplies A_ik inside C_ij, so ∂L/∂B_kj = "
              "Σ_i A_ik G_ij: the row index k belongs to A's columns and the column index j to "
              "G's columns, which is Aᵀ G.",
              "Write C_ij as a sum over k. Which index of A and which of G meet B_kj?"),
        Wrong("chain_rule_dropped", lambda A, G: [[sum(A[i][k] for i in range(ROWS))] * K for k in range(K)],
              "This is Aᵀ times a matrix of ones: the gradient of C.sum(), as if every entry of C "
              "mattered equally. The upstream gradient G says how much each entry of C matters, "
              "and it has to enter the product.",
              "Where does G appear in your formula?"),
    ),
)
