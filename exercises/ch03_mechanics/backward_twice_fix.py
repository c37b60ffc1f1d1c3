"""Fix it: two losses from one graph, two backward() calls, and the second one fails.

y = x³, then y.backward() and (2y).backward(): the first call frees the saved tensors (x for
PowBackward0), so the second raises "Trying to backward through the graph a second time".
Repaired (retain_graph=True on the first call, or one backward() of y + 2y), x.grad holds the
gradient of both losses: 3x² + 6x² = 9x².
"""

import torch

from autograder.kinds import Number
from gradtutor.key.exercise import Exercise, Wrong
from gradtutor.key.numeric import central_diff


def reference(x0: float) -> torch.Tensor:
    x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    y = x**3
    y.backward(retain_graph=True)
    (2 * y).backward()
    return x.grad


def analytic(x0: float) -> float:
    # d(x³)/dx + d(2x³)/dx, added in x.grad
    return 3 * x0**2 + 6 * x0**2


def finite_diff(x0: float) -> float:
    return central_diff(lambda t: t**3 + 2 * t**3, x0)


def _draw(rng) -> dict:
    return {"x0": rng.choice((-1, 1)) * rng.uniform(0.5, 3)}


EXERCISE = Exercise(
    title="Fix it: two losses, one graph",
    prompt=r"""
A function wants the gradient of two losses built on the same graph, $y = x^3$ and $2y$, added
in `x.grad`:

```python
def two_losses_grad(x):
    y = x ** 3
    y.backward()
    (2 * y).backward()
    return x.grad
```

The second `backward()` raises. Repair the function so that it returns the gradient of both
losses together. The grader calls `two_losses_grad(torch.tensor(x0, requires_grad=True))` with
$x_0 = {{x0|pretty}}$ and with fresh values.
""",
    setup="x0 = {{x0}}",
    answer="two_losses_grad",
    call="two_losses_grad(torch.tensor(x0, requires_grad=True))",
    placeholder="def two_losses_grad(x):\n    return ...",
    solution="""def two_losses_grad(x):
    y = x ** 3
    y.backward(retain_graph=True)   # keep the saved tensors for the second walk
    (2 * y).backward()
    return x.grad""",
    kind=Number(),
    params={"x0": 1.5},
    hidden=({"x0": -2.0}, {"x0": 0.75}),
    draw=_draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("first_backward_kept", lambda x0: 3 * x0**2,
              "This is the first loss's gradient alone, 3x²: what x.grad holds when the second "
              "call fails (inside a try) or is deleted. The second walk needs the saved tensors "
              "the first one freed; retain_graph=True on the first call keeps them, and the "
              "second gradient then adds to the first.",
              "Keep the graph alive for the second call, or add the two losses and call "
              "backward() once."),
        Wrong("accumulation", lambda x0: 6 * x0**2,
              "This is 6x², the gradient of one of the two losses counted on its own: the second "
              "loss 2y alone (x.grad zeroed, or the graph rebuilt with .grad reset, between the "
              "calls), or the first loss y walked twice in place of 2y. The question asks for both "
              "losses, y and 2y, and backward() adds them in x.grad if you let it.",
              "Call backward() once for each of the two losses, y and 2y, without resetting x.grad "
              "in between."),
    ),
)
