"""A tensor hook at fan-out: y is used twice, the hook runs once with the summed gradient, and
what it returns replaces that gradient on its way to x."""

import random

import torch

from autograder.kinds import Number, Table
from gradtutor.key.exercise import Exercise, Wrong, table_with

from ._common import central

KIND = Table(rows=("hook",), columns=(("calls", Number()), ("seen", Number()), ("x_grad", Number())))


def reference(x0: float, a: float, b: float) -> dict:
    x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    y = a * x
    seen = []

    def hook(grad):
        seen.append(grad.detach().clone())
        return 2 * grad

    y.register_hook(hook)
    (y * y + b * y).backward()
    return {"hook": {"calls": len(seen), "seen": seen[0], "x_grad": x.grad}}


def analytic(x0: float, a: float, b: float) -> dict:
    y = a * x0
    dz_dy = 2 * y + b  # both uses of y, added
    return {"hook": {"calls": 1, "seen": dz_dy, "x_grad": 2 * dz_dy * a}}


def finite_diff(x0: float, a: float, b: float) -> dict:
    dz_dy = central(lambda y: y * y + b * y, a * x0)
    return {"hook": {"calls": 1, "seen": dz_dy,
                     "x_grad": 2 * central(lambda x: (a * x) ** 2 + b * a * x, x0)}}


def draw(rng: random.Random) -> dict:
    return {"x0": rng.choice((-1, 1)) * rng.uniform(0.5, 2), "a": rng.uniform(2.2, 3.5),
            "b": rng.uniform(0.5, 3)}


def _per_use(x0: float, a: float, b: float) -> dict:
    return {"hook": {"calls": 2, "seen": 2 * a * x0, "x_grad": 2 * (2 * a * x0 + b) * a}}


EXERCISE = Exercise(
    title="What a hook sees at fan-out",
    prompt=r"""
Before running anything:

```python
x = torch.tensor({{x0}}, requires_grad=True)
y = {{a}} * x
seen = []

def hook(grad):
    seen.append(grad)
    return 2 * grad          # a hook may return a new gradient

y.register_hook(hook)
z = y * y + {{b}} * y        # y is used twice
z.backward()
```

Fill in `hook_table = {"hook": {"calls": ..., "seen": ..., "x_grad": ...}}`: how many times
the hook runs (`len(seen)`), the gradient it receives in its first call (`seen[0]`), and
`x.grad` at the end.
""",
    setup="x0, a, b = {{x0}}, {{a}}, {{b}}",
    answer="hook_table",
    placeholder='hook_table = ...  # {"hook": {"calls": ..., "seen": ..., "x_grad": ...}}',
    solution="""y0 = a * x0
dz_dy = 2 * y0 + b                 # the two uses of y, summed before the hook runs
hook_table = {"hook": {"calls": 1, "seen": dz_dy, "x_grad": 2 * dz_dy * a}}""",
    by_hand=True,
    kind=KIND,
    params={"x0": 1.2, "a": 2.5, "b": 3.0},
    hidden=({"x0": -1.0375, "a": 3.0, "b": 1.0},),
    draw=draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("hook_per_use", _per_use,
              "A tensor hook does not run once per use. Autograd first adds the gradients "
              "from every use of y (here 2y from y·y and b from b·y), then calls the hook "
              "once, with that sum.",
              "When y feeds two operations, in what order does autograd add their gradients "
              "and call y's hook?"),
        Wrong("hook_return_ignored", table_with(analytic, hook=lambda x0, a, b: {
                  "x_grad": (2 * a * x0 + b) * a}),
              "The hook's return value is not ignored: a hook that returns a tensor replaces "
              "the gradient with it, so everything upstream of y, including x.grad, sees the "
              "doubled gradient.",
              "What does autograd do with a tensor the hook returns?"),
        Wrong("chain_rule_dropped", table_with(analytic, hook=lambda x0, a, b: {
                  "x_grad": 2 * (2 * a * x0 + b)}),
              "This x.grad stops at y: it is the doubled dz/dy. From y to x there is one more "
              "factor, dy/dx.",
              "y = a·x. What does the chain rule multiply by on the way from y to x?"),
        Wrong("hook_return_ignored", table_with(analytic, hook=lambda x0, a, b: {
                  "seen": 2 * (2 * a * x0 + b)}),
              "The hook records the gradient it receives, before its own return value takes "
              "its place: what it appends is what arrives at y, and the tensor it returns is "
              "what goes on towards x.",
              "In your hook, which comes first: appending grad, or returning 2 * grad?"),
    ),
)
