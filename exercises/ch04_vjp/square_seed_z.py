"""Reference set 003 (second answer): z = linspace(1, 5, 5), y = z², y.backward(z) → 2z² = [2, 8, 18, 32, 50]."""

import torch

from autograder.kinds import TensorOrSlip
from gradtutor.key.exercise import Exercise, Wrong
from gradtutor.key.numeric import vjp

N = 5


def _z(lo: float, hi: float) -> torch.Tensor:
    return torch.linspace(lo, hi, steps=N, dtype=torch.float64)


def reference(lo: float, hi: float) -> torch.Tensor:
    z = torch.linspace(lo, hi, steps=N, dtype=torch.float64, requires_grad=True)
    y = z**2
    y.backward(z)
    return z.grad


def analytic(lo: float, hi: float) -> list[float]:
    # J = diag(2z) and the seed is z itself: entry i is z_i · 2z_i
    step = (hi - lo) / (N - 1)
    return [2 * (lo + i * step) ** 2 for i in range(N)]


EXERCISE = Exercise(
    title="Feeding z back in as the seed",
    prompt=r"""
A student wants the derivative of $y = z^2$ at five points and writes

```python
z = torch.linspace({{lo}}, {{hi}}, steps=5, requires_grad=True)
y = z ** 2
y.backward(z)
```

What is `z.grad`? (The student expected $2z$. Is that what they get?) Write it as an
expression of `lo` and `hi`; `torch.linspace` without `requires_grad` is fine.
""",
    setup="lo, hi = {{lo}}, {{hi}}",
    answer="grad_seed_z",
    solution="""z = torch.linspace(lo, hi, steps=5, dtype=torch.float64)
grad_seed_z = z * (2 * z)   # the seed z weights J = diag(2z)""",
    by_hand=True,
    kind=TensorOrSlip(shape=(N,), slips=((),)),
    params={"lo": 1.0, "hi": 5.0},
    hidden=({"lo": -2.0, "hi": 1.0},),
    draw=lambda rng: (lambda lo: {"lo": lo, "hi": lo + rng.uniform(1.5, 5)})(rng.uniform(-4, 2)),
    reference=reference,
    analytic=analytic,
    finite_diff=lambda lo, hi: vjp(lambda t: t**2, _z(lo, hi), _z(lo, hi)),
    wrong=(
        Wrong("seed_selects_wrt", lambda lo, hi: 2 * _z(lo, hi),
              "That is 2z, the derivative the student wanted, as if the argument of backward() "
              "said 'with respect to z' or did nothing at all. It does neither: it is the upstream "
              "gradient v, and backward(v) returns vᵀJ = z ⊙ 2z. Dividing z.grad by z shows the "
              "2z hiding inside.",
              "Which seed would make vᵀJ equal to the plain derivative here?"),
        Wrong("seed_returned", lambda lo, hi: _z(lo, hi),
              "That is z, the seed itself. The seed is multiplied by the local derivative of the "
              "squaring on its way back, it does not land unchanged in z.grad.",
              "Write the Jacobian of y = z² and multiply the seed into it."),
        Wrong("value_not_derivative", lambda lo, hi: _z(lo, hi) ** 3,
              "That is y times the seed, z² · z: the output's value took the place of its "
              "derivative 2z.",
              "Differentiate z² first, then weigh each entry by the seed."),
        Wrong("vjp_summed", lambda lo, hi: (2 * _z(lo, hi) ** 2).sum(),
              "You added the entries into one number. z.grad has the shape of z: one entry per "
              "input, each weighted by its own seed entry.",
              "How many numbers does z.grad hold?"),
    ),
)
