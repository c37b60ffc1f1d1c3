"""Seven spellings of "ReLU-like" and their slopes exactly at the kink (torch 2.13).

relu 0, abs 0, clamp(min=0) 1, maximum(u, 0) 0.5, where(u > 0) 0, where(u >= 0) 1,
leaky_relu(slope) slope. Every variant evaluates at u = x - a = 0 exactly, on the kink.
"""

import torch
import torch.nn.functional as F

from autograder.kinds import Number, Table
from gradtutor.key.exercise import Exercise, Wrong, table_with

SPELLINGS = {
    "relu": lambda u, slope: torch.relu(u),
    "abs": lambda u, slope: u.abs(),
    "clamp": lambda u, slope: u.clamp(min=0),
    "maximum": lambda u, slope: torch.maximum(u, torch.zeros_like(u)),
    "where_gt": lambda u, slope: torch.where(u > 0, u, 0.0),
    "where_ge": lambda u, slope: torch.where(u >= 0, u, 0.0),
    "leaky_relu": lambda u, slope: F.leaky_relu(u, slope),
}
ROWS = tuple(SPELLINGS)
KIND = Table(rows=ROWS, columns=(("grad", Number()),))


def reference(a: float, slope: float) -> dict:
    table = {}
    for name, fn in SPELLINGS.items():
        x = torch.tensor(a, dtype=torch.float64, requires_grad=True)
        fn(x - a, slope).backward()  # x - a is exactly 0: on the kink
        table[name] = {"grad": x.grad}
    return table


def _table(**grads: float) -> dict:
    return {name: {"grad": g} for name, g in grads.items()}


def analytic(a: float, slope: float) -> dict:
    # each backward formula, read at u = 0: relu/where(u>0) pass gradient only where u > 0;
    # abs uses sign(0) = 0; clamp passes it where min <= u; maximum splits a tie evenly;
    # where(u>=0) selects the u branch at 0; leaky_relu uses its negative slope for u <= 0
    return _table(relu=0.0, abs=0.0, clamp=1.0, maximum=0.5, where_gt=0.0, where_ge=1.0,
                  leaky_relu=slope)


# No finite_diff witness: at a kink a central difference measures the average of the two
# one-sided slopes (0.5 for relu, 0 for abs), not the convention each backward formula uses.

