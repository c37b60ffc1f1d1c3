"""Reference set 003, the answer's last snippet: y = torch.sum(torch.pow(z, 2)) is a scalar, and
y.backward(torch.tensor(1.)) is the same as y.backward(): z.grad = 2z. An explicit seed c scales
the result to 2cz, which shows what the argument does.
"""

import torch

from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong
from gradtutor.key.numeric import tensor_gradient

N = 5


def _z(lo: float, hi: float) -> torch.Tensor:
    return torch.linspace(lo, hi, steps=N, dtype=torch.float64)


def reference(lo: float, hi: float, c: float) -> torch.Tensor:
    rows = []
    for seed in (1.0, c):
        z = torch.linspace(lo, hi, steps=N, dtype=torch.float64, requires_grad=True)
        y = torch.sum(torch.pow(z, 2))
        y.backward(torch.tensor(seed, dtype=torch.float64))
        rows.append(z.grad)
    return torch.stack(rows)


def analytic(lo: float, hi: float, c: float) -> list[list[float]]:
    # d/dz_j Σ z_i² = 2 z_j; a scalar output's seed multiplies the whole gradient
    step = (hi - lo) / (N - 1)
    z = [lo + i * step for i in range(N)]
    return [[2 * v for v in z], [2 * c * v for v in z]]


def finite_diff(lo: float, hi: float, c: float) -> torch.Tensor:
    z = _z(lo, hi)
    g = tensor_gradient(lambda t: torch.sum(t**2), z)
    return torch.stack([g, c * g])


def _draw(rng) -> dict:
    lo = rng.uniform(-3, 1)
    return {"lo": lo, "hi": lo + rng.uniform(1, 4), "c": rng.choice((-1, 1)) * rng.uniform(1.5, 4)}


EXERCISE = Exercise(
    title="A seed for a scalar: torch.tensor(1.)",
    prompt=r"""
The forum answer ends with this snippet, "the same as" `y.backward()`:

```python
z = torch.linspace({{lo}}, {{hi}}, steps=5, requires_grad=True)
y = torch.sum(torch.pow(z, 2))
y.backward(torch.tensor(1.))
print(z.grad)
```

What does it print? And on a fresh `z`, what is `z.grad` after `y.backward(torch.tensor({{c}}))`?
Give both as the two rows of `seeded_scalar_grads` (shape (2, 5)): row 0 for the seed `1.`,
row 1 for the seed `{{c|pretty}}`.
""",
    setup="lo, hi, c = {{lo}}, {{hi}}, {{c}}",
    answer="seeded_scalar_grads",
    placeholder="seeded_scalar_grads = ...  # [z.grad with seed 1., z.grad with seed c]",
    solution="""rows = []
for seed in (1.0, c):
    z = torch.linspace(lo, hi, steps=5, requires_grad=True)
    y = torch.sum(torch.pow(z, 2))
    y.backward(torch.tensor(seed))
    rows.append(z.grad)
seeded_scalar_grads = torch.stack(rows)""",
    kind=Tensor(shape=(2, N)),
    params={"lo": -1.0, "hi": 1.0, "c": 3.0},
    hidden=({"lo": 0.5, "hi": 3.0, "c": -2.0}, {"lo": -2.075, "hi": 0.0, "c": 2.5}),
    draw=_draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("seed_is_vjp", lambda lo, hi, c: [analytic(lo, hi, c)[0]] * 2,
              "The second row ignores the seed. For a scalar output the seed is the upstream "
              "gradient dL/dy of some L further on; backward multiplies the whole gradient by "
              "it, so seed c gives c · 2z. Seed 1. changes nothing, which is why "
              "y.backward(torch.tensor(1.)) is the same as y.backward().",
              "What does the argument of backward() multiply?"),
        Wrong("seed_returned", lambda lo, hi, c: [[1.0] * N, [c] * N],
              "These are the seeds, spread over z. The seed is where the backward pass starts "
              "(dL/dy), not its result; z.grad is the seed times dy/dz = 2z.",
              "Write the chain rule for z.grad with y in the middle."),
        Wrong("value_not_derivative",
              lambda lo, hi, c: [[v * v for v in _z(lo, hi).tolist()],
                                 [c * v * v for v in _z(lo, hi).tolist()]],
              "These are the terms z² of y (times the seed), not their derivatives 2z.",
              "Differentiate z² before multiplying by the seed."),
    ),
)
