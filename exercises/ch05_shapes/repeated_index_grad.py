"""Outline Ch 5 (repeated index): gathering x[idx] with a repeated index sends one gradient per
use back to the same entry, and they add (a scatter-add), as nn.Embedding does."""

import random

import torch

from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong
from gradtutor.key.numeric import tensor_gradient

SIZE = 3


def reference(x: list, idx: list, c: list) -> torch.Tensor:
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    (torch.tensor(c, dtype=torch.float64) * t[idx]).sum().backward()
    return t.grad


def analytic(x: list, idx: list, c: list) -> list[float]:
    # every use k of entry idx[k] contributes c[k]; uses of the same entry add up
    g = [0.0] * SIZE
    for i, ck in zip(idx, c, strict=True):
        g[i] += ck
    return g


def finite_diff(x: list, idx: list, c: list) -> torch.Tensor:
    tc = torch.tensor(c, dtype=torch.float64)
    return tensor_gradient(lambda t: (tc * t[idx]).sum(), torch.tensor(x, dtype=torch.float64))


def last_write_wins(x: list, idx: list, c: list) -> list[float]:
    g = [0.0] * SIZE
    for i, ck in zip(idx, c, strict=True):
        g[i] = ck
    return g


def first_write_wins(x: list, idx: list, c: list) -> list[float]:
    g: list[float | None] = [None] * SIZE
    for i, ck in zip(idx, c, strict=True):
        g[i] = ck if g[i] is None else g[i]
    return [0.0 if v is None else v for v in g]


def counts(x: list, idx: list, c: list) -> list[float]:
    return [float(idx.count(i)) for i in range(SIZE)]


def draw(rng: random.Random) -> dict:
    n = rng.randint(3, 6)
    idx = [rng.randrange(SIZE) for _ in range(n - 1)]
    idx.append(idx[0])  # at least one repeat
    return {"x": [rng.uniform(-2, 2) for _ in range(SIZE)], "idx": idx,
            "c": [rng.choice([-1, 1]) * rng.uniform(0.5, 3) for _ in range(n)]}


EXERCISE = Exercise(
    title="An index used twice",
    prompt=r"""
```python
x = torch.tensor({{x}}, requires_grad=True)
idx = {{idx}}
c = torch.tensor({{c}})
y = x[idx]            # picks entries of x; some more than once
L = (c * y).sum()
L.backward()
```

What is `x.grad`? Give three numbers, computed from `x0`, `idx` and `c0`.
""",
    setup="x0 = {{x}}\nidx = {{idx}}\nc0 = {{c}}",
    answer="x_grad_idx",
    placeholder="x_grad_idx = ...  # three numbers, the shape of x",
    solution="""x = torch.tensor(x0, requires_grad=True)
L = (torch.tensor(c0) * x[idx]).sum()
L.backward()
x_grad_idx = x.grad""",
    kind=Tensor(shape=(SIZE,)),
    params={"x": [1.5, -2.0, 0.5], "idx": [0, 0, 1], "c": [1.0, 2.0, 3.0]},
    hidden=({"x": [0.5, 1.0, -1.0], "idx": [2, 1, 2, 2], "c": [0.5188, -1.0375, 2.075, 1.5563]},),
    draw=draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("repeated_index", last_write_wins,
              "Only the last use of each repeated entry counted, as if x.grad[idx] = ... were an "
              "assignment. Each time an entry is picked it feeds a separate term of L, and the "
              "backward of indexing adds (scatter-add) every one of those contributions into the "
              "same slot.",
              "List the terms of L that contain x_0. How many are there?"),
        Wrong("chain_rule_dropped", counts,
              "This counts how often each entry is picked, which is the gradient of y.sum(). "
              "Here each picked copy is multiplied by its own weight c_k, and that weight is what "
              "flows back.",
              "What is ∂(c_k y_k)/∂y_k?"),
        Wrong("repeated_index", first_write_wins,
              "Each entry of x got the weight of its first use only: a later use of the same "
              "index did not add to it. In the backward pass of x[idx], every use sends its "
              "gradient back to its entry, and they add up.",
              "Which entries of x does idx pick more than once, and how many gradients reach "
              "each?"),
    ),
)
