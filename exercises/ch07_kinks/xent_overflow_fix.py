"""Fix it: cross-entropy written by hand overflows at a large logit.

-(z.exp() / z.exp().sum())[t].log() in float32: exp(z) is inf above z ≈ 88.7, the probabilities
become inf/inf = NaN and 0, and the gradient is NaN in every entry. The repair subtracts the
largest logit first (log-sum-exp; the shift does not change the loss) or calls F.cross_entropy:
the gradient is softmax(z) - onehot(t). Every variant has a logit large enough to overflow, and
a target that is not that logit (there the gradient is about 0 and its sign invisible).
"""

import math

import torch
import torch.nn.functional as F

from autograder.harness import call
from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong

NAN = float("nan")


def reference(z: list[float], target: int) -> torch.Tensor:
    t = torch.tensor(z, dtype=torch.float64, requires_grad=True)
    F.cross_entropy(t[None], torch.tensor([target])).backward()
    return t.grad


def analytic(z: list[float], target: int) -> list[float]:
    top = max(z)
    e = [math.exp(v - top) for v in z]
    return [v / sum(e) - (1.0 if i == target else 0.0) for i, v in enumerate(e)]


def _draw(rng) -> dict:
    z = [rng.uniform(100, 600), rng.uniform(-5, 5), rng.uniform(-5, 5)]
    rng.shuffle(z)
    # the target is not the huge logit: there the gradient would be about 0 whatever its sign
    return {"z": z, "target": rng.choice([i for i in range(3) if z[i] < 100])}


SETUP = '''z_values, target = {{z}}, {{target}}
from autograder.harness import grads_of

def grad_of_loss(loss_fn):
    """What the grader runs: your loss on fresh float32 logits, backward(), and z.grad."""
    return grads_of(lambda z: loss_fn(z, target), z_values)'''

EXERCISE = Exercise(
    title="Fix it: a cross-entropy that overflows",
    prompt=r"""
This hand-written cross-entropy is right on paper, and returns NaN gradients as soon as one
logit is large:

```python
def xent(z, target):
    p = z.exp() / z.exp().sum()
    return -p[target].log()
```

Repair `xent(z, target)` so that it returns the same loss, $-\log \mathrm{softmax}(z)_t$, with
finite, exact gradients for any logits (in float32, the default). The grader runs
`grad_of_loss(xent)` (setup cell) at `z = {{z}}`, target ${{target}}$, and at fresh logits, each
with one logit far above 88.7, where `exp` overflows float32.
""",
    setup=SETUP,
    answer="xent",
    call=call("grads_of(lambda z: xent(z, target), z_values)"),
    placeholder="def xent(z, target):\n    return ...",
    solution="""def xent(z, target):
    m = z.max()
    log_sum_exp = m + (z - m).exp().sum().log()   # exp never sees a number above 0
    return log_sum_exp - z[target]""",
    kind=Tensor(shape=(3,), rtol=1e-4, atol=1e-6),
    params={"z": [1.0, 200.0, -2.0], "target": 0},
    hidden=({"z": [300.0, 0.5, 1.0], "target": 2}, {"z": [-1.0, 2.0, 150.0], "target": 1}),
    draw=_draw,
    reference=reference,
    analytic=analytic,
    # no finite_diff witness: the unstable and the stable loss differ exactly where exp overflows
    wrong=(
        Wrong("unstable_loss", lambda z, target: [NAN] * len(z),
              "This is the loss as written. exp(z) is inf above z ≈ 88.7 in float32, so p is "
              "inf/inf = NaN at the large logit and 0 elsewhere, and the backward pass carries "
              "the NaN to every logit. Subtracting the largest logit first changes nothing on "
              "paper (it cancels between numerator and denominator) and keeps every exp at 1 "
              "or below.",
              "Compute log Σ exp(z) as m + log Σ exp(z - m), with m the largest logit."),
        Wrong("sign_error", lambda z, target: [-g for g in analytic(z, target)],
              "The gradient has the wrong sign: this is log softmax(z)[t], without the minus. "
              "Cross-entropy is the negative log-probability; minimising it raises the target's "
              "logit.",
              "Which sign makes the target's logit go up under gradient descent?"),
    ),
)
