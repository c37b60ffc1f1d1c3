"""log(1 - sigmoid(x)) by hand vs the fused F.logsigmoid(-x), in float32 (PyTorch's default).

At x = 20, sigmoid(x) rounds to exactly 1.0 in float32: the hand-written loss is -inf and its
gradient NaN; logsigmoid(-x) gives the true gradient -sigmoid(20) = -1.0 (to float32 precision).
"""

import math

import numpy as np
import torch
import torch.nn.functional as F

from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong

NAN = float("nan")


def reference(x: list[float]) -> torch.Tensor:
    # float32 on purpose: the overflow is the lesson, and float32 is what students type.
    # (In float64 the same failure waits until x ≈ 37.)
    rows = []
    for loss in (lambda t: torch.log(1 - torch.sigmoid(t)), lambda t: F.logsigmoid(-t)):
        t = torch.tensor(x, dtype=torch.float32, requires_grad=True)
        loss(t).sum().backward()
        rows.append(t.grad.to(torch.float64))
    return torch.stack(rows)


def _sigmoid(v: float) -> float:
    return 1 / (1 + math.exp(-v))


def _saturates_in_float32(v: float) -> bool:
    # 1 - sigmoid(v) is exactly 0 in float32 once exp(-v) falls below half an ulp of 1
    s = np.float32(1) / (np.float32(1) + np.exp(np.float32(-v)))
    return np.float32(1) - s == 0


def analytic(x: list[float]) -> list[list[float]]:
    # d/dx log(1 - σ(x)) = -σ(x). By hand: 1/(1-σ) · (-1) · σ(1-σ) = (1/0)·0 = NaN once 1-σ
    # rounds to 0. Fused logsigmoid(-x) never forms 1 - σ.
    return [[NAN if _saturates_in_float32(v) else -_sigmoid(v) for v in x],
            [-_sigmoid(v) for v in x]]


def _draw(rng) -> dict:
    x = [rng.uniform(18, 60), rng.uniform(-5, 4), rng.uniform(-5, 4)]
    rng.shuffle(x)
    return {"x": x}


# No finite_diff witness: the function is smooth, but the question is what float32 arithmetic
# produces, and a finite difference of the saturated loss is NaN - NaN, not a witness.

EXERCISE = Exercise(
    title="A loss that overflows, and one that does not",
    prompt=r"""
The log-probability of class 0 under a sigmoid model is $\log(1 - \sigma(x))$. Two ways to
write it, for the logits `x = torch.tensor({{x}}, requires_grad=True)` (float32, PyTorch's
default):

1. by hand: `torch.log(1 - torch.sigmoid(x)).sum()`;
2. fused: `F.logsigmoid(-x).sum()` (the same function, since $1 - \sigma(x) = \sigma(-x)$).

Call `.backward()` on each (on a fresh `x`). Give both gradients as the rows of `loss_grads`,
shape (2, 3): row 0 by hand, row 1 fused. Write `float("nan")` where autograd produces NaN.
""",
    setup="""import torch.nn.functional as F

logits = {{x}}""",
    answer="loss_grads",
    placeholder="loss_grads = ...  # [grad by hand, grad fused]",
    solution="""rows = []
for loss in (lambda t: torch.log(1 - torch.sigmoid(t)), lambda t: F.logsigmoid(-t)):
    x = torch.tensor(logits, requires_grad=True)
    loss(x).sum().backward()
    rows.append(x.grad)
loss_grads = torch.stack(rows)""",
    kind=Tensor(shape=(2, 3)),
    params={"x": [20.0, -3.0, 2.0]},
    hidden=({"x": [-1.0, 30.0, 0.5]}, {"x": [3.0, -2.0, 25.0]}),
    draw=_draw,
    reference=reference,
    analytic=analytic,
    wrong=(
        Wrong("unstable_loss", lambda x: [analytic(x)[1], analytic(x)[1]],
              "Mathematically both rows are -σ(x), but the float32 number just below 1 is "
              "1 - 2⁻²⁴ ≈ 1 - 6e-8, and σ(20) ≈ 1 - 2e-9 is much closer to 1 than that: it "
              "rounds to exactly 1.0, 1 - σ is 0, log gives -inf, and backward computes "
              "(1/0) · 0 = NaN. Autograd differentiates the arithmetic you wrote, rounding "
              "included.",
              "Print torch.sigmoid(torch.tensor(20.0)) == 1 and 1 - torch.sigmoid(...)."),
        Wrong("unstable_loss",
              lambda x: [[-math.inf if _saturates_in_float32(v) else -_sigmoid(v) for v in x],
                         analytic(x)[1]],
              "log's slope at 0 is indeed infinite, but the chain continues into sigmoid, "
              "whose slope σ(1-σ) is exactly 0 once σ rounds to 1: -inf · 0 = NaN.",
              "Multiply all three local slopes of the hand-written chain at x = 20."),
        Wrong("unstable_loss", lambda x: [analytic(x)[0], analytic(x)[0]],
              "F.logsigmoid is computed in a stable form (it never builds 1 - σ(x)), so its "
              "gradient stays finite: -σ(20) ≈ -1.",
              "Run the fused version and print the gradient."),
    ),
)
