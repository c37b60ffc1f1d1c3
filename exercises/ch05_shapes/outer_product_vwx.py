"""Outline Ch 5 (matmul gradient): L = v·(W@x) with W = [[1, 2, 3], [4, 5, 6]], x = [1, 0, -1],
v = [1, 10] gives W.grad = outer(v, x) = [[1, 0, -1], [10, 0, -10]]."""

import random

import torch

from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong
from gradtutor.key.numeric import tensor_gradient


def reference(W: list, x: list, v: list) -> torch.Tensor:
    tW = torch.tensor(W, dtype=torch.float64, requires_grad=True)
    tx = torch.tensor(x, dtype=torch.float64)
    tv = torch.tensor(v, dtype=torch.float64)
    (tv @ (tW @ tx)).backward()
    return tW.grad


def analytic(W: list, x: list, v: list) -> list[list[float]]:
    # L = sum_i v_i sum_j W_ij x_j, so dL/dW_ij = v_i x_j: the outer product of v and x
    return [[vi * xj for xj in x] for vi in v]


def finite_diff(W: list, x: list, v: list) -> torch.Tensor:
    tx = torch.tensor(x, dtype=torch.float64)
    tv = torch.tensor(v, dtype=torch.float64)
    return tensor_gradient(lambda w: tv @ (w @ tx), torch.tensor(W, dtype=torch.float64))


def draw(rng: random.Random) -> dict:
    return {"W": [[rng.uniform(-3, 3) for _ in range(3)] for _ in range(2)],
            "x": [rng.uniform(-2, 2) for _ in range(3)],
            "v": [rng.uniform(-2, 2) for _ in range(2)]}


EXERCISE = Exercise(
    title="A matrix gradient is an outer product",
    prompt=r"""
```python
W = torch.tensor({{W}}, requires_grad=True)   # shape (2, 3)
x = torch.tensor({{x}})
v = torch.tensor({{v}})
L = v @ (W @ x)                               # a number: v · (W x)
L.backward()
```

What is `W.grad`? It has the shape of `W`, $2\times 3$. Work it out entry by entry from
$L = \sum_{i,j} v_i W_{ij} x_j$, and write it as an expression of `x0` and `v0`.
""",
    setup="W0 = {{W}}\nx0 = {{x}}\nv0 = {{v}}",
    answer="W_grad_vwx",
    placeholder="W_grad_vwx = ...  # 2x3, the same shape as W",
    solution="""W_grad_vwx = [[vi * xj for xj in x0] for vi in v0]   # dL/dW_ij = v_i·x_j: the outer product v xᵀ""",
    by_hand=True,
    kind=Tensor(shape=(2, 3)),
    params={"W": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "x": [1.0, 0.0, -1.0], "v": [1.0, 10.0]},
    hidden=({"W": [[0.5, -1.0, 2.0], [1.5, 0.0, -0.5]], "x": [2.075, -1.0375, 0.5188], "v": [-1.0, 3.0]},),
    draw=draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("chain_rule_dropped", lambda W, x, v: [[vi] * 3 for vi in v],
              "Each row holds the upstream gradient v_i, but the local factor is missing: W_ij "
              "multiplies x_j, so nudging W_ij moves (Wx)_i by x_j times the nudge.",
              "Write (Wx)_1 out as a sum. What multiplies W_13 there?"),
        Wrong("local_gradient_only", lambda W, x, v: [list(x) for _ in v],
              "Every row is x: the local gradient ∂(Wx)_i/∂W_ij = x_j, without the gradient that "
              "arrives from above. L weights row i of Wx by v_i, so row i of W.grad is v_i x.",
              "How does L change when (Wx)_2 grows by one?"),
        Wrong("value_not_derivative", lambda W, x, v: [[vi * xj * wij for xj, wij in zip(x, row, strict=True)]
                                                       for vi, row in zip(v, W, strict=True)],
              "These are the individual terms v_i W_ij x_j of the sum L, not their derivatives. "
              "Differentiating v_i W_ij x_j with respect to W_ij removes W_ij.",
              "What is the derivative of a·W·b with respect to W?"),
    ),
)
