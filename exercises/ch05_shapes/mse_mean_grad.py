"""Outline Ch 5 (MSE mean vs sum): F.mse_loss averages, so the gradient is 2(p - t)/N;
pred [1, 2, 3, 4] against zeros gives [0.5, 1, 1.5, 2] (the sum reduction would give [2, 4, 6, 8])."""

import random

import torch
import torch.nn.functional as F

from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong
from gradtutor.key.numeric import tensor_gradient

N = 4


def reference(pred: list, target: list) -> torch.Tensor:
    p = torch.tensor(pred, dtype=torch.float64, requires_grad=True)
    F.mse_loss(p, torch.tensor(target, dtype=torch.float64)).backward()
    return p.grad


def analytic(pred: list, target: list) -> list[float]:
    # L = (1/N) sum (p_i - t_i)^2, so dL/dp_i = 2 (p_i - t_i) / N
    return [2 * (p - t) / N for p, t in zip(pred, target, strict=True)]


def finite_diff(pred: list, target: list) -> torch.Tensor:
    t = torch.tensor(target, dtype=torch.float64)
    return tensor_gradient(lambda p: ((p - t) ** 2).mean(), torch.tensor(pred, dtype=torch.float64))


def draw(rng: random.Random) -> dict:
    return {"pred": [rng.uniform(-3, 3) for _ in range(N)],
            "target": [rng.uniform(-3, 3) for _ in range(N)]}


EXERCISE = Exercise(
    title="Mean squared error: where the 1/N goes",
    prompt=r"""
```python
pred = torch.tensor({{pred}}, requires_grad=True)
target = torch.tensor({{target}})
loss = F.mse_loss(pred, target)      # the default reduction is "mean"
loss.backward()
```

What is `pred.grad`? Give four numbers, as an expression of `pred0` and `target0`.
""",
    setup="import torch.nn.functional as F\npred0 = {{pred}}\ntarget0 = {{target}}",
    answer="pred_grad",
    placeholder="pred_grad = ...  # four numbers",
    solution="""pred_grad = [2 * (p - t) / len(pred0) for p, t in zip(pred0, target0)]   # the mean divides by N""",
    by_hand=True,
    kind=Tensor(shape=(N,)),
    params={"pred": [1.0, 2.0, 3.0, 4.0], "target": [0.0, 0.0, 0.0, 0.0]},
    hidden=({"pred": [-1.0, 0.5, 2.5, 3.0], "target": [0.5, -1.0, 2.0, 1.0]},
            {"pred": [2.075, -2.075, 0.0, 1.0375], "target": [1.0375, 1.0375, 1.0375, 1.0375]}),
    draw=draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("mean_scales", lambda pred, target: [2 * (p - t) for p, t in zip(pred, target, strict=True)],
              "That is the gradient of the summed loss (reduction='sum'). mse_loss averages over "
              "the N elements by default, and the 1/N of the mean multiplies every gradient.",
              "Write the loss out with its 1/N in front before differentiating."),
        Wrong("power_rule", lambda pred, target: [(p - t) / N for p, t in zip(pred, target, strict=True)],
              "The 1/N is there but the 2 from the square is missing: d/dp (p - t)² = 2(p - t).",
              "Differentiate one squared term on its own."),
        Wrong("sign_error", lambda pred, target: [2 * (t - p) / N for p, t in zip(pred, target, strict=True)],
              "The sign is flipped. The gradient with respect to pred points the way that "
              "increases the loss: where pred is above the target, raising pred makes the error "
              "worse, so the gradient is positive there.",
              "Is the loss going up or down if you increase a pred that is already too large?"),
    ),
)
