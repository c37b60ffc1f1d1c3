"""Content map M12, fixed by running it (issue #14): the loop with w = w - lr * w.grad outside
no_grad raises on its second step (w became a non-leaf whose .grad is None). The student repairs
it; the grader runs the repaired loop on fresh w0, learning rates and step counts.

Repaired, each step shrinks w - 3 by (1 - 2 lr): w_k = 3 + (1 - 2 lr)^k (w0 - 3).
"""

import torch

from autograder.judge import quietly
from autograder.kinds import Number
from exercises.ch03_mechanics._protections import message_of
from gradtutor.key.exercise import Exercise, Wrong
from gradtutor.key.numeric import central_diff, descended

TARGET = 3.0


def reference(w0: float, lr: float, steps: int) -> torch.Tensor:
    return descended(w0, lr, TARGET, steps)


def analytic(w0: float, lr: float, steps: int) -> float:
    # each step: w - 3 <- (w - 3) - lr · 2(w - 3) = (1 - 2 lr)(w - 3)
    return TARGET + (1 - 2 * lr) ** steps * (w0 - TARGET)


def finite_diff(w0: float, lr: float, steps: int) -> float:
    w = w0
    for _ in range(steps):
        w -= lr * central_diff(lambda v: (v - TARGET) ** 2, w)
    return w


def _accumulating(w0: float, lr: float, steps: int) -> float:
    # updated in place under no_grad, but .grad never emptied: step k uses the sum so far
    w, total = w0, 0.0
    for _ in range(steps):
        total += 2 * (w - TARGET)
        w -= lr * total
    return w


def _first_step_only(w0: float, lr: float, steps: int) -> float:
    # `if w.grad is not None:` around the update: after step 1, w is a non-leaf and never moves
    return w0 - lr * 2 * (w0 - TARGET)


def _broken(w0: float, lr: float) -> None:
    w = torch.tensor(w0, requires_grad=True)
    for _ in range(2):
        ((w - 3) ** 2).backward()
        w = w - lr * w.grad


MESSAGE = quietly(message_of, lambda: _broken(1.0, 0.1))  # the non-leaf .grad warning stays quiet


def _draw(rng) -> dict:
    return {"w0": rng.uniform(-5, 2), "lr": rng.uniform(0.02, 0.4), "steps": rng.randint(2, 7)}


EXERCISE = Exercise(
    title="Fix it: the update that turned w into something else",
    prompt=r"""
Here is the tempting update inside a loop, written as a function:

```python
def descend(w, lr, steps):
    for _ in range(steps):
        L = (w - 3) ** 2
        L.backward()
        w = w - lr * w.grad
    return w
```

With two or more steps it stops on the second one with `""" + MESSAGE + r"""`.
Repair `descend` (same signature) so that it runs `steps` steps of gradient descent on
$L = (w - 3)^2$ and returns the parameter. The grader calls
`descend(torch.tensor(w0, requires_grad=True), lr, steps)` with $w_0 = {{w0|pretty}}$,
lr $= {{lr|pretty}}$, ${{steps}}$ steps, and with values it has not shown you.
""",
    setup="w0, lr, steps = {{w0}}, {{lr}}, {{steps}}",
    answer="descend",
    call="descend(torch.tensor(w0, requires_grad=True), lr, steps)",
    placeholder="def descend(w, lr, steps):\n    return ...",
    solution="""def descend(w, lr, steps):
    for _ in range(steps):
        L = (w - 3) ** 2
        L.backward()
        with torch.no_grad():      # the update is not part of the model: do not record it
            w -= lr * w.grad       # in place: w stays the leaf you created
        w.grad = None              # the next backward() starts from nothing
    return w""",
    kind=Number(),
    params={"w0": 1.0, "lr": 0.1, "steps": 3},
    hidden=({"w0": -2.0, "lr": 0.3, "steps": 4}, {"w0": 0.5, "lr": 0.05, "steps": 6}),
    draw=_draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("accumulation", _accumulating,
              "The update now runs in place under no_grad, so w stays a leaf and its .grad is "
              "filled every step. But backward() adds into .grad, it never overwrites: step k "
              "moves w by lr times the sum of all k gradients so far, and w overshoots.",
              "What does w.grad hold at the start of the second step?"),
        Wrong("out_of_place_update", _first_step_only,
              "Only the first step moved w. After w = w - lr * w.grad, the name w points at the "
              "result of a subtraction, a non-leaf whose .grad backward() never fills, so every "
              "later step finds no gradient. Skipping the step when .grad is None hides the "
              "error but not the cause.",
              "After the first update, is w still the leaf you created? Which update keeps it "
              "one?"),
    ),
)
