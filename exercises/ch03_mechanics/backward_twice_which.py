"""Content-map M07: a second backward fails only where the graph saved tensors.

exp saves its result and x**2 saves its input: the second call raises RuntimeError, and x.grad
keeps what the first call put there. (x + 1).sum() saves nothing: the second call runs and
x.grad becomes [2, 2].
"""


import torch

from autograder.kinds import Choice, Table
from autograder.kinds import Tensor as TensorKind
from gradtutor.key.exercise import Exercise, Wrong, table_with

ROWS = ("exp", "square", "add_one")
ERRORS = (None, "RuntimeError", "ValueError")
KIND = Table(rows=ROWS, columns=(("error", Choice(options=ERRORS)), ("grad", TensorKind(shape=(2,)))))
FORWARD = {"exp": lambda x: x.exp().sum(), "square": lambda x: (x**2).sum(),
           "add_one": lambda x: (x + 1).sum()}


def reference(x: list[float]) -> dict:
    out = {}
    for name, forward in FORWARD.items():
        t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
        y = forward(t)
        y.backward()
        try:
            y.backward()
            error = None
        except RuntimeError as e:
            error = type(e).__name__
        out[name] = {"error": error, "grad": t.grad}
    return out


def analytic(x: list[float]) -> dict:
    # exp and square saved tensors, freed by the first call: error, one gradient in .grad.
    # x + 1 saved nothing: the second walk succeeds and adds a second gradient of ones.
    import math

    return {"exp": {"error": "RuntimeError", "grad": [math.exp(v) for v in x]},
            "square": {"error": "RuntimeError", "grad": [2 * v for v in x]},
            "add_one": {"error": None, "grad": [2.0, 2.0]}}


def _grad_none(x: list[float]) -> dict:
    return table_with(analytic, exp={"grad": None}, square={"grad": None})(x=x)


def _add_fails(x: list[float]) -> dict:
    return table_with(analytic, add_one={"error": "RuntimeError", "grad": [1.0, 1.0]})(x=x)


def _add_overwrites(x: list[float]) -> dict:
    return table_with(analytic, add_one={"grad": [1.0, 1.0]})(x=x)


def _none_fail(x: list[float]) -> dict:
    import math

    return {"exp": {"error": None, "grad": [2 * math.exp(v) for v in x]},
            "square": {"error": None, "grad": [4 * v for v in x]},
            "add_one": {"error": None, "grad": [2.0, 2.0]}}


EXERCISE = Exercise(
    title="Which second backward fails?",
    prompt=r"""
For each forward pass below, run

```python
x = torch.tensor({{x}}, requires_grad=True)
y = <forward>
y.backward()
try:
    y.backward()          # no retain_graph anywhere
except RuntimeError:
    pass
```

| row | forward |
|---|---|
| `exp` | `y = x.exp().sum()` |
| `square` | `y = (x**2).sum()` |
| `add_one` | `y = (x + 1).sum()` |

Fill in `outcomes`: for each row, the `error` the second `backward()` raises (a class or its
name, or `None`) and `x.grad` **after** both calls (numbers, or `None`).
""",
    setup="x = {{x}}",
    answer="outcomes",
    placeholder='outcomes = ...  # {"exp": {"error": ..., "grad": ...}, "square": ..., "add_one": ...}',
    solution="""forwards = {"exp": lambda t: t.exp().sum(), "square": lambda t: (t**2).sum(),
            "add_one": lambda t: (t + 1).sum()}
outcomes = {}
for name, forward in forwards.items():
    t = torch.tensor(x, requires_grad=True)
    y = forward(t)
    y.backward()
    try:
        y.backward()
        error = None
    except RuntimeError as e:
        error = type(e)
    outcomes[name] = {"error": error, "grad": t.grad}""",
    kind=KIND,
    params={"x": [0.5, -1.0]},
    hidden=({"x": [1.5, 0.25]},),
    draw=lambda rng: {"x": [rng.uniform(-2, 2), rng.uniform(-2, 2)]},
    reference=reference,
    analytic=analytic,
    wrong=(
        Wrong("saved_tensors_freed", _add_fails,
              "Not every second backward fails. What backward() frees are the tensors operations "
              "saved for their local gradients. Adding a constant and summing save nothing (their "
              "local gradients are all ones), so the graph of x + 1 can be walked again, and the "
              "second walk adds another gradient of ones.",
              "For each operation, ask what it must remember to compute its local gradient."),
        Wrong("accumulation", _add_overwrites,
              "The add_one graph is walked twice, and each walk adds its gradient of ones to "
              "x.grad: it accumulates to twos, it is not overwritten.",
              "What does the second, successful backward() do to x.grad?"),
        Wrong("first_backward_kept", _grad_none,
              "The first backward() completed and wrote its gradient into x.grad before the "
              "second one failed. The failure does not undo it, so x.grad holds one gradient "
              "(e^x for exp, 2x for the square).",
              "Look at x.grad between the two calls."),
        Wrong("graph_freed", _none_fail,
              "exp saves its result and x**2 saves its input; the first backward() frees those "
              "saved tensors, so the second raises RuntimeError. Only the graph that saved "
              "nothing (x + 1) can be walked twice.",
              "Which of these operations need a stored value to compute their local gradient?"),
    ),
)
