"""Softmax + log by hand vs F.cross_entropy at a huge logit, in float32.

Logits [1000, 0], target 1: exp(1000) overflows to inf, so p = [inf/inf, 1/inf] = [nan, 0]
(measured, torch 2.13), the loss is -log 0 = +inf and its gradient is [nan, nan];
F.cross_entropy (log-sum-exp) gives softmax - onehot = [1, -1].
"""

import math

import torch
import torch.nn.functional as F

from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong

NAN = float("nan")
FLOAT32_MAX_EXP = math.log(torch.finfo(torch.float32).max)  # ≈ 88.72: exp overflows above it


def _by_hand(z: torch.Tensor, target: int) -> torch.Tensor:
    p = z.exp() / z.exp().sum()
    return -p[target].log()


def _fused(z: torch.Tensor, target: int) -> torch.Tensor:
    return F.cross_entropy(z[None], torch.tensor([target]))


def reference(z: list[float], target: int) -> torch.Tensor:
    # float32 on purpose: the overflow is the lesson, and float32 is what students type
    rows = []
    for loss in (_by_hand, _fused):
        t = torch.tensor(z, dtype=torch.float32, requires_grad=True)
        loss(t, target).backward()
        rows.append(t.grad.to(torch.float64))
    return torch.stack(rows)


def _softmax_minus_onehot(z: list[float], target: int) -> list[float]:
    top = max(z)  # the log-sum-exp trick: exp(z - max) never overflows
    e = [math.exp(v - top) for v in z]
    return [v / sum(e) - (1.0 if i == target else 0.0) for i, v in enumerate(e)]


def analytic(z: list[float], target: int) -> list[list[float]]:
    # d/dz of -log softmax(z)[target] = softmax(z) - onehot(target); by hand, exp(z) overflows
    # to inf once z > log(float32 max), and inf/inf = NaN poisons every entry
    by_hand = ([NAN] * len(z) if max(z) > FLOAT32_MAX_EXP else _softmax_minus_onehot(z, target))
    return [by_hand, _softmax_minus_onehot(z, target)]


def _draw(rng) -> dict:
    z = [rng.uniform(100, 1000), rng.uniform(-5, 5)]
    rng.shuffle(z)
    return {"z": z, "target": rng.randint(0, 1)}


# No finite_diff witness: the question is what float32 arithmetic produces; a finite
# difference of the overflowing loss is inf - inf.

EXERCISE = Exercise(
    title="Softmax at a huge logit",
    prompt=r"""
Cross-entropy of the logits `z = torch.tensor({{z}}, requires_grad=True)` (float32) for the
target class `target = {{target}}`, written two ways:

1. by hand: `p = z.exp() / z.exp().sum()`, then `loss = -p[target].log()`;
2. fused: `F.cross_entropy(z[None], torch.tensor([target]))`.

Call `.backward()` on each (on a fresh `z`). Give both gradients as the rows of `xent_grads`,
shape (2, 2): row 0 by hand, row 1 fused. Write `float("nan")` where autograd produces NaN.
""",
    setup="""import torch.nn.functional as F

z_values, target = {{z}}, {{target}}""",
    answer="xent_grads",
    placeholder="xent_grads = ...  # [grad by hand, grad fused]",
    solution="""rows = []
for fused in (False, True):
    z = torch.tensor(z_values, requires_grad=True)
    if fused:
        loss = F.cross_entropy(z[None], torch.tensor([target]))
    else:
        p = z.exp() / z.exp().sum()
        loss = -p[target].log()
    loss.backward()
    rows.append(z.grad)
xent_grads = torch.stack(rows)""",
    kind=Tensor(shape=(2, 2)),
    params={"z": [1000.0, 0.0], "target": 1},
    hidden=({"z": [0.0, 800.0], "target": 0}, {"z": [-2.0, 500.0], "target": 1}),
    draw=_draw,
    reference=reference,
    analytic=analytic,
    wrong=(
        Wrong("unstable_loss", lambda z, target: [analytic(z, target)[1]] * 2,
              "On paper both rows are softmax(z) - onehot(target). In float32, exp(z) "
              "overflows to inf above z ≈ 88.7, so p = exp(z) / sum(exp(z)) is inf/inf = NaN "
              "at the huge logit and exactly 0 at the others. The loss -log p[target] is then "
              "+inf (or NaN), and the backward pass, dividing by the same infinite sum, gives "
              "NaN for every logit. F.cross_entropy subtracts the largest logit before "
              "exponentiating (log-sum-exp), so nothing overflows.",
              "Print z.exp() for these logits."),
        Wrong("xent_onehot",
              lambda z, target: [analytic(z, target)[0],
                                 [v + (1.0 if i == target else 0.0)
                                  for i, v in enumerate(analytic(z, target)[1])]],
              "The fused row is softmax(z) alone. The gradient of -log softmax(z)[target] is "
              "softmax(z) minus the one-hot vector of the target: the target logit is pushed "
              "up, the others down.",
              "Differentiate -z[target] + log Σ exp(z) with respect to each z_i."),
        Wrong("unstable_loss", lambda z, target: [[0.0] * len(z), analytic(z, target)[1]],
              "Nothing stops a NaN: it is not replaced by 0 along the way. exp(z) = inf "
              "makes the huge logit's probability inf/inf = NaN (the others are 1/inf = 0), "
              "and the backward pass meets inf/inf again: every logit's gradient is NaN.",
              "Print p in the hand-written version."),
    ),
)
