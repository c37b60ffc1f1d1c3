"""Reference set 002, 3.3: x = 2, a = x², b = a.detach(), c = b·x gives x.grad = 4 (= x²), not 12."""

import random

import torch

from autograder.kinds import Number
from gradtutor.key.exercise import Exercise, Wrong


def reference(x0: float) -> torch.Tensor:
    x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    a = x**2
    b = a.detach()
    c = b * x
    c.backward()
    return x.grad


def analytic(x0: float) -> float:
    # b is the constant x0², so c = b·x and dc/dx = b = x0²
    return x0**2


def finite_diff(x0: float) -> float:
    # hold b fixed at its value (that is what detach means) and nudge only the live x
    h, b = 1e-6, x0**2
    return (b * (x0 + h) - b * (x0 - h)) / (2 * h)


def draw(rng: random.Random) -> dict:
    # away from 0 and 1, where x², x³ and 3x² would coincide
    return {"x0": rng.choice([-1, 1]) * rng.uniform(1.5, 3.5)}


EXERCISE = Exercise(
    title="Where detach cuts",
    prompt=r"""
```python
x = torch.tensor({{x0}}, requires_grad=True)
a = x ** 2
b = a.detach()
c = b * x
c.backward()
```

What is `x.grad`? Write it as an expression of `x0`.
""",
    setup="x0 = {{x0}}",
    answer="x_grad_cut",
    solution="""x_grad_cut = x0 ** 2   # b = x² is a constant after detach: dc/dx = b""",
    by_hand=True,
    kind=Number(),
    params={"x0": 2.0},
    hidden=({"x0": 3.0}, {"x0": -1.5375}),
    draw=draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("detach_cuts_path", lambda x0: 3 * x0**2,
              "3x² is the derivative of x³, which is what c would be without the detach. "
              "b = a.detach() has the value x² but no history: autograd treats it as a constant, "
              "so the path from c back through b to x does not exist. Only the explicit x in "
              "c = b·x carries a gradient, and that gradient is b.",
              "Treat b as a plain number that happens to equal x². What is d(b·x)/dx?"),
        Wrong("value_not_derivative", lambda x0: x0**3,
              "That is the value of c = x²·x, not its derivative.",
              "x.grad holds dc/dx, a rate of change."),
        Wrong("grad_modes", lambda x0: 0.0,
              "detach() cuts one tensor out of the graph, not everything computed after it. c = b·x "
              "still multiplies by the tracked x, so c has a grad_fn and x receives dc/dx = b. "
              "(Turning recording off for a whole block is what torch.no_grad() does.)",
              "Which inputs of c = b * x still require grad?"),
    ),
)
