"""Content-map M10: integer tensors cannot require gradients (RuntimeError at creation)."""

import torch

from autograder.exercise import Exercise, Wrong, raised
from autograder.kinds import Choice

OPTIONS = (None, "RuntimeError", "TypeError", "ValueError")


def reference(vals: list[int]) -> str | None:
    return raised(lambda: torch.tensor(vals, requires_grad=True))


def analytic(vals: list[int]) -> str:
    # Python ints make an int64 tensor; a derivative needs a continuum of values, so autograd
    # accepts only floating-point (and complex) dtypes
    return "RuntimeError"


EXERCISE = Exercise(
    id="int_requires_grad_error",
    chapter=3,
    title="A parameter made of integers",
    prompt=r"""
```python
w = torch.tensor({{vals}}, requires_grad=True)
```

Note the numbers: no decimal points. What happens? Give the class of the exception (or its
name), or `None` if it runs without error.
""",
    setup="vals = {{vals}}",
    answer="int_error",
    placeholder="int_error = ...  # an exception class such as TypeError, or None",
    solution="""try:
    torch.tensor(vals, requires_grad=True)
    int_error = None
except Exception as e:
    int_error = type(e)""",
    kind=Choice(options=OPTIONS),
    params={"vals": [1, 2, 3]},
    hidden=({"vals": [4, -1]},),
    draw=lambda rng: {"vals": [rng.randint(-9, 9) for _ in range(rng.randint(1, 4))]},
    reference=reference,
    analytic=analytic,
    wrong=(
        Wrong("int_requires_grad", lambda vals: None,
              "Python integers make an integer tensor (torch.int64), and only floating-point "
              "(or complex) tensors can require gradients: a derivative asks how the output "
              "changes under an arbitrarily small nudge, and integers cannot be nudged. PyTorch "
              "raises RuntimeError: Only Tensors of floating point and complex dtype can require "
              "gradients. Write 1.0 instead of 1, or pass dtype=torch.float32.",
              "What dtype does torch.tensor give to a list of Python ints?"),
        Wrong("int_requires_grad", lambda vals: "TypeError",
              "It fails for the reason you think (integers cannot require gradients), but the "
              "check runs inside PyTorch's tensor code and raises RuntimeError, not TypeError.",
              "Run it and read the exception's class name."),
    ),
)
