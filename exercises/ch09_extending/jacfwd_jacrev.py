"""jacfwd builds a Jacobian from one JVP per input (a column each), jacrev from one VJP per
output (a row each): for f: Rⁿ → Rᵐ, forward mode is cheaper when n < m."""

import random

import torch

from autograder.kinds import Choice, Number, Table
from gradtutor.key.exercise import Exercise, Wrong

ROWS = ("A", "B", "C")
KIND = Table(rows=ROWS, columns=(("jvps", Number()), ("vjps", Number()),
                                 ("cheaper", Choice(options=("jacfwd", "jacrev")))))


def _f(m: int):
    def f(x: torch.Tensor) -> torch.Tensor:
        # m outputs that each depend on every input
        return torch.stack([torch.sin((k + 1) * x).sum() for k in range(m)])
    return f


def _row(n: int, m: int) -> dict:
    x = torch.linspace(0.1, 1.0, n, dtype=torch.float64)
    jac = torch.func.jacrev(_f(m))(x)
    assert torch.allclose(jac, torch.func.jacfwd(_f(m))(x))
    columns, rows_ = jac.shape[1], jac.shape[0]  # a JVP gives one column, a VJP one row
    return {"jvps": columns, "vjps": rows_, "cheaper": "jacfwd" if columns < rows_ else "jacrev"}


def reference(shapes: list) -> dict:
    return {name: _row(n, m) for name, (n, m) in zip(ROWS, shapes, strict=True)}


def analytic(shapes: list) -> dict:
    return {name: {"jvps": n, "vjps": m, "cheaper": "jacfwd" if n < m else "jacrev"}
            for name, (n, m) in zip(ROWS, shapes, strict=True)}


def _swapped(shapes: list) -> dict:
    return {name: {"jvps": m, "vjps": n, "cheaper": "jacrev" if n < m else "jacfwd"}
            for name, (n, m) in zip(ROWS, shapes, strict=True)}


def _always_reverse(shapes: list) -> dict:
    out = analytic(shapes)
    for row in out.values():
        row["cheaper"] = "jacrev"
    return out


def _cheaper_reversed(shapes: list) -> dict:
    out = analytic(shapes)
    for row in out.values():
        row["cheaper"] = "jacrev" if row["cheaper"] == "jacfwd" else "jacfwd"
    return out


def draw(rng: random.Random) -> dict:
    wide = [rng.randint(20, 60), 1]              # a loss: many inputs, one output
    tall = [rng.randint(1, 3), rng.randint(20, 60)]  # few inputs, many outputs
    other = [rng.randint(4, 9), rng.randint(12, 30)]
    return {"shapes": [wide, tall, other]}


EXERCISE = Exercise(
    title="When jacfwd beats jacrev",
    prompt=r"""
`torch.func.jacfwd(f)` builds the Jacobian from Jacobian-vector products (forward
mode), `torch.func.jacrev(f)` from vector-Jacobian products (reverse mode), both vectorised
with `vmap`. Three functions $f:\mathbb{R}^n \to \mathbb{R}^m$, A, B and C, have every
output depending on every input; their shapes $[n, m]$ are, in order, {{shapes|pretty}}.

Fill in `passes = {"A": {"jvps": ..., "vjps": ..., "cheaper": ...}, "B": {...}, "C": {...}}`:
how many JVPs `jacfwd` needs for the whole Jacobian, how many VJPs `jacrev` needs, and which
of `"jacfwd"` and `"jacrev"` does less work.
""",
    setup="shapes = {{shapes}}",
    answer="passes",
    placeholder='passes = ...  # {"A": {"jvps": ..., "vjps": ..., "cheaper": "jacfwd" or "jacrev"}, ...}',
    solution="""passes = {}
for name, (n, m) in zip("ABC", shapes):
    # a JVP gives one column of the m×n Jacobian, a VJP one row
    passes[name] = {"jvps": n, "vjps": m, "cheaper": "jacfwd" if n < m else "jacrev"}""",
    by_hand=True,
    kind=KIND,
    params={"shapes": [[100, 1], [2, 50], [5, 20]]},
    hidden=({"shapes": [[40, 1], [3, 30], [8, 16]]},),
    draw=draw,
    reference=reference,
    analytic=analytic,
    wrong=(
        Wrong("jacfwd_columns", _swapped,
              "Columns and rows are swapped. A JVP J v pushes one input direction forward and "
              "returns one column of the m×n Jacobian, one pass per input; a VJP vᵀJ pulls one "
              "output direction back and returns one row, one pass per output.",
              "J v has the shape of the output. Which part of the Jacobian is it?"),
        Wrong("jacfwd_columns", _always_reverse,
              "The counts are right, but reverse mode is not always cheaper. It wins for "
              "losses (many inputs, one output); when a function has fewer inputs than "
              "outputs, forward mode needs fewer passes than reverse mode.",
              "Compare the number of passes in each row."),
        Wrong("jacfwd_columns", _cheaper_reversed,
              "The counts are right, but the cheaper transform is the one that needs fewer "
              "passes: each JVP gives one column of the Jacobian, each VJP one row.",
              "For each function, compare the two counts: which is smaller?"),
    ),
)
