"""Reference set 002, 3.1: three un-zeroed backwards of y = x² at x = 2 leave x.grad = 12."""

import torch

from autograder.kinds import Number
from gradtutor.key.exercise import Exercise, Wrong
from gradtutor.key.numeric import central_diff


def reference(x0: float, n: int) -> torch.Tensor:
    x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    for _ in range(n):
        y = x**2
        y.backward()
    return x.grad


def analytic(x0: float, n: int) -> float:
    # each backward() adds dy/dx = 2x to x.grad; nothing ever empties it
    return n * 2 * x0


EXERCISE = Exercise(
    title="Backward, backward, backward",
    prompt=r"""
```python
x = torch.tensor({{x0}}, requires_grad=True)
for step in range({{n}}):
    y = x**2
    y.backward()
```

Each pass builds a fresh graph for $y = x^2$ and calls `backward()`. Nothing zeroes `x.grad`.
What is `x.grad` after the loop? Answer as an expression of `x0` and `n` from the setup cell.
""",
    setup="x0, n = {{x0}}, {{n}}",
    answer="grad_after_loop",
    solution="""grad_after_loop = n * (2 * x0)   # each pass adds dy/dx = 2·x0 into x.grad""",
    by_hand=True,
    kind=Number(),
    params={"x0": 2.0, "n": 3},
    hidden=({"x0": -1.5, "n": 4}, {"x0": 0.7375, "n": 5}),
    draw=lambda rng: {"x0": rng.choice([-1, 1]) * rng.uniform(0.3, 4), "n": rng.randint(3, 6)},
    reference=reference,
    analytic=analytic,
    finite_diff=lambda x0, n: n * central_diff(lambda t: t**2, x0),
    wrong=(
        Wrong("accumulation", lambda x0, n: 2 * x0,
              "That is the gradient of a single backward(), as if each call overwrote x.grad. "
              "PyTorch adds: every backward() does x.grad += dy/dx, so the loop leaves the sum of "
              "all passes. This is why training loops call optimizer.zero_grad() every step.",
              "Write down x.grad after the first pass, then after the second."),
        Wrong("accumulation", lambda x0, n: 2 * x0 * 2 ** (n - 1),
              "x.grad doubled on every pass, as if backward() added the stored gradient to itself. "
              "It adds the new dy/dx of this pass, which is the same number each time because x "
              "does not change.",
              "What does one backward() add, and does that amount change between passes?"),
    ),
)