EXERCISE = Exercise(
    title="Seven spellings, one kink",
    prompt=r"""
The setup cell defines seven functions `spellings[name](u)`. Away from $u = 0$ the first six
agree with ReLU or $|u|$, and `leaky_relu` has slope `slope` on the left. Put the input exactly
on the kink:

```python
x = torch.tensor({{a}}, requires_grad=True)
spellings[name](x - {{a}}).backward()     # x - a is exactly 0
```

For each name, what is `x.grad`? Fill in the table `kink_grads`, e.g.
`{"relu": {"grad": ...}, "abs": {"grad": ...}, ...}` with all seven rows. Predict first, then
run it: the differences are the lesson.
""",
    setup="""import torch.nn.functional as F

a, slope = {{a}}, {{slope}}
spellings = {
    "relu": lambda u: torch.relu(u),
    "abs": lambda u: u.abs(),
    "clamp": lambda u: u.clamp(min=0),
    "maximum": lambda u: torch.maximum(u, torch.zeros_like(u)),
    "where_gt": lambda u: torch.where(u > 0, u, 0.0),
    "where_ge": lambda u: torch.where(u >= 0, u, 0.0),
    "leaky_relu": lambda u: F.leaky_relu(u, slope),
}""",
    answer="kink_grads",
    placeholder='kink_grads = ...  # {"relu": {"grad": ...}, "abs": {"grad": ...}, ...}',
    solution="""kink_grads = {}
for name, fn in spellings.items():
    x = torch.tensor(a, requires_grad=True)
    fn(x - a).backward()
    kink_grads[name] = {"grad": x.grad}""",
    kind=KIND,
    params={"a": 0.0, "slope": 0.01},
    hidden=({"a": 1.5, "slope": 0.2}, {"a": -0.75, "slope": 0.05375}),
    draw=lambda rng: {"a": rng.uniform(-3, 3), "slope": rng.uniform(0.01, 0.3)},
    reference=reference,
    analytic=analytic,
    wrong=(
        Wrong("kink_convention",
              lambda a, slope: _table(relu=0.0, abs=0.0, clamp=0.0, maximum=0.0, where_gt=0.0,
                                      where_ge=0.0, leaky_relu=slope),
              "clamp(min=0), maximum(u, 0) and where(u >= 0, u, 0) compute the same numbers as "
              "relu, but each has its own backward formula, and the formulas disagree exactly "
              "at the kink: clamp passes the gradient where u >= min (slope 1), maximum splits "
              "a tie evenly (0.5), and where(u >= 0) selects the u branch at 0 (slope 1).",
              "Same forward values do not mean the same backward. Run each spelling on an "
              "input of exactly 0 and compare."),
        Wrong("kink_convention",
              lambda a, slope: _table(relu=1.0, abs=1.0, clamp=1.0, maximum=1.0, where_gt=1.0,
                                      where_ge=1.0, leaky_relu=1.0),
              "This takes the right-hand slope at every kink (the rule 1(u >= 0)). Only clamp "
              "and where(u >= 0) use it; relu and where(u > 0) pass the gradient only where "
              "u > 0, abs uses sign(0) = 0, maximum splits a tie, and leaky_relu uses its "
              "negative slope at 0.",
              "For each spelling, is 0 treated as part of the left branch, the right branch, "
              "or a tie?"),
        Wrong("kink_convention",
              lambda a, slope: _table(relu=0.5, abs=0.0, clamp=0.5, maximum=0.5, where_gt=0.5,
                                      where_ge=0.5, leaky_relu=(1 + slope) / 2),
              "This averages the left and right slopes at every kink, as a central difference "
              "does. Only torch.maximum splits evenly (a tie between u and 0); the other "
              "backward formulas pick one branch.",
              "Averaging is one convention among several. Which spelling actually compares "
              "two equal inputs?"),
        Wrong("left_derivative_rule",
              lambda a, slope: _table(relu=0.0, abs=-1.0, clamp=0.0, maximum=0.0, where_gt=0.0,
                                      where_ge=0.0, leaky_relu=slope),
              "This takes the left derivative at every kink, the reading of ReLU'(0) = 0 in the "
              "course's reference questions. PyTorch has no such rule. Its autograd notes "
              "('Gradients for non-differentiable functions') say: for a function that is "
              "convex near the point, use the sub-gradient of minimum norm. For relu at 0 the "
              "sub-gradients are [0, 1], so 0; for abs they are [-1, 1], so 0, not the left "
              "slope -1. And each backward formula is its own: clamp(min=0) and where(u >= 0) "
              "pass the gradient at 0 (1), maximum splits the tie (0.5).",
              "Run abs and clamp(min=0) at 0: does either return its left-hand slope?"),
        Wrong("kink_convention",
              lambda a, slope: _table(relu=0.0, abs=0.0, clamp=0.0, maximum=0.0, where_gt=0.0,
                                      where_ge=0.0, leaky_relu=0.0),
              "This gives every spelling relu's convention at the kink, leaky_relu included. "
              "Each spelling has its own backward formula, and they disagree exactly at the "
              "kink; leaky_relu's left branch is not flat.",
              "Same forward values do not mean the same backward. Run each spelling on an "
              "input of exactly 0 and compare."),
        Wrong("max_ties", table_with(analytic, maximum={"grad": 0.0}),
              "Every row is right but maximum's. At a tie, torch.maximum(u, 0) does not route "
              "the gradient to one input the way relu's rule does: its backward treats two "
              "equal inputs alike.",
              "Run torch.maximum on two equal inputs that both require grad: what does each get?"),
        Wrong("kink_convention", table_with(analytic, abs={"grad": 1.0}),
              "Every row is right but abs's, given its right-hand slope. abs's backward takes "
              "neither side's slope: it multiplies the gradient by sign(u), read at exactly 0.",
              "What does torch.sign return for an input of exactly 0?"),
    ),
)
