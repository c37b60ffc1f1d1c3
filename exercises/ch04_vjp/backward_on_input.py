"""Reference set 001: x.backward(z) calls backward on the input; the argument only scales dx/dx = 1."""

import torch

from autograder.kinds import Number
from gradtutor.key.exercise import Exercise, Wrong


def reference(x0: float) -> torch.Tensor:
    x = torch.tensor([x0], dtype=torch.float64, requires_grad=True)
    y = 2 * x
    z = y**2
    x.backward(z)
    return x.grad


def analytic(x0: float) -> float:
    # backward from x: dx/dx = 1, times the upstream gradient z = (2 x0)²
    return 1.0 * (2 * x0) ** 2


def _draw(rng) -> dict:
    # keep clear of the points where two of the diagnosed answers coincide (x0 = 2, 1/2, 1/8)
    return {"x0": rng.choice([-1, 1]) * rng.uniform(0.7, 1.8)}


EXERCISE = Exercise(
    title="backward() called on the wrong tensor",
    prompt=r"""
Another student writes the chain above like this, and is puzzled by the result:

```python
x = torch.tensor([{{x0}}], requires_grad=True)
y = 2 * x
z = y ** 2
x.backward(z)
print(x.grad)
```

What does it print (as a number)?
""",
    setup="x0 = {{x0}}",
    answer="x_grad_after",
    solution="""x = torch.tensor([x0], requires_grad=True)
y = 2 * x
z = y ** 2
x.backward(z)
x_grad_after = x.grad""",
    kind=Number(),
    params={"x0": 1.0},
    hidden=({"x0": 1.5}, {"x0": -0.8125}),
    draw=_draw,
    reference=reference,
    analytic=analytic,
    # no finite_diff: the answer is not a derivative of anything but x itself
    wrong=(
        Wrong("backward_wrong_tensor", lambda x0: 8 * x0,
              "That is dz/dx, what z.backward() would give. But backward() starts from the tensor "
              "it is called on, here x, and the graph from x to x is empty: dx/dx = 1. The "
              "argument z is not 'the function to differentiate'; it is the upstream gradient, "
              "which only scales that 1.",
              "Read x.backward(z) as: start at x with incoming gradient z. What is dx/dx?"),
        Wrong("seed_is_vjp", lambda x0: 1.0,
              "1 is dx/dx, right for x.backward() with no argument. The argument of backward() "
              "is the upstream gradient and multiplies the result; it is not ignored.",
              "What does the gradient argument of backward() do to the result?"),
        Wrong("backward_wrong_tensor", lambda x0: 32 * x0**3,
              "That is z times dz/dx, what z.backward(z) would give. backward() was called on x, "
              "not on z, so the graph between x and z plays no part.",
              "Which tensor does this backward() start from?"),
    ),
)
