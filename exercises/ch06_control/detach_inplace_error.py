"""Content map M14, the safe twin: the same in-place change through y.detach() is caught by the
version counter, and backward raises a RuntimeError instead of returning wrong numbers."""

import torch

from autograder.kinds import Choice
from gradtutor.key.exercise import Exercise, Wrong, raised

OPTIONS = (None, "RuntimeError", "ValueError", "TypeError")


def reference(x: list, k: float) -> str | None:
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    y = t.sigmoid()
    y.detach().mul_(k)
    return raised(lambda: y.sum().backward())


def analytic(x: list, k: float) -> str:
    # detach() shares storage *and* the version counter: mul_ bumps y's version from 0 to 1,
    # and SigmoidBackward0 finds its saved output at the wrong version
    return "RuntimeError"


EXERCISE = Exercise(
    title="detach() tells autograd",
    prompt=r"""
The same change, made through `detach()` instead of `.data`:

```python
x = torch.tensor({{x}}, requires_grad=True)
y = x.sigmoid()
y.detach().mul_({{k}})
y.sum().backward()
```

Which error does `y.sum().backward()` raise? Give the exception class (or its name as a string),
or `None` if it runs without error.
""",
    setup="x0 = {{x}}\nk = {{k}}",
    answer="detach_error",
    solution="""x = torch.tensor(x0, requires_grad=True)
y = x.sigmoid()
y.detach().mul_(k)
try:
    y.sum().backward()
    detach_error = None
except Exception as e:
    detach_error = type(e)""",
    kind=Choice(options=OPTIONS),
    params={"x": [1.0, 2.0], "k": 2.0},
    hidden=({"x": [-0.5, 0.7], "k": 3.0},),
    draw=lambda rng: {"x": [rng.uniform(-2, 2) for _ in range(2)], "k": rng.choice([2.0, 3.0, 0.5])},
    reference=reference,
    analytic=analytic,
    wrong=(
        Wrong("detach_shares_version", lambda x, k: None,
              "detach() returns a tensor that shares y's storage and also its version counter. "
              "mul_ bumps that counter, and when SigmoidBackward0 unpacks its saved output it "
              "finds version 1 where it expected version 0, so it raises \"one of the variables "
              "needed for gradient computation has been modified by an inplace operation\". "
              "Unlike .data, detach() cannot corrupt a gradient silently.",
              "Does the detached tensor share memory with y? Does autograd notice changes to "
              "that memory?"),
        Wrong("grad_modes", lambda x, k: "ValueError",
              "ValueError is what an optimizer raises for a non-leaf parameter. Here backward "
              "itself refuses to run: autograd's in-place correctness check raises a "
              "RuntimeError.",
              "Which part of PyTorch complains, the optimizer or autograd?"),
        Wrong("detach_shares_version", lambda x, k: "TypeError",
              "A TypeError is about the kinds of the arguments, and every call here gets tensors "
              "of the right kind. What goes wrong is the in-place mul_ on y.detach(): it shares "
              "y's storage and version counter, so the tensor SigmoidBackward0 saved has changed "
              "since the forward pass.",
              "Which check in autograd compares a saved tensor's version with the version it "
              "had when it was saved?"),
    ),
)
