"""Fix it: a gradient-descent loop on L = (w - target)² that never empties w.grad.

Without zeroing, step k uses the sum of all gradients so far, so w swings around the target.
With w.grad zeroed (or set to None) each step, w - target shrinks by (1 - 2 lr) per step:
w_k = target + (1 - 2 lr)^k (w0 - target). Graded by running the repaired loop on fresh w0,
learning rates, targets and step counts.
"""

import torch

from autograder.kinds import Number
from gradtutor.key.exercise import Exercise, Wrong
from gradtutor.key.numeric import central_diff, descended


def reference(w0: float, lr: float, target: float, steps: int) -> torch.Tensor:
    return descended(w0, lr, target, steps)


def analytic(w0: float, lr: float, target: float, steps: int) -> float:
    # each step: w - target <- (w - target) - lr · 2(w - target) = (1 - 2 lr)(w - target)
    return target + (1 - 2 * lr) ** steps * (w0 - target)


def finite_diff(w0: float, lr: float, target: float, steps: int) -> float:
    w = w0
    for _ in range(steps):
        w -= lr * central_diff(lambda v: (v - target) ** 2, w)
    return w


def _accumulating(w0: float, lr: float, target: float, steps: int) -> float:
    w, total = w0, 0.0
    for _ in range(steps):
        total += 2 * (w - target)  # backward() adds into .grad
        w -= lr * total
    return w


def _ascending(w0: float, lr: float, target: float, steps: int) -> float:
    w = w0
    for _ in range(steps):
        w += lr * 2 * (w - target)  # .grad zeroed, but the step adds it
    return w


def _draw(rng) -> dict:
    return {"w0": rng.uniform(-4, 4), "lr": rng.uniform(0.05, 0.3), "target": rng.uniform(-3, 3),
            "steps": rng.randint(3, 8)}


EXERCISE = Exercise(
    title="Fix it: a training loop that never empties .grad",
    prompt=r"""
This loop is meant to run `steps` steps of gradient descent on $L = (w - \text{target})^2$ and
return the parameter:

```python
def train(w, lr, target, steps):
    for _ in range(steps):
        loss = (w - target) ** 2
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
    return w
```

It runs without an error and returns a wrong number. Repair `train` (same signature, still
updating `w` in place). The grader calls
`train(torch.tensor(w0, requires_grad=True), lr, target, steps)` with $w_0 = {{w0|pretty}}$,
lr $= {{lr|pretty}}$, target $= {{target|pretty}}$, ${{steps}}$ steps, and with fresh values.
""",
    setup="w0, lr, target, steps = {{w0}}, {{lr}}, {{target}}, {{steps}}",
    answer="train",
    call="train(torch.tensor(w0, requires_grad=True), lr, target, steps)",
    placeholder="def train(w, lr, target, steps):\n    return ...",
    solution="""def train(w, lr, target, steps):
    for _ in range(steps):
        loss = (w - target) ** 2
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
        w.grad = None          # or w.grad.zero_(): the next backward starts from nothing
    return w""",
    kind=Number(),
    params={"w0": -1.0, "lr": 0.15, "target": 2.0, "steps": 5},
    hidden=({"w0": 4.0, "lr": 0.1, "target": -1.0, "steps": 7},
            {"w0": 0.5, "lr": 0.25, "target": 1.5, "steps": 4}),
    draw=_draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("accumulation", _accumulating,
              "This is the loop as written. backward() adds into w.grad, it never overwrites, "
              "so step k moves w by lr times the sum of all k gradients so far: the steps grow, "
              "and w overshoots the target and swings around it.",
              "Empty w.grad once per step, after the update and before the next backward()."),
        Wrong("zero_grad_order", lambda w0, lr, target, steps: w0,
              "w never moved: the gradient is emptied between backward() and the update, so "
              "every update subtracts lr · 0.",
              "Where in the loop is w.grad still needed? Zero it after that point."),
        Wrong("descent_direction", _ascending,
              "This is where w goes when each step adds lr times the gradient: w climbs the loss "
              "instead of going down it. The gradient points uphill, so gradient descent "
              "subtracts it.",
              "In which direction does w move at each of your steps, and in which direction "
              "is the target?"),
    ),
)
