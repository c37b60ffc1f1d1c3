"""d2l's control-flow example with a vector input: loops and branches are in the graph.

f doubles its input until the norm reaches 1000 and scales by 100 if the sum is not positive,
so d = f(a) = k·a for one number k that depends on a; d.sum().backward() gives k in every
entry of a.grad, which is d / a.
"""

import math

import torch

from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong
from gradtutor.key.numeric import gradient

# d2l's function as the student reads it in the prompt and runs it in the solution
F_SOURCE = """def f(a):
    b = a * 2
    while b.norm() < 1000:
        b = b * 2
    if b.sum() > 0:
        c = b
    else:
        c = 100 * b
    return c
"""


def f_torch(a: torch.Tensor) -> torch.Tensor:
    b = a * 2
    while b.norm() < 1000:
        b = b * 2
    return b if b.sum() > 0 else 100 * b


def f_sum(*a: float) -> float:
    # the same function on plain floats, for the finite differences
    b = [2 * x for x in a]
    while math.sqrt(sum(x * x for x in b)) < 1000:
        b = [2 * x for x in b]
    return sum(b) if sum(b) > 0 else 100 * sum(b)


def reference(a0: list[float]) -> torch.Tensor:
    a = torch.tensor(a0, dtype=torch.float64, requires_grad=True)
    f_torch(a).sum().backward()
    return a.grad


def analytic(a0: list[float]) -> list[float]:
    # the loop runs m times, m the least with 2|a| 2^m >= 1000; the branch multiplies by 100
    # when sum(a) <= 0; so d = k a with k = 2^(m+1) (x 100), and every entry of a.grad is k
    norm = math.sqrt(sum(x * x for x in a0))
    m = max(0, math.ceil(math.log2(1000 / (2 * norm))))
    k = 2.0 ** (m + 1) * (1 if sum(a0) > 0 else 100)
    return [k] * len(a0)


EXERCISE = Exercise(
    title="A loop and a branch in the graph",
    prompt=r"""
```python
""" + F_SOURCE + r"""
a = torch.tensor({{a0}}, requires_grad=True)
d = f(a)
d.sum().backward()
```

What is `a.grad`? Compute it with torch, or by counting how often the loop runs.
""",
    setup="a0 = {{a0}}",
    answer="grad_loop",
    placeholder="grad_loop = ...  # a.grad after d.sum().backward()",
    solution=F_SOURCE + """
a = torch.tensor(a0, requires_grad=True)
d = f(a)
d.sum().backward()
grad_loop = a.grad""",
    kind=Tensor(shape=(3,)),
    params={"a0": [0.5, -1.0, 2.0]},
    hidden=({"a0": [-1.0, 0.25, -0.5]},),
    draw=lambda rng: {"a0": [rng.uniform(-3, 3) for _ in range(3)]},
    reference=reference,
    analytic=analytic,
    finite_diff=lambda a0: gradient(f_sum, a0),
    wrong=(
        Wrong("control_flow_recorded", lambda a0: [2.0] * len(a0),
              "2 is the derivative of the first line, b = a * 2, alone. Autograd records every "
              "operation that actually ran: each pass of the while loop multiplied b by 2 "
              "again, and the branch taken (b, or 100 * b) is in the graph too.",
              "Count how often the loop body ran for these numbers: d / a tells you."),
        Wrong("value_not_derivative", lambda a0: reference(a0) * torch.tensor(a0, dtype=torch.float64),
              "That is d itself, k·a. The gradient of d.sum() with respect to a_j is k, the same "
              "number in every entry, whatever a_j is.",
              "d = k·a for one number k: what is the derivative of k·a_j with respect to a_j?"),
    ),
)
