"""Reference set 003: with a scalar output no seed is needed: sum(z) → ones, sum(z²) → 2z."""

import torch

from autograder.kinds import Table, TensorOrSlip
from gradtutor.key.exercise import Exercise, Wrong
from gradtutor.key.numeric import tensor_gradient

N = 5
ROWS = ("sum", "sum_of_squares")
KIND = Table(rows=ROWS, columns=(("grad", TensorOrSlip(shape=(N,))),))


def _z(lo: float, hi: float) -> torch.Tensor:
    return torch.linspace(lo, hi, steps=N, dtype=torch.float64)


def reference(lo: float, hi: float) -> dict:
    grads = {}
    for row, fn in zip(ROWS, (torch.sum, lambda t: torch.sum(t**2)), strict=True):
        z = torch.linspace(lo, hi, steps=N, dtype=torch.float64, requires_grad=True)
        fn(z).backward()
        grads[row] = {"grad": z.grad}
    return grads


def _table(sum_grad: object, sum_sq_grad: object) -> dict:
    return {"sum": {"grad": sum_grad}, "sum_of_squares": {"grad": sum_sq_grad}}


def analytic(lo: float, hi: float) -> dict:
    # d/dz_j Σ z_i = 1 and d/dz_j Σ z_i² = 2 z_j
    step = (hi - lo) / (N - 1)
    return _table([1.0] * N, [2 * (lo + i * step) for i in range(N)])


def finite_diff(lo: float, hi: float) -> dict:
    z = _z(lo, hi)
    return _table(tensor_gradient(torch.sum, z), tensor_gradient(lambda t: torch.sum(t**2), z))


EXERCISE = Exercise(
    title="Sum first, and no seed is needed",
    prompt=r"""
Two scalar outputs of the same `z`, each from a fresh `z`:

```python
z = torch.linspace({{lo}}, {{hi}}, steps=5, requires_grad=True)
y = torch.sum(z)            # row "sum"
y.backward()

z = torch.linspace({{lo}}, {{hi}}, steps=5, requires_grad=True)
y = torch.sum(z ** 2)       # row "sum_of_squares"
y.backward()
```

Fill in the table `scalar_grads` with `z.grad` after each `backward()`.
""",
    setup="lo, hi = {{lo}}, {{hi}}",
    answer="scalar_grads",
    placeholder='scalar_grads = ...  # {"sum": {"grad": ...}, "sum_of_squares": {"grad": ...}}',
    solution="""z = torch.linspace(lo, hi, steps=5, requires_grad=True)
torch.sum(z).backward()
grad_sum = z.grad
z = torch.linspace(lo, hi, steps=5, requires_grad=True)
torch.sum(z ** 2).backward()
scalar_grads = {"sum": {"grad": grad_sum}, "sum_of_squares": {"grad": z.grad}}""",
    kind=KIND,
    params={"lo": -1.0, "hi": 1.0},
    hidden=({"lo": 0.5188, "hi": 3.0},),
    draw=lambda rng: (lambda lo: {"lo": lo, "hi": lo + rng.uniform(1, 4)})(rng.uniform(-3, 1)),
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("value_not_derivative", lambda lo, hi: _table(torch.ones(N), _z(lo, hi) ** 2),
              "For the sum of squares you gave z², the values of the terms. The gradient of "
              "Σ z_i² with respect to z_j is the derivative of its one term that contains z_j.",
              "Differentiate z_j² with respect to z_j."),
        Wrong("power_rule", lambda lo, hi: _table(torch.ones(N), _z(lo, hi)),
              "For the sum of squares you gave z: the factor 2 of the power rule went missing. "
              "Nudging z_j by h changes z_j² by 2 z_j h + h².",
              "Expand (z_j + h)² and keep the part proportional to h."),
        Wrong("seed_is_vjp", lambda lo, hi: _table(_z(lo, hi), 2 * _z(lo, hi) ** 2),
              "These are the answers with z as the seed, as in y.backward(z). Here y is a scalar "
              "and backward() is called with no argument, so the seed is dy/dy = 1: z.grad is "
              "the true gradient, with no extra factor of z.",
              "What seed does backward() use for a one-element output?"),
        Wrong("accumulation", lambda lo, hi: _table(torch.ones(N), 2 * _z(lo, hi) + 1),
              "The sum of squares row has the first backward's ones added in, as if .grad "
              "accumulated across the two backward calls. It accumulates in one tensor only: "
              "the second z is a fresh tensor, a new leaf whose .grad starts empty.",
              "Is the z of the second backward the same tensor as the z of the first?"),
    ),
)
