"""Write jacobian_rows(f, x): the Jacobian built one row at a time with one-hot seeds (A7, M35)."""

import math

import torch
from torch.func import jacrev

from autograder.kinds import TensorOrSlip
from gradtutor.key.exercise import Exercise, Wrong

from ._common import fd_jacobian

# the elementwise functions the variants use, with their derivatives written out by hand
DERIVATIVES = {
    "sin": math.cos,
    "tanh": lambda t: 1 - math.tanh(t) ** 2,
    "exp": math.exp,
}


def _t(v: list) -> torch.Tensor:
    return torch.tensor(v, dtype=torch.float64)


def _f(A: list[list[float]], g: str):
    a, fn = _t(A), getattr(torch, g)
    return lambda x: a @ fn(x)


def reference(A: list[list[float]], g: str, x0: list[float]) -> torch.Tensor:
    return jacrev(_f(A, g))(_t(x0))


def analytic(A: list[list[float]], g: str, x0: list[float]) -> list[list[float]]:
    # ∂/∂x_j Σ_k A_ik g(x_k) = A_ij g'(x_j): column j of A scaled by g'(x_j)
    dg = [DERIVATIVES[g](xj) for xj in x0]
    return [[aij * dgj for aij, dgj in zip(row, dg, strict=True)] for row in A]


def _cumulative_rows(A: list[list[float]], g: str, x0: list[float]) -> torch.Tensor:
    return _t(analytic(A, g, x0)).cumsum(0)


def _draw(rng) -> dict:
    return {"A": [[round(rng.uniform(-3, 3), 2) for _ in range(3)] for _ in range(2)],
            "g": rng.choice(sorted(DERIVATIVES)), "x0": [rng.uniform(-1.5, 1.5) for _ in range(3)]}


EXERCISE = Exercise(
    title="Write it: the Jacobian, row by row",
    prompt=r"""
Write a function `jacobian_rows(f, x)` that returns the Jacobian of `f` at `x` (shape
`(outputs, inputs)`) using only `backward()`: one backward pass per output, each with a
**one-hot seed**, each giving one row. `x` is a 1-D tensor without `requires_grad`; `f` maps it
to a 1-D tensor.

Three things to get right: make a fresh leaf that requires grad (`x.detach().requires_grad_()`),
keep the graph alive between passes (`retain_graph=True`), and clear `x.grad` before each pass
(gradients accumulate). The grader calls your function on the `f` and `x` of the setup cell
(here `f(x) = A @ torch.{{g|pretty}}(x)` with `A = torch.tensor({{A}})`, at
`x = torch.tensor({{x0}})`)
and on other functions and points.
""",
    setup="""A = torch.tensor({{A}}, dtype=torch.float64)
g = getattr(torch, {{g}})
x_in = torch.tensor({{x0}}, dtype=torch.float64)

def f(x):
    return A @ g(x)""",
    answer="jacobian_rows",
    call="jacobian_rows(f, x_in.clone())",
    placeholder="""def jacobian_rows(f, x):
    return ...""",
    solution="""def jacobian_rows(f, x):
    x = x.detach().requires_grad_()
    y = f(x)
    rows = []
    for i in range(y.numel()):
        seed = torch.zeros_like(y)
        seed[i] = 1.0                      # one-hot: ask about output i alone
        x.grad = None                      # gradients accumulate: start each row clean
        y.backward(seed, retain_graph=True)
        rows.append(x.grad.clone())
    return torch.stack(rows)""",
    kind=TensorOrSlip(shape=(2, 3), slips=((3, 2),)),
    params={"A": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "g": "sin", "x0": [0.5, -1.0, 2.0]},
    hidden=({"A": [[-1.0, 0.5, 2.0], [3.0, 1.0, -2.0]], "g": "tanh", "x0": [1.0, 0.25, -0.5]},
            {"A": [[0.5, -2.0, 1.5], [1.0, 3.0, 0.5]], "g": "exp", "x0": [-1.0, 0.5, 0.0]}),
    draw=_draw,
    reference=reference,
    analytic=analytic,
    finite_diff=lambda A, g, x0: fd_jacobian(_f(A, g), _t(x0)),
    wrong=(
        Wrong("jacobian_orientation", lambda A, g, x0: _t(analytic(A, g, x0)).T,
              "Your function returns the transpose, of shape (inputs, outputs). The backward pass "
              "seeded with output i gives the gradient of output i: that is row i, so stack the "
              "results as rows.",
              "Which index should run over the seeds you tried?"),
        Wrong("accumulation", _cumulative_rows,
              "Your second row is the sum of the first two rows: x.grad was not cleared between "
              "the passes, so each backward added onto the previous row instead of replacing it.",
              "What does backward() do to a .grad that already holds numbers?"),
        Wrong("onehot_seed", lambda A, g, x0: _t(analytic(A, g, x0)).sum(0).expand(2, 3),
              "Every row of your answer is the sum of all rows. Either each pass used an all-ones "
              "seed (or f(x).sum()), which adds the outputs together, where a one-hot seed asks "
              "about one output at a time; or x.grad was neither cleared nor copied, so backward "
              "kept adding into one tensor and every row you kept is that tensor's final sum.",
              "Check the seed of each pass, and what x.grad holds when you store it."),
        Wrong("accumulation", lambda A, g, x0: _t(analytic(A, g, x0))[-1].expand(2, 3),
              "Every row of your answer is the last row. x.grad is one tensor that backward "
              "updates in place: you stored that same tensor for every row, so zeroing it and "
              "refilling it changed the rows you had already kept.",
              "Store a copy of x.grad for each row, not x.grad itself."),
        Wrong("chain_rule_dropped", lambda A, g, x0: _t(A),
              "That is A alone: the derivative of the elementwise function g went missing. Each "
              "column j of the Jacobian is scaled by g'(x_j).",
              "Differentiate g(x_j) and apply the chain rule through A."),
    ),
)
