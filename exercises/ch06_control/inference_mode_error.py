"""Content map M19: a tensor made under torch.inference_mode() cannot be saved for backward;
the same tensor made under torch.no_grad() can."""

import torch

from autograder.exercise import Exercise, Wrong, raised
from autograder.kinds import Choice

OPTIONS = (None, "RuntimeError", "TypeError", "ValueError")


def reference(w0: float, t0: float) -> str | None:
    w = torch.tensor(w0, dtype=torch.float64, requires_grad=True)
    with torch.inference_mode():
        t = torch.tensor(t0, dtype=torch.float64) * 2
    return raised(lambda: (w * t).backward())


def analytic(w0: float, t0: float) -> str:
    # w * t must save t for w's gradient, and inference tensors may never be saved for backward
    return "RuntimeError"


EXERCISE = Exercise(
    id="inference_mode_error",
    chapter=6,
    title="inference_mode is not just a faster no_grad",
    prompt=r"""
```python
w = torch.tensor({{w0}}, requires_grad=True)
with torch.inference_mode():
    t = torch.tensor({{t0}}) * 2
y = w * t
y.backward()
```

Which error is raised (the exception class or its name), or `None` if it runs? (With
`torch.no_grad()` in place of `torch.inference_mode()` it runs and `w.grad` is `2 * t0`.)
""",
    setup="w0, t0 = {{w0}}, {{t0}}",
    answer="inference_error",
    solution="""w = torch.tensor(w0, requires_grad=True)
with torch.inference_mode():
    t = torch.tensor(t0) * 2
try:
    y = w * t
    y.backward()
    inference_error = None
except Exception as e:
    inference_error = type(e)""",
    kind=Choice(options=OPTIONS),
    params={"w0": 2.0, "t0": 3.0},
    hidden=({"w0": -1.0, "t0": 0.5},),
    draw=lambda rng: {"w0": rng.uniform(-3, 3), "t0": rng.uniform(-3, 3)},
    reference=reference,
    analytic=analytic,
    wrong=(
        Wrong("grad_modes", lambda w0, t0: None,
              "Under inference_mode, t becomes an inference tensor, not just an untracked one. "
              "To give w its gradient, w * t must save t for the backward pass, and autograd "
              "refuses to save inference tensors: RuntimeError \"Inference tensors cannot be "
              "saved for backward\". A tensor made under no_grad has no such restriction.",
              "Compare what t.is_inference() says after no_grad and after inference_mode."),
        Wrong("no_graph", lambda w0, t0: "TypeError",
              "Nothing here mixes a tensor with None or a wrong Python type; the complaint comes "
              "from autograd itself, which raises RuntimeError when it is asked to save an "
              "inference tensor.",
              "Run it and read the first words of the error."),
    ),
)
