"""Reference set 002, 3.2 (the error): without retain_graph, a second backward raises RuntimeError."""

import torch

from autograder.kinds import Choice
from gradtutor.key.exercise import Exercise, Wrong, raised

OPTIONS = (None, "RuntimeError", "ValueError", "TypeError", "AttributeError")


def reference(x0: float) -> str | None:
    x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    y = x**3
    y.backward()
    return raised(lambda: y.backward())


def analytic(x0: float) -> str:
    # PowBackward0 saved x to compute 3x²; the first backward() freed it, the second needs it
    return "RuntimeError"


EXERCISE = Exercise(
    title="Walking one graph twice, without permission",
    prompt=r"""
A graph is built once and walked twice, and neither call says `retain_graph=True`:

```python
x = torch.tensor({{x0}}, requires_grad=True)
y = x**3
y.backward()
y.backward()
```

What happens on the last line? Give the class of the exception it raises (e.g. `ValueError`,
or its name as a string), or `None` if it runs without error.
""",
    setup="x0 = {{x0}}",
    answer="second_call_error",
    placeholder="second_call_error = ...  # an exception class such as ValueError, or None",
    solution="""x = torch.tensor(x0, requires_grad=True)
y = x**3
y.backward()
try:
    y.backward()
    second_call_error = None
except Exception as e:
    second_call_error = type(e)""",
    kind=Choice(options=OPTIONS),
    params={"x0": 3.0},
    hidden=({"x0": -2.0},),
    draw=lambda rng: {"x0": rng.uniform(-4, 4)},
    reference=reference,
    analytic=analytic,
    wrong=(
        Wrong("graph_freed", lambda x0: None,
              "To compute 3x², the power node saved x during the forward pass. backward() frees "
              "saved values as soon as it has used them, to save memory, so the second call finds "
              "them gone and raises RuntimeError: Trying to backward through the graph a second "
              "time. retain_graph=True on the first call keeps them.",
              "What does the power node need to remember to compute its local gradient?"),
        Wrong("graph_freed", lambda x0: "ValueError",
              "An error it is, but not a ValueError: the freed graph is a runtime state problem, "
              "and PyTorch raises RuntimeError: Trying to backward through the graph a second "
              "time.",
              "Run it and read the first word of the traceback's last line."),
    ),
)
