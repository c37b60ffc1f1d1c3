"""d2l 2.5.4, the control-flow example as d2l writes it, with a scalar a: the graph is the record
of the operations that ran. f doubles b until |b| reaches 1000 and multiplies by 100 if the
result is not positive, so d = f(a) = k·a with k = 2^(m+1) (times 100 for a <= 0), m the number
of loop passes, and a.grad = k = d / a.

(Chapter 4's control_flow_sum runs the same function on a vector.)
"""

import math

import torch

from autograder.kinds import Number
from exercises.ch04_vjp.control_flow_sum import F_SOURCE, f_torch
from gradtutor.key.exercise import Exercise, Wrong
from gradtutor.key.numeric import central_diff


def reference(a0: float) -> torch.Tensor:
    a = torch.tensor(a0, dtype=torch.float64, requires_grad=True)
    f_torch(a).backward()
    return a.grad


def _k(a0: float) -> float:
    # the loop runs m times, m the least with 2|a| 2^m >= 1000; the branch multiplies by 100
    m = max(0, math.ceil(math.log2(1000 / (2 * abs(a0)))))
    return 2.0 ** (m + 1) * (1 if a0 > 0 else 100)


def f_plain(a: float) -> float:
    b = 2 * a
    while abs(b) < 1000:
        b *= 2
    return b if b > 0 else 100 * b


def _draw(rng) -> dict:
    a0 = rng.choice((-1, 1)) * rng.uniform(0.05, 3)
    # keep clear of a loop boundary (2|a| 2^m = 1000), where the loop count jumps
    while abs(math.log2(1000 / (2 * abs(a0))) % 1) < 0.02 or abs(math.log2(1000 / (2 * abs(a0))) % 1) > 0.98:
        a0 = rng.choice((-1, 1)) * rng.uniform(0.05, 3)
    return {"a0": a0}


EXERCISE = Exercise(
    title="d2l: a loop and a branch are in the graph",
    prompt=r"""
*Dive into Deep Learning*'s example (section 2.5.4): a Python `while` loop and an `if` decide
what is computed, and autograd still differentiates it.

```python
""" + F_SOURCE + r"""
a = torch.tensor({{a0}}, requires_grad=True)
d = f(a)
d.backward()
```

What is `a.grad`? The graph holds exactly the operations that ran: count them, or run it.
""",
    setup="a0 = {{a0}}",
    answer="grad_branch",
    placeholder="grad_branch = ...  # a.grad after d.backward()",
    solution=F_SOURCE + """
a = torch.tensor(a0, requires_grad=True)
d = f(a)
d.backward()
grad_branch = a.grad""",
    kind=Number(),
    params={"a0": 0.3},
    hidden=({"a0": -1.7}, {"a0": 2.2}),
    draw=_draw,
    reference=reference,
    analytic=_k,
    finite_diff=lambda a0: central_diff(f_plain, a0),
    wrong=(
        Wrong("control_flow_recorded", lambda a0: 2.0,
              "2 is the derivative of the first line, b = a * 2, alone. Autograd records every "
              "operation that actually ran: each pass of the while loop multiplied b by 2 "
              "again, and the branch taken (b, or 100 * b) is in the graph too.",
              "Count how often the loop body ran for this a: d / a tells you."),
        Wrong("value_not_derivative", lambda a0: _k(a0) * a0,
              "That is d itself, k·a. Its derivative with respect to a is the factor k.",
              "d = k·a for one number k: what is dd/da?"),
    ),
)
