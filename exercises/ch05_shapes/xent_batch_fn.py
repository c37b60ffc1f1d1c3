"""Outline Ch 5 (cross-entropy over a batch), as a function the student writes:
dL/dlogits = (softmax(logits) - onehot(targets)) / N for the mean loss over N examples."""

import random

import torch
import torch.nn.functional as F

from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong
from gradtutor.key.numeric import tensor_gradient

from .xent_grad_single import softmax

N, C = 2, 3


def reference(logits: list, targets: list) -> torch.Tensor:
    z = torch.tensor(logits, dtype=torch.float64, requires_grad=True)
    F.cross_entropy(z, torch.tensor(targets)).backward()
    return z.grad


def _per_row(logits: list, targets: list, sign: float = 1.0, onehot: bool = True,
             scale: float = 1.0 / N) -> list[list[float]]:
    rows = []
    for z, t in zip(logits, targets, strict=True):
        p = softmax(z)
        rows.append([sign * scale * (p[j] - (1.0 if (onehot and j == t) else 0.0)) for j in range(C)])
    return rows


def analytic(logits: list, targets: list) -> list[list[float]]:
    # mean over N examples: each row is (softmax - onehot) / N
    return _per_row(logits, targets)


def finite_diff(logits: list, targets: list) -> torch.Tensor:
    t = torch.tensor(targets)
    return tensor_gradient(lambda z: (torch.logsumexp(z, 1) - z[torch.arange(N), t]).mean(),
                           torch.tensor(logits, dtype=torch.float64))


def draw(rng: random.Random) -> dict:
    return {"logits": [[rng.uniform(-3, 3) for _ in range(C)] for _ in range(N)],
            "targets": [rng.randrange(C) for _ in range(N)]}


EXERCISE = Exercise(
    title="Write the cross-entropy gradient yourself",
    prompt=r"""
Write a function `xent_grad(logits, targets)` that returns the gradient of

```python
F.cross_entropy(logits, targets)      # the mean over the batch
```

with respect to `logits` (shape `(N, C)`), **without** calling `backward`: use the closed form
from this section. `targets` holds one class index per row. The grader calls your function on
the batch in the setup cell and on fresh batches; compare with autograd yourself first.
""",
    setup="""import torch.nn.functional as F
logits = torch.tensor({{logits}}, dtype=torch.float64)
targets = torch.tensor({{targets}})""",
    answer="xent_grad",
    call="xent_grad(logits.clone(), targets.clone())",
    placeholder="def xent_grad(logits, targets):\n    return ...",
    solution="""def xent_grad(logits, targets):
    n, c = logits.shape
    return (torch.softmax(logits, dim=1) - F.one_hot(targets, c)) / n""",
    kind=Tensor(shape=(N, C), rtol=1e-3, atol=1e-4),  # accepts values copied from a 4-decimal printout
    params={"logits": [[2.0, 1.0, 0.0], [0.0, 0.0, 0.0]], "targets": [0, 2]},
    hidden=({"logits": [[-1.0, 0.5, 3.0], [1.0, -2.0, 0.5]], "targets": [1, 0]},
            {"logits": [[0.2, 0.4, -0.6], [2.5, 2.0, -1.0]], "targets": [2, 2]}),
    draw=draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("mean_scales", lambda logits, targets: _per_row(logits, targets, scale=1.0),
              "Each row is softmax minus one-hot, but the 1/N of the batch mean is missing. "
              "cross_entropy averages the N per-example losses, so every example's gradient is "
              "divided by N.",
              "What does the default reduction='mean' do to each example's share of the loss?"),
        Wrong("xent_onehot", lambda logits, targets: _per_row(logits, targets, onehot=False),
              "These are the softmax probabilities (divided by N) without subtracting the "
              "one-hot target. The -z_t term of the loss contributes -1 at each row's target.",
              "What must each row of the gradient sum to?"),
        Wrong("sign_error", lambda logits, targets: _per_row(logits, targets, sign=-1.0),
              "The sign is flipped: one-hot minus softmax. Raising the target's logit lowers the "
              "loss, so that entry of the gradient is negative.",
              "Check the sign of the entry at a target class."),
    ),
)
