"""Content-map M08: y.retain_grad() keeps the non-leaf's gradient: y.grad = 2y, x.grad = 2k²x."""

import torch

from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong, value_instead
from gradtutor.key.numeric import tensor_gradient


def reference(x: list[float], k: float) -> torch.Tensor:
    tx = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    ty = tx * k
    ty.retain_grad()
    (ty**2).sum().backward()
    return torch.stack([ty.grad, tx.grad])


def analytic(x: list[float], k: float) -> list[list[float]]:
    return [[2 * k * v for v in x], [2 * k**2 * v for v in x]]


def finite_diff(x: list[float], k: float) -> torch.Tensor:
    y = torch.tensor(x, dtype=torch.float64) * k
    return torch.stack([tensor_gradient(lambda t: (t**2).sum(), y),
                        tensor_gradient(lambda t: ((t * k) ** 2).sum(), torch.tensor(x))])


EXERCISE = Exercise(
    title="Keeping a non-leaf's gradient",
    prompt=r"""
```python
x = torch.tensor({{x}}, requires_grad=True)
y = x * {{k}}
y.retain_grad()
z = (y**2).sum()
z.backward()
```

Now `y` asked to keep its gradient. Give `[y.grad, x.grad]` as two rows of numbers.
""",
    setup="x0, k = {{x}}, {{k}}",
    answer="both_grads",
    placeholder="both_grads = ...  # [y.grad, x.grad]",
    solution="""x = torch.tensor(x0, requires_grad=True)
y = x * k
y.retain_grad()
z = (y**2).sum()
z.backward()
both_grads = [y.grad, x.grad]""",
    kind=Tensor(shape=(2, 2)),
    params={"x": [1.0, 2.0], "k": 3.0},
    hidden=({"x": [-0.5188, 1.5563], "k": -2.0},),
    draw=lambda rng: {"x": [rng.uniform(-3, 3), rng.uniform(-3, 3)],
                      "k": rng.choice([-1, 1]) * rng.uniform(1.5, 4)},
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("chain_rule_dropped", lambda x, k: [[2 * k * v for v in x]] * 2,
              "y.grad = 2y is right, but x.grad was given the same value. From y to x the "
              "gradient passes through y = kx, whose local gradient k multiplies it: "
              "x.grad = 2y·k.",
              "Write dz/dx as (dz/dy)(dy/dx)."),
        Wrong("local_gradient_only", lambda x, k: [[2 * k * v for v in x], [k, k]],
              "x.grad holds only the local gradient dy/dx = k, without the gradient 2y arriving "
              "from z. backward() multiplies what arrives from above by the local gradient.",
              "What arrives at y from z, and what does y's box do with it?"),
        Wrong("nonleaf_grad", lambda x, k: [[2 * k**2 * v for v in x]] * 2,
              "y.grad was given x's gradient. retain_grad() keeps dz/dy, the gradient with respect "
              "to y itself: 2y. x's gradient is that times k.",
              "Differentiate z = Σ yᵢ² with respect to y."),
        value_instead(lambda x, k: [[k * v for v in x], [2 * k**2 * v for v in x]],
                      "y = kx, in y.grad's row"),
    ),
)
