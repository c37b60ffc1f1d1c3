"""One SGD step with two parameter groups and a frozen parameter: a frozen b gets no .grad
(None) and step() leaves it; each group steps with its own learning rate."""

import random

import torch

from autograder.kinds import Number, Table
from gradtutor.key.exercise import Exercise, Wrong, table_with

from ._common import central

KIND = Table(rows=("a", "b", "c"), columns=(("value", Number()), ("grad", Number())))


def reference(a0: float, b0: float, c0: float, x: float, y: float, lr1: float, lr2: float) -> dict:
    a, b, c = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (a0, b0, c0))
    b.requires_grad_(False)
    opt = torch.optim.SGD([{"params": [a], "lr": lr1}, {"params": [b, c], "lr": lr2}])
    opt.zero_grad()
    ((a * x + b + c - y) ** 2).backward()
    opt.step()
    return {name: {"value": t.detach().clone(), "grad": t.grad} for name, t in zip("abc", (a, b, c), strict=True)}


def _grads(a0, b0, c0, x, y) -> tuple[float, float]:
    r = a0 * x + b0 + c0 - y
    return 2 * r * x, 2 * r  # dL/da, dL/dc


def analytic(a0: float, b0: float, c0: float, x: float, y: float, lr1: float, lr2: float) -> dict:
    ga, gc = _grads(a0, b0, c0, x, y)
    return {"a": {"value": a0 - lr1 * ga, "grad": ga}, "b": {"value": b0, "grad": None},
            "c": {"value": c0 - lr2 * gc, "grad": gc}}


def finite_diff(a0: float, b0: float, c0: float, x: float, y: float, lr1: float, lr2: float) -> dict:
    ga = central(lambda a: (a * x + b0 + c0 - y) ** 2, a0)
    gc = central(lambda c: (a0 * x + b0 + c - y) ** 2, c0)
    return {"a": {"value": a0 - lr1 * ga, "grad": ga}, "b": {"value": b0, "grad": None},
            "c": {"value": c0 - lr2 * gc, "grad": gc}}


def draw(rng: random.Random) -> dict:
    return {"a0": rng.uniform(-1, 1), "b0": rng.uniform(-1, 1), "c0": rng.uniform(-1, 1),
            "x": rng.uniform(1.5, 3), "y": rng.uniform(3, 5), "lr1": rng.choice((0.1, 0.05)),
            "lr2": rng.choice((0.01, 0.2))}


EXERCISE = Exercise(
    title="Frozen parameters and parameter groups",
    prompt=r"""

```python
a = torch.tensor({{a0}}, requires_grad=True)
b = torch.tensor({{b0}}, requires_grad=True)
c = torch.tensor({{c0}}, requires_grad=True)
b.requires_grad_(False)                                   # freeze b
opt = torch.optim.SGD([{"params": [a], "lr": {{lr1}}},
                       {"params": [b, c], "lr": {{lr2}}}])
opt.zero_grad()
loss = (a * {{x}} + b + c - {{y}}) ** 2
loss.backward()
opt.step()
```

Fill in `after_step`: the value and `.grad` of each parameter after `opt.step()`
(a `.grad` may be `None`), as `{"a": {"value": ..., "grad": ...}, "b": {...}, "c": {...}}`.
""",
    setup="a0, b0, c0, x, y, lr1, lr2 = {{a0}}, {{b0}}, {{c0}}, {{x}}, {{y}}, {{lr1}}, {{lr2}}",
    answer="after_step",
    placeholder='after_step = ...  # {"a": {"value": ..., "grad": ...}, "b": {...}, "c": {...}}',
    solution="""r = a0 * x + b0 + c0 - y          # the residual; loss = r²
ga, gc = 2 * r * x, 2 * r           # b is frozen: no gradient at all
after_step = {"a": {"value": a0 - lr1 * ga, "grad": ga},
              "b": {"value": b0, "grad": None},
              "c": {"value": c0 - lr2 * gc, "grad": gc}}""",
    by_hand=True,
    kind=KIND,
    params={"a0": 0.5, "b0": 1.0, "c0": -0.5, "x": 2.0, "y": 4.0, "lr1": 0.1, "lr2": 0.01},
    hidden=({"a0": -1.0375, "b0": 0.5, "c0": 0.25, "x": 3.0, "y": 3.5, "lr1": 0.05, "lr2": 0.2},),
    draw=draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("frozen_param", table_with(analytic, b=lambda a0, b0, c0, x, y, lr1, lr2: {
                  "value": b0 - lr2 * _grads(a0, b0, c0, x, y)[1], "grad": _grads(a0, b0, c0, x, y)[1]}),
              "b was frozen before the forward pass: with requires_grad=False autograd does "
              "not compute its gradient, b.grad stays None, and optimizer.step() skips every "
              "parameter whose .grad is None. Listing b in the optimizer does not unfreeze it.",
              "After b.requires_grad_(False), does backward() fill b.grad?"),
        Wrong("frozen_param", table_with(analytic, b=lambda a0, b0, c0, x, y, lr1, lr2: {"grad": 0.0}),
              "b's value is right, but its .grad is None, not 0: autograd never computed a "
              "gradient for it. None and zeros are different to an optimizer (the next "
              "exercise shows how).",
              "Was a gradient for b ever computed?"),
        Wrong("param_group_lr", table_with(analytic, c=lambda a0, b0, c0, x, y, lr1, lr2: {
                  "value": c0 - lr1 * _grads(a0, b0, c0, x, y)[1]}),
              "c was stepped with the first group's learning rate. Each parameter group keeps "
              "its own options: c is in the second group, so it moves by that group's lr.",
              "Which group is c in, and what lr does that group have?"),
    ),
)
