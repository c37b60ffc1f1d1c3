"""Reference set 002, 2.3: the ReLU corner. x = 1, z = 1 - x = 0, y = relu(z), L = y: x.grad = 0.

dL/dx = dL/dy · relu'(z) · dz/dx = 1 · 0 · (-1) = 0, because torch 2.13 takes relu'(0) = 0.
Every variant builds z = x0 - x with x = x0, so z is exactly 0: off the corner, the wrong answers
below would coincide with the right one.
"""

import torch

from autograder.kinds import Number
from gradtutor.key.exercise import Exercise, Wrong


def reference(x0: float) -> torch.Tensor:
    x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    z = x0 - x  # exactly 0: the same float on both sides
    y = torch.relu(z)
    y.backward()
    return x.grad


def analytic(x0: float) -> float:
    # dL/dy = 1, relu'(0) = 0 (PyTorch's convention at the corner), dz/dx = -1
    dl_dy, relu_slope, dz_dx = 1.0, 0.0, -1.0
    return dl_dy * relu_slope * dz_dx


# No finite_diff witness: central differences straddle the corner and measure
# (relu(h) - relu(-h)) / 2h = 0.5 per unit of z, the average of the two one-sided slopes.
# That is not what autograd computes at a kink, so it cannot witness this answer.

EXERCISE = Exercise(
    title="The ReLU corner",
    prompt=r"""
```python
x = torch.tensor({{x0}}, requires_grad=True)
z = {{x0}} - x          # z is exactly 0
y = torch.relu(z)
L = y
L.backward()
```

The input to the ReLU sits exactly on its corner. What is `x.grad`? Follow the chain
$\frac{dL}{dx} = \frac{dL}{dy}\cdot \mathrm{ReLU}'(z)\cdot\frac{dz}{dx}$ factor by factor, using
the slope PyTorch picks at the corner. (The setup cell defines `x0`; the grader also places
other inputs exactly on the corner.)
""",
    setup="x0 = {{x0}}",
    answer="corner_grad",
    solution="""x = torch.tensor(x0, requires_grad=True)
z = x0 - x
y = torch.relu(z)
L = y
L.backward()
corner_grad = x.grad""",
    kind=Number(),
    params={"x0": 1.0},
    hidden=({"x0": -2.5}, {"x0": 3.75}),
    draw=lambda rng: {"x0": rng.uniform(-5, 5)},
    reference=reference,
    analytic=analytic,
    wrong=(
        Wrong("relu_chain", lambda x0: -1.0,
              "This takes ReLU'(0) = 1, the slope of the right-hand branch, and multiplies it "
              "by dz/dx = -1. PyTorch's ReLU backward passes the gradient only where z > 0; at "
              "z = 0 exactly it multiplies by 0, and a 0 anywhere in the chain zeroes the "
              "whole product.",
              "Which slope does torch.relu use when its input is exactly 0? Try "
              "torch.relu on a tensor holding 0.0 and look at its .grad."),
        Wrong("kink_convention", lambda x0: -0.5,
              "This takes ReLU'(0) = 0.5, the average of the left slope 0 and the right slope 1 "
              "(what torch.maximum(z, 0) or a central difference would give). torch.relu does "
              "not average: it uses 0 at the corner.",
              "Each PyTorch function picks its own slope at a kink. Check torch.relu's choice "
              "rather than reasoning about averages."),
        Wrong("sign_error", lambda x0: 1.0,
              "Two slips at once: ReLU'(0) taken as 1 and dz/dx taken as +1. z = x0 - x "
              "decreases when x grows, so dz/dx = -1; and at the corner the ReLU factor is 0 "
              "anyway.",
              "Write the three factors of the chain separately before multiplying."),
        Wrong("kink_convention", lambda x0: float("nan"),
              "Mathematically there is no single slope at the corner, but autograd never "
              "returns 'undefined' here: every function has a fixed rule for its kink, and "
              "torch.relu's rule gives a plain number.",
              "Run it: torch.relu at an input of exactly 0, then backward, then print .grad."),
    ),
)
