"""torch.func.jvp with a one-hot tangent returns one column of the Jacobian (M35, outline 4.5)."""

import torch
from torch.func import jvp

from autograder.kinds import TensorOrSlip
from gradtutor.key.exercise import Exercise, Wrong

from ._common import fd_jacobian, one_hot


def _t(v: list) -> torch.Tensor:
    return torch.tensor(v, dtype=torch.float64)


def reference(A: list[list[float]], x0: list[float], j: int, u: list[float]) -> torch.Tensor:
    a = _t(A)
    _, tangent_out = jvp(lambda x: a @ x, (_t(x0),), (_t(u),))
    return tangent_out


def analytic(A: list[list[float]], x0: list[float], j: int, u: list[float]) -> list[float]:
    # A e_j is column j of A
    return [row[j] for row in A]


def finite_diff(A: list[list[float]], x0: list[float], j: int, u: list[float]) -> torch.Tensor:
    return fd_jacobian(lambda x: _t(A) @ x, _t(x0)) @ _t(u)


def _draw(rng) -> dict:
    j = rng.choice([0, 1])
    return {"A": [[round(rng.uniform(-3, 3), 2) for _ in range(3)] for _ in range(2)],
            "x0": [rng.uniform(-2, 2) for _ in range(3)], "j": j, "u": one_hot(3, j)}


EXERCISE = Exercise(
    title="A one-hot tangent pushes forward one column",
    prompt=r"""
Forward mode goes the other way. `torch.func.jvp` takes a *tangent* $u$ shaped like the input
and returns the output together with $J u$ (shaped like the output):

```python
u = torch.tensor({{u}})   # one-hot: a 1 in position j = {{j}}
out, column = torch.func.jvp(f, (x,), (u,))
```

For the same kind of $f(x) = Ax$, with `A = torch.tensor({{A}})`, what is the tangent output
$J u$? Bind it to `column`.
""",
    setup="""A = torch.tensor({{A}})
x = torch.tensor({{x0}})
j = {{j}}

def f(x):
    return A @ x""",
    answer="column",
    solution="""u = torch.zeros(3)
u[j] = 1.0
out, column = torch.func.jvp(f, (x,), (u,))""",
    kind=TensorOrSlip(shape=(2,), slips=((3,),)),
    params={"A": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "x0": [0.5, -1.0, 2.0], "j": 0,
            "u": [1.0, 0.0, 0.0]},
    hidden=({"A": [[-1.0, 0.5, 2.0], [3.0, 1.0, -2.0]], "x0": [1.0, 2.0, -1.0], "j": 1,
             "u": [0.0, 1.0, 0.0]},),
    draw=_draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("jacobian_orientation", lambda A, x0, j, u: _t(A)[j],
              "That is row j of A, one entry per input. A Jacobian-vector product J u combines "
              "the columns of J, so it has one entry per output: a one-hot u picks column j.",
              "What shape must J u have?"),
        Wrong("onehot_seed", lambda A, x0, j, u: _t(A).sum(1),
              "That is the sum of all columns, what an all-ones tangent gives. The one-hot tangent "
              "moves input j alone.",
              "Which inputs does the tangent move?"),
        Wrong("value_not_derivative", lambda A, x0, j, u: _t(A) @ _t(x0),
              "That is f(x), the first of the two things jvp returns. The second one is the "
              "directional derivative J u: how the outputs move when x moves along u.",
              "jvp returns a pair. Which element is the derivative?"),
    ),
)
