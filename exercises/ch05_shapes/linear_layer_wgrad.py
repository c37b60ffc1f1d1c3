"""Reference set 002, 4.1: a linear layer with ReLU. x = [1, 2], W = [[0.5, -0.3], [0.2, 0.4]],
b = [0.1, -0.2], L = sum(relu(xW + b)) gives W.grad = [[1, 1], [2, 2]] (an outer product)."""

import torch

from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong, value_instead
from gradtutor.key.numeric import gradient

from ._common import draw, loss, mask


def reference(x: list, W: list, b: list) -> torch.Tensor:
    tx = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    tW = torch.tensor(W, dtype=torch.float64, requires_grad=True)
    tb = torch.tensor(b, dtype=torch.float64, requires_grad=True)
    torch.relu(tx @ tW + tb).sum().backward()
    return tW.grad


def analytic(x: list, W: list, b: list) -> list[list[float]]:
    # dL/dW_ij = x_i * dL/dz_j: row index from x, column index from the upstream gradient
    g = mask(x, W, b)
    return [[x[i] * g[j] for j in range(2)] for i in range(2)]


def finite_diff(x: list, W: list, b: list) -> list[list[float]]:
    flat = [W[0][0], W[0][1], W[1][0], W[1][1]]
    g = gradient(lambda a, c, d, e: loss(x, [[a, c], [d, e]], b), flat)
    return [g[:2], g[2:]]


def transposed(x: list, W: list, b: list) -> list[list[float]]:
    g = mask(x, W, b)
    return [[g[i] * x[j] for j in range(2)] for i in range(2)]


def upstream_only(x: list, W: list, b: list) -> list[list[float]]:
    g = mask(x, W, b)
    return [[g[j] for j in range(2)] for _ in range(2)]


EXERCISE = Exercise(
    title="The weight gradient of a linear layer",
    prompt=r"""
A tiny layer with a ReLU: a row vector $x$ of two inputs, a $2\times 2$ weight matrix $W$ and a
bias $b$,

$$z = xW + b, \qquad L = \sum_j \mathrm{ReLU}(z_j),$$

with $x = {{x|pretty}}$, $W = {{W|pretty}}$ (rows first) and $b = {{b|pretty}}$; all three
require grad. After `L.backward()`, what is `W.grad`? Give a $2\times 2$ nested list or tensor,
as an expression of `x0`, `W0` and `b0`.
""",
    setup="x0 = {{x}}\nW0 = {{W}}\nb0 = {{b}}",
    answer="W_grad",
    placeholder="W_grad = ...  # 2x2, the same shape as W",
    solution="""z = [x0[0] * W0[0][j] + x0[1] * W0[1][j] + b0[j] for j in range(2)]   # the forward pass
open_ = [1.0 if zj > 0 else 0.0 for zj in z]                              # ReLU'(z_j)
W_grad = [[x0[i] * open_[j] for j in range(2)] for i in range(2)]        # dL/dW_ij = x_i·ReLU'(z_j)""",
    by_hand=True,
    kind=Tensor(shape=(2, 2)),
    params={"x": [1.0, 2.0], "W": [[0.5, -0.3], [0.2, 0.4]], "b": [0.1, -0.2]},
    hidden=({"x": [2.0, -1.0], "W": [[0.3, 0.5], [-0.4, 0.1]], "b": [0.2, 0.3]},
            {"x": [-0.5188, 1.5563], "W": [[-1.0, 0.2], [0.6, 0.8]], "b": [0.0, 0.1]}),
    draw=draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("matmul_transpose", transposed,
              "This is the transpose of W.grad. W_ij multiplies x_i inside z_j, so ∂L/∂W_ij = "
              "x_i · ∂L/∂z_j: the row index belongs to x and the column index to the upstream "
              "gradient. The gradient is the outer product xᵀ(∂L/∂z), a column times a row; "
              "writing it as (∂L/∂z)ᵀx swaps rows and columns. For a square W the shapes cannot "
              "warn you, so the indices must.",
              "Write z_1 and z_2 out in full. In which of them does W_12 appear, and what "
              "multiplies it there?"),
        Wrong("chain_rule_dropped", upstream_only,
              "These are the gradients arriving at z (∂L/∂z, copied into every row), without the "
              "local factor ∂z_j/∂W_ij = x_i. Each weight's gradient is the upstream gradient "
              "times the input that the weight multiplies.",
              "Nudge W_ij by h: by how much does z_j move?"),
        value_instead(lambda x, W, b: [[x[i] * (sum(x[m] * W[m][j] for m in range(2)) + b[j])
                                        for j in range(2)] for i in range(2)],
                      "z = xW + b, the ReLU's input, where ReLU'(z) belongs"),
    ),
)
