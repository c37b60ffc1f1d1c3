"""Content map M14: y = sigmoid(x), y.data.mul_(2), y.sum().backward() gives the silently wrong
x.grad = [-0.6757, -1.3416] at x = [1, 2]; the true sigmoid' is [0.1966, 0.1050]."""

import math
import random

import torch

from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong, value_instead


def sig(v: float) -> float:
    return 1 / (1 + math.exp(-v))


def reference(x: list, k: float) -> torch.Tensor:
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    y = t.sigmoid()
    y.data.mul_(k)
    y.sum().backward()
    return t.grad


def analytic(x: list, k: float) -> list[float]:
    # SigmoidBackward computes y(1 - y) from the *saved output* y, which .data changed to k·σ
    return [k * sig(v) * (1 - k * sig(v)) for v in x]


def draw(rng: random.Random) -> dict:
    return {"x": [rng.uniform(-2.5, 2.5) for _ in range(2)], "k": rng.choice([2.0, 3.0, 0.5])}


EXERCISE = Exercise(
    title=".data: no error, wrong gradient",
    prompt=r"""
```python
x = torch.tensor({{x}}, requires_grad=True)
y = x.sigmoid()
y.data.mul_({{k}})        # change y in place, behind autograd's back
y.sum().backward()
```

No error is raised. What is `x.grad`? Give two numbers, computed from `x0` and `k` (run it, or
work out what the sigmoid's backward computes from the tensor it saved).
""",
    setup="x0 = {{x}}\nk = {{k}}",
    answer="x_grad_data",
    placeholder="x_grad_data = ...  # two numbers",
    solution="""x = torch.tensor(x0, requires_grad=True)
y = x.sigmoid()
y.data.mul_(k)
y.sum().backward()
x_grad_data = x.grad""",
    kind=Tensor(shape=(2,), rtol=1e-3, atol=1e-4),  # accepts values copied from a 4-decimal printout
    params={"x": [1.0, 2.0], "k": 2.0},
    hidden=({"x": [-0.5, 0.7], "k": 3.0}, {"x": [0.0, -1.5], "k": 0.5}),
    draw=draw,
    reference=reference,
    analytic=analytic,
    wrong=(
        Wrong("data_silent", lambda x, k: [sig(v) * (1 - sig(v)) for v in x],
              "That is the true derivative σ(x)(1 - σ(x)), what you would get without the .data "
              "line. But the sigmoid's backward does not recompute σ(x): it reuses its saved "
              "output y. y.data.mul_ changed that saved tensor in place without bumping the "
              "version counter autograd checks, so backward silently used the changed y and "
              "returned y(1 - y) with the wrong y. No error, wrong numbers.",
              "Which tensor does SigmoidBackward0 save, and what does it hold after the .data "
              "line?"),
        Wrong("data_silent", lambda x, k: [k * sig(v) * (1 - sig(v)) for v in x],
              "This treats the multiplication as part of the graph, k·σ'(x). Changes through "
              ".data are invisible to autograd: they are never recorded, so they do not appear "
              "as a factor in the chain rule. They only corrupt the saved output that the "
              "sigmoid's backward reads.",
              "Was y.data.mul_ recorded in the graph? What does it change?"),
        value_instead(lambda x, k: [k * sig(v) for v in x], "y after the in-place scaling, k·σ(x)"),
    ),
)
