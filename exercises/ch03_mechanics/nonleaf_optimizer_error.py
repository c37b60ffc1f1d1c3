"""Content-map M09: an optimizer refuses a non-leaf parameter with ValueError."""

import torch

from autograder.exercise import Exercise, Wrong, raised
from autograder.kinds import Choice

OPTIONS = (None, "ValueError", "RuntimeError", "TypeError")


def reference(vals: list[float]) -> str | None:
    w = torch.tensor(vals, dtype=torch.float32, requires_grad=True).double()
    return raised(lambda: torch.optim.SGD([w], lr=0.1))


def analytic(vals: list[float]) -> str:
    # .double() is an operation (ToCopyBackward0): w is a non-leaf; optimizers check is_leaf
    return "ValueError"


EXERCISE = Exercise(
    id="nonleaf_optimizer_error",
    chapter=3,
    title="Handing a non-leaf to an optimizer",
    prompt=r"""
```python
w = torch.tensor({{vals}}, requires_grad=True).double()
opt = torch.optim.SGD([w], lr=0.1)
```

What happens on the second line? Give the class of the exception (or its name), or `None` if
it runs without error.
""",
    setup="vals = {{vals}}",
    answer="optimizer_error",
    placeholder="optimizer_error = ...  # an exception class such as TypeError, or None",
    solution="""w = torch.tensor(vals, requires_grad=True).double()
try:
    torch.optim.SGD([w], lr=0.1)
    optimizer_error = None
except Exception as e:
    optimizer_error = type(e)""",
    kind=Choice(options=OPTIONS),
    params={"vals": [0.5, -1.5, 2.0]},
    hidden=({"vals": [1.0, 2.0]},),
    draw=lambda rng: {"vals": [rng.uniform(-3, 3) for _ in range(rng.randint(1, 4))]},
    reference=reference,
    analytic=analytic,
    wrong=(
        Wrong("accidental_nonleaf", lambda vals: None,
              ".double() is an operation: it returns a new tensor computed from the float32 leaf "
              "(its grad_fn is ToCopyBackward0). That copy is not a leaf and would never receive "
              "a .grad, so the optimizer refuses it at once: ValueError: can't optimize a "
              "non-leaf Tensor. Create the tensor with dtype=torch.float64 and requires_grad=True "
              "in one go instead.",
              "Check w.is_leaf and w.grad_fn."),
        Wrong("accidental_nonleaf", lambda vals: "RuntimeError",
              "It does fail, and for the right reason (w is a non-leaf, made by .double()), but "
              "the optimizer checks its arguments when it is built and raises ValueError: can't "
              "optimize a non-leaf Tensor.",
              "Run it and read the exception's class name."),
    ),
)
