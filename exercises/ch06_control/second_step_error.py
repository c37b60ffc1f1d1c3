"""Content map M12, the consequence: after w = w - lr * w.grad without no_grad, the next
iteration's w.grad is None and lr * w.grad raises a TypeError."""

import torch

from autograder.exercise import Exercise, Wrong, raised
from autograder.kinds import Choice

OPTIONS = (None, "RuntimeError", "TypeError", "ValueError")


def reference(w0: float, lr: float) -> str | None:
    w = torch.tensor(w0, dtype=torch.float64, requires_grad=True)

    def two_steps() -> None:
        nonlocal w
        for _ in range(2):
            ((w - 3) ** 2).backward()
            w = w - lr * w.grad

    return raised(two_steps)


def analytic(w0: float, lr: float) -> str:
    # iteration 2: w is a non-leaf, its .grad is None, and float * None is a TypeError
    return "TypeError"


EXERCISE = Exercise(
    id="second_step_error",
    chapter=6,
    title="What breaks on the second step?",
    prompt=r"""
A training loop with the out-of-place update:

```python
w = torch.tensor({{w0}}, requires_grad=True)
for step in range(2):
    L = (w - 3) ** 2
    L.backward()
    w = w - {{lr}} * w.grad
```

Which error does this raise (the exception class or its name), or `None` if both steps run?
""",
    setup="w0, lr = {{w0}}, {{lr}}",
    answer="second_step",
    solution="""try:
    w = torch.tensor(w0, requires_grad=True)
    for step in range(2):
        L = (w - 3) ** 2
        L.backward()
        w = w - lr * w.grad
    second_step = None
except Exception as e:
    second_step = type(e)""",
    kind=Choice(options=OPTIONS),
    params={"w0": 1.0, "lr": 0.1},
    hidden=({"w0": -2.0, "lr": 0.25},),
    draw=lambda rng: {"w0": rng.uniform(-5, 2.5), "lr": rng.uniform(0.01, 0.4)},
    reference=reference,
    analytic=analytic,
    wrong=(
        Wrong("out_of_place_update", lambda w0, lr: None,
              "After the first step w is no longer the leaf you created but the result of a "
              "subtraction. Its .grad is never filled (PyTorch warns that you are reading the "
              ".grad of a non-leaf), so on the second step w.grad is None and lr * None raises "
              "TypeError: unsupported operand type(s) for *: 'float' and 'NoneType'.",
              "After the first step, is w still a leaf? What is the .grad of a non-leaf?"),
        Wrong("graph_freed", lambda w0, lr: "RuntimeError",
              "The second backward does not reuse a freed graph: each iteration builds a new "
              "L, and the subtraction from step one saved nothing, so backward runs. The failure "
              "comes one line later, from Python arithmetic with None.",
              "Run the loop and read which line fails."),
    ),
)
