"""Reference set 003: z = linspace(-1, 1, 5), y = z, y.backward(z) → z.grad = z (a VJP, not ones)."""

import torch

from autograder.kinds import TensorOrSlip
from gradtutor.key.exercise import Exercise, Wrong
from gradtutor.key.numeric import vjp

N = 5


def _z(lo: float, hi: float) -> torch.Tensor:
    return torch.linspace(lo, hi, steps=N, dtype=torch.float64)


def reference(lo: float, hi: float) -> torch.Tensor:
    z = torch.linspace(lo, hi, steps=N, dtype=torch.float64, requires_grad=True)
    y = z
    y.backward(z)
    return z.grad


def analytic(lo: float, hi: float) -> list[float]:
    # the Jacobian of the identity is I, so vᵀJ = v, and the seed v is z
    step = (hi - lo) / (N - 1)
    return [lo + i * step for i in range(N)]


EXERCISE = Exercise(
    title="The derivative of y = z is 1, so why not ones?",
    prompt=r"""
A student knows that $f(z) = z$ has derivative $1$ and tries it in PyTorch:

```python
z = torch.linspace({{lo}}, {{hi}}, steps=5, requires_grad=True)
y = z
y.backward(z)
```

They expected five ones. What is `z.grad`? Write it as an expression of `lo` and `hi`;
`torch.linspace` without `requires_grad` is fine.
""",
    setup="lo, hi = {{lo}}, {{hi}}",
    answer="grad_identity",
    solution="""z = torch.linspace(lo, hi, steps=5, dtype=torch.float64)
grad_identity = z * 1.0   # the seed z times J = I: vᵀJ is the seed itself""",
    by_hand=True,
    kind=TensorOrSlip(shape=(N,), slips=((), (N, N))),
    params={"lo": -1.0, "hi": 1.0},
    hidden=({"lo": -2.0, "hi": 0.5},),
    draw=lambda rng: (lambda lo: {"lo": lo, "hi": lo + rng.uniform(1, 4)})(rng.uniform(-3, 0)),
    reference=reference,
    analytic=analytic,
    finite_diff=lambda lo, hi: vjp(lambda t: t, _z(lo, hi), _z(lo, hi)),
    wrong=(
        Wrong("seed_is_vjp", lambda lo, hi: torch.ones(N),
              "Five ones is the derivative, but z.grad is not the derivative: y is a vector, so "
              "backward(z) computes the vector-Jacobian product zᵀJ with z as the seed. The "
              "Jacobian of y = z is the identity, so zᵀI = z lands in z.grad.",
              "What is the Jacobian of y = z, and what is the seed here?"),
        Wrong("grad_is_jacobian", lambda lo, hi: torch.eye(N),
              "That is the Jacobian of y = z, the identity matrix. backward() never builds it; it "
              "returns one vector, the seed multiplied into the Jacobian.",
              "Multiply the seed, as a row vector, into this matrix."),
        Wrong("vjp_summed", lambda lo, hi: _z(lo, hi).sum(),
              "You added the entries into one number (the dot product of the seed with the "
              "derivative). z.grad has the shape of z, one entry per input.",
              "How many numbers does z.grad hold?"),
    ),
)
