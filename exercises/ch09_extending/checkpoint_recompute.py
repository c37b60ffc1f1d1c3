"""torch.utils.checkpoint: the checkpointed block runs its forward once more during backward
(it saves its input instead of its intermediates), and the gradients are the same."""

import math

import torch
from torch.utils.checkpoint import checkpoint

from autograder.kinds import Number, Table, Tensor
from gradtutor.key.exercise import Exercise, Wrong, table_with

from ._common import central

N = 2
KIND = Table(rows=("plain", "checkpoint"), columns=(("runs", Number()), ("grad", Tensor(shape=(N,)))))


def _run(x: list, use_checkpoint: bool) -> dict:
    runs = [0]

    def block(t):
        runs[0] += 1
        return torch.sin(t) * t

    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    h = checkpoint(block, t, use_reentrant=False) if use_checkpoint else block(t)
    (h * t).sum().backward()
    return {"runs": runs[0], "grad": t.grad}


def reference(x: list) -> dict:
    return {"plain": _run(x, False), "checkpoint": _run(x, True)}


def _grad(v: float) -> float:
    # L = sin(v)·v·v, dL/dv = cos(v)·v² + 2v·sin(v)
    return math.cos(v) * v * v + 2 * v * math.sin(v)


def analytic(x: list) -> dict:
    g = [_grad(v) for v in x]
    return {"plain": {"runs": 1, "grad": g}, "checkpoint": {"runs": 2, "grad": g}}


def finite_diff(x: list) -> dict:
    g = [central(lambda v: math.sin(v) * v * v, v) for v in x]
    return {"plain": {"runs": 1, "grad": g}, "checkpoint": {"runs": 2, "grad": g}}


def _cut(x: list) -> dict:
    out = analytic(x)
    out["checkpoint"]["grad"] = [math.sin(v) * v for v in x]  # only the direct path h · t
    return out


EXERCISE = Exercise(
    title="Checkpointing: what it recomputes, what it returns",
    prompt=r"""

```python
runs = 0
def block(t):
    global runs
    runs += 1
    return torch.sin(t) * t

x = torch.tensor({{x}}, requires_grad=True)
h = block(x)                                          # row "plain"
# h = checkpoint(block, x, use_reentrant=False)       # row "checkpoint"
(h * x).sum().backward()
```

Fill in `ckpt = {"plain": {"runs": ..., "grad": ...}, "checkpoint": {"runs": ..., "grad": ...}}`:
how many times `block`'s body ran by the end of `backward()`, and `x.grad`.
""",
    setup="x_values = {{x}}",
    answer="ckpt",
    placeholder='ckpt = ...  # {"plain": {"runs": ..., "grad": [...]}, "checkpoint": {...}}',
    solution="""import math
g = [math.cos(v) * v * v + 2 * v * math.sin(v) for v in x_values]   # d/dx of sin(x)·x·x
ckpt = {"plain": {"runs": 1, "grad": g},
        "checkpoint": {"runs": 2, "grad": g}}   # forward once, again during backward""",
    by_hand=True,
    kind=KIND,
    params={"x": [0.5, -1.0]},
    hidden=({"x": [2.0, 1.25]},),
    draw=lambda rng: {"x": [rng.choice((-1, 1)) * rng.uniform(0.3, 2.5) for _ in range(N)]},
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("checkpoint_recomputes", table_with(analytic, checkpoint=lambda x: {"runs": 1}),
              "checkpoint does not cache the block's intermediates: that is the point. In the "
              "forward pass it runs the block without keeping what the block would save for "
              "backward (only its input), and when backward reaches the block it runs the "
              "block's forward a second time to rebuild them. Memory is traded for compute.",
              "Where do the block's saved tensors come from during backward, if they were "
              "never kept?"),
        Wrong("checkpoint_changes_grads", _cut,
              "This checkpoint gradient is only the direct path through h · x, as if the "
              "checkpointed block were detached. Checkpointing changes when the block's "
              "intermediates exist, not the maths: the gradients are the same as without it.",
              "Does checkpoint change what is differentiated, or only what is stored?"),
        Wrong("checkpoint_changes_grads", table_with(analytic, checkpoint=lambda x: {"grad": [0.0] * N}),
              "This checkpoint gradient is zero, as if checkpointing stopped gradients from "
              "flowing. It only changes when the block's intermediates exist: they are dropped "
              "after the forward pass and rebuilt during backward, and the gradients are the "
              "same as without it.",
              "Does checkpoint change what is differentiated, or only what is stored?"),
        Wrong("chain_rule_dropped",
              lambda x: (lambda g: {"plain": {"runs": 1, "grad": g}, "checkpoint": {"runs": 2, "grad": g}})(
                  [math.sin(v) + v * math.cos(v) for v in x]),
              "This is the derivative of the block's output h alone, not of the loss: the loss "
              "multiplies h by x once more, so x reaches it along two paths.",
              "Write the loss (h * x).sum() as a function of x and differentiate that."),
    ),
)
