"""detect_anomaly names the backward node that produced the NaN of the where trap.

With torch.autograd.detect_anomaly(), where(x > 0, op(x), 0).sum().backward() at inputs that
include 0 raises "Function 'SqrtBackward0' returned nan values in its 0th output." (LogBackward0
for log): the culprit is the unguarded op, not where.
"""

import torch

from autograder.judge import quietly
from autograder.kinds import Choice
from gradtutor.key.exercise import Exercise, Wrong

OPTIONS = (None, "WhereBackward0", "SqrtBackward0", "LogBackward0", "SumBackward0",
           "AccumulateGrad")
NODE = {"sqrt": "SqrtBackward0", "log": "LogBackward0"}


def _culprit(op: str, x: list[float]) -> str | None:
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    try:
        with torch.autograd.detect_anomaly():
            torch.where(t > 0, getattr(torch, op)(t), 0.0).sum().backward()
    except RuntimeError as e:  # "Function 'SqrtBackward0' returned nan values ..."
        return str(e).split("'")[1]
    return None


def reference(op: str, x: list[float]) -> str | None:
    return quietly(_culprit, op, x)  # anomaly mode warns on stderr; the answer is the error


def analytic(op: str, x: list[float]) -> str:
    # the first node whose output holds a NaN is the op's backward: 0 (upstream, from where)
    # divided by its own value 0 at x = 0, i.e. 0/0; where's backward only routes 0s and 1s
    return NODE[op]


EXERCISE = Exercise(
    title="Who made the NaN?",
    prompt=r"""
Anomaly detection checks every backward node's output and stops at the first NaN:

```python
x = torch.tensor({{x}}, requires_grad=True)
with torch.autograd.detect_anomaly():
    torch.where(x > 0, torch.{{op|pretty}}(x), 0.0).sum().backward()
```

This raises `RuntimeError: Function '...' returned nan values in its 0th output.` Which
backward node does the message name? Give its class name as a string, or `None` if you think no
error is raised.
""",
    setup="op, x_values = {{op}}, {{x}}",
    answer="culprit",
    solution="""x = torch.tensor(x_values, requires_grad=True)
try:
    with torch.autograd.detect_anomaly():
        torch.where(x > 0, getattr(torch, op)(x), 0.0).sum().backward()
    culprit = None
except RuntimeError as e:
    culprit = str(e).split("'")[1]""",
    kind=Choice(options=OPTIONS),
    params={"op": "sqrt", "x": [0.0, 4.0, -1.0]},
    hidden=({"op": "log", "x": [0.0, 1.0, -1.0]}, {"op": "sqrt", "x": [2.0, 0.0, 5.0]}),
    draw=lambda rng: {"op": rng.choice(("sqrt", "log")),
                      "x": rng.sample([0.0, rng.uniform(0.5, 4), -rng.uniform(0.5, 4)], 3)},
    reference=reference,
    analytic=analytic,
    wrong=(
        Wrong("where_nan", lambda op, x: "WhereBackward0",
              "where's backward is innocent: it sends the upstream gradient to the selected "
              "branch and 0 to the other. The NaN is born one step later, when the "
              "unselected op's backward multiplies that 0 by its own infinite or undefined "
              "slope.",
              "Walk backward from the sum: which node is the first to do arithmetic that can "
              "turn 0 into NaN?"),
        Wrong("where_nan", lambda op, x: None,
              "The forward values are clean, so it is tempting to expect a clean backward. But "
              "the unselected branch's backward still runs, and at x = 0 it computes 0 · inf "
              "(or 0/0), so anomaly mode raises.",
              "Run the same code without detect_anomaly and print x.grad."),
        Wrong("anomaly_first_nan", lambda op, x: "AccumulateGrad",
              "AccumulateGrad only copies the finished gradient into x.grad; it computes "
              "nothing. Anomaly mode reports the node that first produced a NaN, which is "
              "earlier in the backward pass.",
              "Which node computes the op's local derivative?"),
        Wrong("anomaly_first_nan", lambda op, x: "SumBackward0",
              "The sum's backward runs first, but it only copies the upstream 1 to every entry: "
              "its output is clean. Anomaly mode stops at the first node whose output holds a "
              "NaN, further down the graph.",
              "Walk backward from the sum node by node: where can 0 times an infinite slope "
              "happen?"),
    ),
)
