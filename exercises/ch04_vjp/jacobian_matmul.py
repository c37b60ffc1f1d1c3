"""The Jacobian of f(x) = A x is A: shape (outputs, inputs) = (2, 3) (content map M35, outline 4.4)."""

import torch
from torch.func import jacrev

from autograder.kinds import TensorOrSlip
from gradtutor.key.exercise import Exercise, Wrong

from ._common import fd_jacobian


def _t(v: list) -> torch.Tensor:
    return torch.tensor(v, dtype=torch.float64)


def reference(A: list[list[float]], x0: list[float]) -> torch.Tensor:
    a = _t(A)
    return jacrev(lambda x: a @ x)(_t(x0))


def analytic(A: list[list[float]], x0: list[float]) -> list[list[float]]:
    # (Ax)_i = Σ_j A_ij x_j, so ∂(Ax)_i/∂x_j = A_ij: the matrix itself, whatever x is
    return A


def _draw(rng) -> dict:
    return {"A": [[round(rng.uniform(-3, 3), 2) for _ in range(3)] for _ in range(2)],
            "x0": [rng.uniform(-2, 2) for _ in range(3)]}


EXERCISE = Exercise(
    title="The Jacobian of a matrix product",
    prompt=r"""
Let $f(x) = A x$ with

```python
A = torch.tensor({{A}})
x = torch.tensor({{x0}})
```

so $f$ maps three numbers to two. What is the Jacobian $J = \partial f / \partial x$ at `x`, as
`torch.func.jacrev(f)(x)` returns it? Build it with torch (`jacrev`, or one backward per
output) or write it down by hand; the shape is part of the answer.
""",
    setup="""A = torch.tensor({{A}})
x = torch.tensor({{x0}})

def f(x):
    return A @ x""",
    answer="J",
    solution="J = torch.func.jacrev(f)(x)",
    kind=TensorOrSlip(shape=(2, 3), slips=((3, 2), (2,), (3,))),
    params={"A": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "x0": [0.5, -1.0, 2.0]},
    hidden=({"A": [[-1.0, 0.5, 2.0], [3.0, 1.0, -2.0]], "x0": [1.0, 2.0, -1.0]},),
    draw=_draw,
    reference=reference,
    analytic=analytic,
    finite_diff=lambda A, x0: fd_jacobian(lambda x: _t(A) @ x, _t(x0)),
    wrong=(
        Wrong("jacobian_orientation", lambda A, x0: _t(A).T,
              "That is the transpose, of shape (3, 2). PyTorch lays a Jacobian out as (output "
              "shape, input shape): row i holds the derivatives of output i, one column per "
              "input. f has 2 outputs and 3 inputs, so J is 2 × 3.",
              "Which index of J runs over the outputs of f?"),
        Wrong("value_not_derivative", lambda A, x0: _t(A) @ _t(x0),
              "That is f(x) = Ax, the output. The Jacobian holds the derivative of every output "
              "with respect to every input.",
              "How does output i change when you nudge input j?"),
        Wrong("onehot_seed", lambda A, x0: _t(A).sum(0),
              "That is 1ᵀJ, the column sums: what (A @ x).sum().backward() leaves in x.grad. A "
              "backward pass with an all-ones seed adds the rows of the Jacobian together; to "
              "get the rows one by one, seed with one-hot vectors.",
              "Which seed picks out row i alone?"),
    ),
)
