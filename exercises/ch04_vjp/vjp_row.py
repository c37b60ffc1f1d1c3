"""torch.func.vjp with a one-hot cotangent returns one row of the Jacobian (M35, outline 4.5)."""

import torch
from torch.func import vjp

from autograder.kinds import TensorOrSlip
from gradtutor.key.exercise import Exercise, Wrong

from ._common import fd_jacobian, one_hot


def _t(v: list) -> torch.Tensor:
    return torch.tensor(v, dtype=torch.float64)


def reference(A: list[list[float]], x0: list[float], i: int) -> torch.Tensor:
    a = _t(A)
    _, pullback = vjp(lambda x: a @ x, _t(x0))
    (row,) = pullback(_t(one_hot(2, i)))
    return row


def analytic(A: list[list[float]], x0: list[float], i: int) -> list[float]:
    # e_iᵀ A is row i of A
    return A[i]


def finite_diff(A: list[list[float]], x0: list[float], i: int) -> torch.Tensor:
    return _t(one_hot(2, i)) @ fd_jacobian(lambda x: _t(A) @ x, _t(x0))


def _draw(rng) -> dict:
    return {"A": [[round(rng.uniform(-3, 3), 2) for _ in range(3)] for _ in range(2)],
            "x0": [rng.uniform(-2, 2) for _ in range(3)], "i": rng.choice([0, 1])}


EXERCISE = Exercise(
    title="A one-hot seed pulls back one row",
    prompt=r"""
Same $f(x) = Ax$, now through `torch.func.vjp`, which returns the output and a *pullback*
function that maps a seed $v$ (shaped like the output) to $v^\top J$ (shaped like the input):

```python
out, pullback = torch.func.vjp(f, x)
v = torch.tensor({{v}})   # one-hot: a 1 in position i = {{i}}
(row,) = pullback(v)
```

What is `row`, for `A = torch.tensor({{A}})`?
""",
    setup="""A = torch.tensor({{A}})
x = torch.tensor({{x0}})
i = {{i}}

def f(x):
    return A @ x""",
    answer="row",
    solution="""v = torch.zeros(2)
v[i] = 1.0
out, pullback = torch.func.vjp(f, x)
(row,) = pullback(v)""",
    kind=TensorOrSlip(shape=(3,), slips=((2,), ())),
    params={"A": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "x0": [0.5, -1.0, 2.0], "i": 0, "v": [1.0, 0.0]},
    hidden=({"A": [[-1.0, 0.5, 2.0], [3.0, 1.0, -2.0]], "x0": [1.0, 2.0, -1.0], "i": 1,
             "v": [0.0, 1.0]},),
    draw=lambda rng: (lambda p: {**p, "v": one_hot(2, p["i"])})(_draw(rng)),
    reference=lambda A, x0, i, v: reference(A, x0, i),
    analytic=lambda A, x0, i, v: analytic(A, x0, i),
    finite_diff=lambda A, x0, i, v: finite_diff(A, x0, i),
    wrong=(
        Wrong("jacobian_orientation", lambda A, x0, i, v: _t(A)[:, i],
              "That is column i of A, which has one entry per output. A vector-Jacobian product "
              "vᵀJ combines the rows of J, so it has one entry per input: a one-hot v picks row i.",
              "What shape must the pullback's result have, and why?"),
        Wrong("onehot_seed", lambda A, x0, i, v: _t(A).sum(0),
              "That is the sum of both rows, what an all-ones seed gives. The one-hot seed weighs "
              "output i by 1 and the other output by 0.",
              "Multiply the seed into J entry by entry: which rows survive?"),
        Wrong("value_not_derivative", lambda A, x0, i, v: (_t(A) @ _t(x0))[i],
              "That is output i of f(x), one number. The pullback returns a gradient: how output "
              "i changes with each of the three inputs.",
              "How many inputs does f have?"),
    ),
)
