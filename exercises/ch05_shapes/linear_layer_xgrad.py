"""Reference set 002, 4.1 (second half): the same layer gives x.grad = [0.2, 0.6] = W (∂L/∂z)ᵀ."""

import torch

from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong
from gradtutor.key.numeric import gradient

from ._common import draw, loss, mask

PARAMS = {"x": [1.0, 2.0], "W": [[0.5, -0.3], [0.2, 0.4]], "b": [0.1, -0.2]}


def reference(x: list, W: list, b: list) -> torch.Tensor:
    tx = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    tW = torch.tensor(W, dtype=torch.float64, requires_grad=True)
    tb = torch.tensor(b, dtype=torch.float64, requires_grad=True)
    torch.relu(tx @ tW + tb).sum().backward()
    return tx.grad


def analytic(x: list, W: list, b: list) -> list[float]:
    # dL/dx_i = sum_j W_ij * dL/dz_j: each input collects from every unit it feeds (row i of W)
    g = mask(x, W, b)
    return [sum(W[i][j] * g[j] for j in range(2)) for i in range(2)]


def transposed(x: list, W: list, b: list) -> list[float]:
    g = mask(x, W, b)
    return [sum(W[j][i] * g[j] for j in range(2)) for i in range(2)]


def forward_value(x: list, W: list, b: list) -> list[float]:
    return [sum(x[i] * W[i][j] for i in range(2)) + b[j] for j in range(2)]


EXERCISE = Exercise(
    title="The input gradient of a linear layer",
    prompt=r"""
Same layer, same numbers: $z = xW + b$, $L = \sum_j \mathrm{ReLU}(z_j)$ with
$x = {{x|pretty}}$, $W = {{W|pretty}}$, $b = {{b|pretty}}$. After `L.backward()`, what is
`x.grad`? Give two numbers, computed from `x0`, `W0` and `b0`.
""",
    setup="x0 = {{x}}\nW0 = {{W}}\nb0 = {{b}}",
    answer="x_grad",
    placeholder="x_grad = ...  # two numbers, the same shape as x",
    solution="""x = torch.tensor(x0, requires_grad=True)
W = torch.tensor(W0, requires_grad=True)
b = torch.tensor(b0, requires_grad=True)
L = torch.relu(x @ W + b).sum()
L.backward()
x_grad = x.grad""",
    kind=Tensor(shape=(2,)),
    params=PARAMS,
    hidden=({"x": [2.0, -1.0], "W": [[0.3, 0.5], [-0.4, 0.1]], "b": [0.2, 0.3]},
            {"x": [-0.5, 1.5], "W": [[-1.0375, 0.2075], [0.6225, 0.83]], "b": [0.0, 0.1]}),
    draw=draw,
    reference=reference,
    analytic=analytic,
    finite_diff=lambda x, W, b: gradient(lambda p, q: loss([p, q], W, b), x),
    wrong=(
        Wrong("matmul_transpose", transposed,
              "This contracts the upstream gradient with the wrong index of W: it sums down the "
              "columns of W (Wᵀ-style) instead of along the rows. x_i feeds z_j through W_ij, so "
              "∂L/∂x_i = Σ_j W_ij ∂L/∂z_j, row i of W weighted by the upstream gradient; in "
              "matrix form (∂L/∂z) Wᵀ for a row vector x.",
              "Which entries of W does x_1 multiply in the forward pass? Only those can carry "
              "its gradient back."),
        Wrong("local_gradient_only", lambda x, W, b: mask(x, W, b),
              "That is ∂L/∂z, the gradient arriving at the layer's output. To reach x it still "
              "has to pass back through the matrix product, which multiplies by the weights.",
              "One more box to go back through: z = xW + b. What is ∂z_j/∂x_i?"),
        Wrong("value_not_derivative", forward_value,
              "These are the forward values z = xW + b, not a gradient. x.grad says how fast L "
              "changes when each input is nudged.",
              "Differentiate L with respect to x_1 and x_2, then evaluate."),
    ),
)
