"""Outline Ch 5 (cross-entropy): for logits [2, 1, 0] and target 0 the gradient on the logits
is softmax - onehot = [-0.3348, 0.2447, 0.0900]."""

import math

import torch
import torch.nn.functional as F

from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong, value_instead
from gradtutor.key.numeric import tensor_gradient

C = 3


def softmax(z: list) -> list[float]:
    m = max(z)
    e = [math.exp(v - m) for v in z]
    return [v / sum(e) for v in e]


def reference(logits: list, target: int) -> torch.Tensor:
    z = torch.tensor(logits, dtype=torch.float64, requires_grad=True)
    F.cross_entropy(z[None], torch.tensor([target])).backward()
    return z.grad


def analytic(logits: list, target: int) -> list[float]:
    # L = -z_t + log sum_j exp z_j, so dL/dz_j = softmax_j - [j == t]
    p = softmax(logits)
    return [p[j] - (1.0 if j == target else 0.0) for j in range(C)]


def finite_diff(logits: list, target: int) -> torch.Tensor:
    return tensor_gradient(lambda z: torch.logsumexp(z, 0) - z[target],
                           torch.tensor(logits, dtype=torch.float64))


def prob_gradient(logits: list, target: int) -> list[float]:
    p = softmax(logits)
    return [-1.0 / p[j] if j == target else 0.0 for j in range(C)]


EXERCISE = Exercise(
    title="The gradient of cross-entropy",
    prompt=r"""
One example with three classes:

```python
logits = torch.tensor({{logits}}, requires_grad=True)
loss = F.cross_entropy(logits[None], torch.tensor([{{target}}]))   # a batch of one
loss.backward()
```

What is `logits.grad`? Give three numbers, computed from `logits0` and `target`.
""",
    setup="import torch.nn.functional as F\nlogits0 = {{logits}}\ntarget = {{target}}",
    answer="logits_grad",
    placeholder="logits_grad = ...  # three numbers",
    solution="""logits = torch.tensor(logits0, requires_grad=True)
loss = F.cross_entropy(logits[None], torch.tensor([target]))
loss.backward()
logits_grad = logits.grad""",
    kind=Tensor(shape=(C,), rtol=1e-3, atol=1e-4),  # accepts values copied from a 4-decimal printout
    params={"logits": [2.0, 1.0, 0.0], "target": 0},
    hidden=({"logits": [-1.0, 0.5, 3.0], "target": 1}, {"logits": [0.3, 0.3, -0.1], "target": 2}),
    draw=lambda rng: {"logits": [rng.uniform(-3, 3) for _ in range(C)], "target": rng.randrange(C)},
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("xent_onehot", lambda logits, target: softmax(logits),
              "This is softmax(logits), the predicted probabilities. The loss is "
              "-log softmax_t = -z_t + log Σ exp z_j; the log-sum-exp term gives the softmax, and "
              "the -z_t term subtracts 1 at the target class. The gradient is softmax minus the "
              "one-hot target, which is why its entries sum to zero.",
              "Differentiate -z_t + log Σ_j exp z_j term by term."),
        Wrong("sign_error", lambda logits, target: [-v for v in analytic(logits, target)],
              "The sign is flipped (one-hot minus softmax). The gradient points towards higher "
              "loss: raising the target's logit lowers the loss, so its entry is negative.",
              "Does the loss go up or down when the target's logit grows?"),
        Wrong("chain_rule_dropped", prob_gradient,
              "That is the gradient with respect to the probabilities, -1/p_t at the target. "
              "The logits sit one box further back: the gradient must still pass through the "
              "softmax, which spreads it over every class.",
              "Take the last step of the chain rule through softmax, or differentiate the "
              "log-sum-exp form directly in the logits."),
        value_instead(lambda logits, target: [-math.log(p) for p in softmax(logits)],
                      "the per-class losses -log softmax(z)_i"),
    ),
)
