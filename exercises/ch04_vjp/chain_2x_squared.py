"""Reference set 001, done right: y = 2x, z = y² at x = 1, z.backward() gives dz/dx = 8."""

import torch

from autograder.kinds import Number
from gradtutor.key.exercise import Exercise, Wrong
from gradtutor.key.numeric import central_diff


def reference(x0: float) -> torch.Tensor:
    x = torch.tensor([x0], dtype=torch.float64, requires_grad=True)
    y = 2 * x
    z = y**2
    z.backward()
    return x.grad


def _draw(rng) -> dict:
    return {"x0": rng.choice([-1, 1]) * rng.uniform(0.5, 3)}


EXERCISE = Exercise(
    title="dz/dx, the right way",
    prompt=r"""
Let $y = 2x$ and $z = y^2$, starting from `x = torch.tensor([{{x0}}], requires_grad=True)`.
By the chain rule, $\frac{dz}{dx} = \frac{dz}{dy}\frac{dy}{dx}$. Call `backward()` on the right
tensor and give `x.grad`.
""",
    setup="x0 = {{x0}}",
    answer="dz_dx",
    solution="""x = torch.tensor([x0], requires_grad=True)
y = 2 * x
z = y ** 2
z.backward()
dz_dx = x.grad""",
    kind=Number(),
    params={"x0": 1.0},
    hidden=({"x0": -0.7321},),
    draw=_draw,
    reference=reference,
    analytic=lambda x0: 8 * x0,  # dz/dy · dy/dx = 2y · 2 = 8x
    finite_diff=lambda x0: central_diff(lambda t: (2 * t) ** 2, x0),
    wrong=(
        Wrong("local_gradient_only", lambda x0: 4 * x0,
              "That is dz/dy = 2y, the local gradient of the squaring box. The gradient still has "
              "to pass back through y = 2x, which multiplies it by dy/dx = 2.",
              "Write dz/dx as a product of two factors and evaluate both."),
        Wrong("chain_rule_dropped", lambda x0: 2.0,
              "That is dy/dx = 2 alone; the factor dz/dy from the squaring is missing.",
              "Which factor does the box z = y² contribute?"),
        # reference set 001's own code, x.backward(z): x.grad = z·dx/dx = (2x)². At the shown
        # x0 = 1 it equals 4x, the local gradient; the practice values tell the two apart
        Wrong("backward_wrong_tensor", lambda x0: (2 * x0) ** 2,
              "That is what x.backward(z) leaves in x.grad: backward() starts from the tensor it "
              "is called on, here x, where dx/dx = 1, and the argument z is not the function to "
              "differentiate but the upstream gradient that scales that 1. So x.grad holds the "
              "value of z, not its derivative.",
              "backward() differentiates the tensor it is called on. Which tensor is the function "
              "here, and what should the call look like?"),
        Wrong("backward_wrong_tensor", lambda x0: 1.0,
              "That is what x.backward() leaves in x.grad: dx/dx = 1. backward() starts from the "
              "tensor it is called on, so to get dz/dx the call must start from z.",
              "Which tensor's derivative do you want? Call backward() on that one."),
    ),
)
