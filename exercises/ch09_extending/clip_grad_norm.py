"""torch.nn.utils.clip_grad_norm_: one global 2-norm over all the gradients, every gradient
scaled by max_norm / (total + 1e-6) when total > max_norm; it returns the norm before clipping."""

import math
import random

import torch

from autograder.kinds import Number, Table, Tensor
from gradtutor.key.exercise import Exercise, Region, Wrong

KIND = Table(rows=("clip",), columns=(("returned", Number()), ("g1", Tensor(shape=(2,))),
                                      ("g2", Tensor(shape=(2,)))))
EPS = 1e-6  # torch adds it to the total norm before dividing (torch/nn/utils/clip_grad.py)


def reference(g1: list, g2: list, max_norm: float) -> dict:
    w1 = torch.zeros(2, dtype=torch.float64, requires_grad=True)
    w2 = torch.zeros(2, dtype=torch.float64, requires_grad=True)
    w1.grad = torch.tensor(g1, dtype=torch.float64)
    w2.grad = torch.tensor(g2, dtype=torch.float64)
    total = torch.nn.utils.clip_grad_norm_([w1, w2], max_norm)
    return {"clip": {"returned": total, "g1": w1.grad, "g2": w2.grad}}


def _total(g1: list, g2: list) -> float:
    return math.sqrt(sum(v * v for v in [*g1, *g2]))


def analytic(g1: list, g2: list, max_norm: float) -> dict:
    total = _total(g1, g2)
    scale = min(1.0, max_norm / (total + EPS))
    return {"clip": {"returned": total, "g1": [v * scale for v in g1], "g2": [v * scale for v in g2]}}


def _returns_clipped(g1: list, g2: list, max_norm: float) -> dict:
    out = analytic(g1, g2, max_norm)
    out["clip"]["returned"] = max_norm
    return out


def _per_parameter(g1: list, g2: list, max_norm: float) -> dict:
    def clip(g: list) -> list:
        n = math.sqrt(sum(v * v for v in g))
        return [v * min(1.0, max_norm / (n + EPS)) for v in g]
    return {"clip": {"returned": _total(g1, g2), "g1": clip(g1), "g2": clip(g2)}}


def draw(rng: random.Random) -> dict:
    max_norm = rng.uniform(0.5, 2)
    # half the draws clip: both gradients longer than max_norm, so a per-parameter clip differs
    # from the global one; the other half do not (total norm below max_norm: nothing changes)
    low, high = (1.2, 3) if rng.random() < 0.5 else (0.2, 0.65)

    def vector() -> list:
        angle, r = rng.uniform(0, 2 * math.pi), rng.uniform(low, high) * max_norm
        return [r * math.cos(angle), r * math.sin(angle)]
    return {"g1": vector(), "g2": vector(), "max_norm": max_norm}


def _clips(g1: list, g2: list, max_norm: float) -> bool:
    return _total(g1, g2) > max_norm


# both branches of min(1, max_norm / total): a clip that always rescales is right only above
REGIONS = (Region("total norm above max_norm", _clips),
           Region("total norm below max_norm", lambda **p: not _clips(**p),
                  blind=("clip_norm_global",)))  # nothing is clipped, per parameter or globally


EXERCISE = Exercise(
    title="What clip_grad_norm_ returns and does",
    prompt=r"""
Two parameters have the gradients `w1.grad = {{g1}}` and `w2.grad = {{g2}}`; then

```python
total = torch.nn.utils.clip_grad_norm_([w1, w2], max_norm={{max_norm}})
```

Fill in `clipped = {"clip": {"returned": total, "g1": w1.grad, "g2": w2.grad}}` with the
values after the call. (torch scales by $\text{max\_norm} / (\text{total} + 10^{-6})$ when
that is below 1; the $10^{-6}$ only matters in the sixth digit.)
""",
    setup="g1, g2, max_norm = {{g1}}, {{g2}}, {{max_norm}}",
    answer="clipped",
    placeholder='clipped = ...  # {"clip": {"returned": ..., "g1": [...], "g2": [...]}}',
    solution="""import math
total = math.sqrt(sum(v * v for v in g1 + g2))     # one norm over all gradients together
scale = min(1.0, max_norm / (total + 1e-6))
clipped = {"clip": {"returned": total,
                    "g1": [v * scale for v in g1], "g2": [v * scale for v in g2]}}""",
    by_hand=True,
    kind=KIND,
    params={"g1": [3.0, 0.0], "g2": [0.0, 4.0], "max_norm": 1.0},
    hidden=({"g1": [1.0, 2.0], "g2": [-2.0, 4.0], "max_norm": 2.0},
            {"g1": [0.5, -1.0], "g2": [1.5, 0.5], "max_norm": 2.5}),
    regions=REGIONS,
    draw=draw,
    reference=reference,
    analytic=analytic,
    wrong=(
        Wrong("clip_returns_total_norm", _returns_clipped,
              "The gradients are right, but clip_grad_norm_ returns the total norm measured "
              "before clipping, not max_norm. That is why training code logs its return value: "
              "it shows how large the gradients really were.",
              "Read the Returns section of the clip_grad_norm_ documentation."),
        Wrong("clip_norm_global", _per_parameter,
              "Each gradient was clipped to norm max_norm on its own. clip_grad_norm_ treats all "
              "the gradients as one long vector: one total norm, one scale factor for every "
              "parameter, so the direction of the whole update is kept.",
              "Compute a single norm over all four numbers."),
    ),
)
