"""Reference set 002, 3.2: y = x³ at x = 3, backward(retain_graph=True) then backward() -> 54."""

import torch

from autograder.kinds import Number
from gradtutor.key.exercise import Exercise, Wrong
from gradtutor.key.numeric import central_diff


def reference(x0: float) -> torch.Tensor:
    x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    y = x**3
    y.backward(retain_graph=True)
    y.backward()
    return x.grad


def analytic(x0: float) -> float:
    # the retained graph is walked twice; each walk adds dy/dx = 3x² to x.grad
    return 2 * 3 * x0**2


EXERCISE = Exercise(
    title="Walking one graph twice",
    prompt=r"""
```python
x = torch.tensor({{x0}}, requires_grad=True)
y = x**3
y.backward(retain_graph=True)
y.backward()
```

This time the graph is built **once** and walked twice; `retain_graph=True` keeps it alive
after the first walk. What is `x.grad` at the end? Answer as an expression of `x0`.
""",
    setup="x0 = {{x0}}",
    answer="grad_after_two_walks",
    solution="""grad_after_two_walks = 2 * (3 * x0**2)   # two walks, each adds dy/dx = 3·x0²""",
    by_hand=True,
    kind=Number(),
    params={"x0": 3.0},
    hidden=({"x0": -1.5}, {"x0": 0.5375}),
    draw=lambda rng: {"x0": rng.choice([-1, 1]) * rng.uniform(0.3, 4)},
    reference=reference,
    analytic=analytic,
    finite_diff=lambda x0: 2 * central_diff(lambda t: t**3, x0),
    wrong=(
        Wrong("accumulation", lambda x0: 3 * x0**2,
              "That is dy/dx from one walk, as if the second backward() overwrote the first. "
              "retain_graph=True only keeps the graph's saved values alive; each walk still adds "
              "its dy/dx = 3x² into x.grad.",
              "What is x.grad after the first call, and what does the second call add to it?"),
        Wrong("backward_twice_second_derivative", lambda x0: 6 * x0,
              "That is the second derivative d²y/dx² = 6x. A second backward() does not "
              "differentiate the first result again: it repeats the same walk and computes dy/dx "
              "once more. Second derivatives need create_graph=True (chapter 8).",
              "Which tensor does the second call start from: y, or x.grad?"),
        Wrong("backward_twice_second_derivative", lambda x0: 3 * x0**2 + 6 * x0,
              "The first call's 3x² plus the second derivative 6x: the second backward() was read "
              "as differentiating again. It walks the same graph from y and adds 3x² once more.",
              "Both calls start from y. What does each one add to x.grad?"),
    ),
)
