"""Which backward calls run, and which raise (content map M01, M04, M34, M38)."""

import torch
from torch.func import grad

from autograder.kinds import Choice, Table
from gradtutor.key.exercise import Exercise, Wrong, raised, table_with

ROWS = ("a", "b", "c", "d", "e", "f")
OPTIONS = (None, "RuntimeError", "TypeError", "ValueError")
KIND = Table(rows=ROWS, columns=(("error", Choice(options=OPTIONS)),))


def _calls(x0: list[float], w0: float) -> dict:
    """Each row's code, run on fresh leaves (float64)."""
    def fresh() -> tuple[torch.Tensor, torch.Tensor]:
        return (torch.tensor(x0, dtype=torch.float64, requires_grad=True),
                torch.tensor([w0], dtype=torch.float64, requires_grad=True))

    def a():
        x, _ = fresh()
        (3 * x).backward()

    def b():
        x, _ = fresh()
        (3 * x).backward(torch.ones(3, dtype=torch.float64))

    def c():
        x, _ = fresh()
        (3 * x).sum().backward()

    def d():
        _, w = fresh()
        (3 * w).backward()

    def e():
        x, _ = fresh()
        grad(lambda t: 3 * t)(x.detach())

    def f():
        x, _ = fresh()
        (3 * x).backward(torch.tensor(1.0, dtype=torch.float64))

    return dict(zip(ROWS, (a, b, c, d, e, f), strict=True))


def reference(x0: list[float], w0: float) -> dict:
    return {row: {"error": raised(call)} for row, call in _calls(x0, w0).items()}


def analytic(x0: list[float], w0: float) -> dict:
    # backward() without a seed needs one element (a raises, d does not); a seed must have the
    # output's shape (b runs, f raises); torch.func.grad insists on a scalar output (e raises)
    errors = {"a": "RuntimeError", "b": None, "c": None, "d": None, "e": "RuntimeError",
              "f": "RuntimeError"}
    return {row: {"error": err} for row, err in errors.items()}


EXERCISE = Exercise(
    title="Which of these calls raise?",
    prompt=r"""
With `x = torch.tensor({{x0}}, requires_grad=True)` (three numbers) and
`w = torch.tensor([{{w0}}], requires_grad=True)` (shape `(1,)`), each line below is run on its
own, with fresh `x` and `w`:

```python
(3 * x).backward()                         # a
(3 * x).backward(torch.ones(3))            # b
(3 * x).sum().backward()                   # c
(3 * w).backward()                         # d
torch.func.grad(lambda t: 3 * t)(x)        # e
(3 * x).backward(torch.tensor(1.0))        # f
```

For each line, which exception does it raise? Fill in the table `runs`: for each row, the
exception class (or its name) under `"error"`, or `None` if the line runs.
""",
    setup="""x = torch.tensor({{x0}}, requires_grad=True)
w = torch.tensor([{{w0}}], requires_grad=True)""",
    answer="runs",
    placeholder='runs = ...  # {"a": {"error": ...}, "b": {"error": ...}, ..., "f": {"error": ...}}',
    solution="""def error_of(line):
    try:
        line()
    except Exception as e:
        return type(e)
    return None

def fresh():
    return x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()

lines = {
    "a": lambda: (3 * fresh()[0]).backward(),
    "b": lambda: (3 * fresh()[0]).backward(torch.ones(3)),
    "c": lambda: (3 * fresh()[0]).sum().backward(),
    "d": lambda: (3 * fresh()[1]).backward(),
    "e": lambda: torch.func.grad(lambda t: 3 * t)(fresh()[0]),
    "f": lambda: (3 * fresh()[0]).backward(torch.tensor(1.0)),
}
runs = {row: {"error": error_of(line)} for row, line in lines.items()}""",
    kind=KIND,
    params={"x0": [1.0, 2.0, 3.0], "w0": 2.0},
    hidden=({"x0": [-0.5, 0.25, 4.0], "w0": -1.5},),
    draw=lambda rng: {"x0": [rng.uniform(-3, 3) for _ in range(3)], "w0": rng.uniform(-3, 3)},
    reference=reference,
    analytic=analytic,
    wrong=(
        Wrong("one_element_scalar", table_with(analytic, d={"error": "RuntimeError"}),
              "For backward() 'scalar' means one element, not zero dimensions: "
              "3 * w has shape (1,), holds a single number, and backward() seeds it with 1.",
              "Count the elements of 3 * w, not its dimensions."),
        Wrong("seed_required", table_with(analytic, a={"error": None}),
              "Line a raises RuntimeError: 3 * x holds three numbers, and backward() will not "
              "guess how to weigh them ('grad can be implicitly created only for scalar "
              "outputs'). Lines b and c show the two fixes: pass a seed, or reduce to a scalar.",
              "What seed would backward() start from in line a?"),
        Wrong("func_grad_scalar", table_with(analytic, e={"error": None}),
              "Line e raises RuntimeError: torch.func.grad differentiates a function with a single "
              "scalar output, and t ↦ 3t returns three numbers. For vector outputs torch.func has "
              "vjp and jacrev.",
              "What does torch.func.grad assume about the output of the function?"),
        Wrong("seed_required", table_with(analytic, f={"error": None}),
              "Line f raises RuntimeError ('Mismatch in shape'): the seed is the gradient with "
              "respect to the output, so it must have the output's shape, (3,). A 0-dimensional "
              "seed is not broadcast.",
              "Compare the shape of the seed with the shape of 3 * x."),
    ),
)
