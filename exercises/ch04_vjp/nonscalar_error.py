"""backward() on a vector output without a seed raises (content map M01)."""

import torch

from autograder.exercise import Exercise, Wrong, raised
from autograder.kinds import Choice

OPTIONS = (None, "RuntimeError", "TypeError", "ValueError", "IndexError")


def reference(x0: list[float]) -> str | None:
    x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    y = x**2
    return raised(lambda: y.backward())


def analytic(x0: list[float]) -> str:
    # backward() seeds with dy/dy = 1 only when y holds one element; y here holds len(x0)
    return "RuntimeError"


EXERCISE = Exercise(
    id="nonscalar_error",
    chapter=4,
    title="A vector output with no seed",
    prompt=r"""
```python
x = torch.tensor({{x0}}, requires_grad=True)
y = x ** 2
y.backward()
```

What does the last line raise? Give the exception class (for example `KeyError`, or its name
as a string), or `None` if it runs without error. You may run it to find out: wrap it in
`try: ... except Exception as e: ...` so that your notebook keeps going.
""",
    setup="""x = torch.tensor({{x0}}, requires_grad=True)
y = x ** 2""",
    answer="nonscalar_error",
    placeholder="nonscalar_error = ...  # an exception class such as KeyError, or None",
    solution="""try:
    y.backward()
    nonscalar_error = None
except Exception as e:
    nonscalar_error = type(e)""",
    kind=Choice(options=OPTIONS),
    params={"x0": [1.0, 2.0, 3.0]},
    hidden=({"x0": [0.5, -1.0, 2.5]},),
    draw=lambda rng: {"x0": [rng.uniform(-3, 3) for _ in range(3)]},
    reference=reference,
    analytic=analytic,
    wrong=(
        Wrong("seed_required", lambda x0: None,
              "backward() can only start by itself from a tensor with one element, where "
              "dy/dy = 1 is the obvious seed. y holds several numbers, and PyTorch will not guess "
              "how much each of them matters, so it raises 'grad can be implicitly created only "
              "for scalar outputs'.",
              "How many elements does y hold? What would backward() have to start from?"),
        Wrong("seed_required", lambda x0: "TypeError",
              "The gradient argument of backward() is optional in its signature, so nothing is "
              "wrong with the call as Python sees it. The check happens inside autograd, at run "
              "time, when it finds no seed for a vector output.",
              "Which kind of error does PyTorch use when a call is well-formed but the tensors "
              "do not allow it?"),
    ),
)
