"""Reference set 002 (i)-(iv): which tensors does autograd track?"""

import torch

from autograder.kinds import Bool, Choice, Table
from gradtutor.key.exercise import Exercise, Wrong, table_with

ROWS = ("a", "b", "c", "d")
KIND = Table(rows=ROWS, columns=(("requires_grad", Bool()),
                                 ("grad_fn", Choice(options=(None, "MulBackward0", "DetachBackward0",
                                                             "AccumulateGrad")))))


def _tensors(a0: float, b0: float) -> tuple:
    a = torch.tensor(a0, dtype=torch.float64)
    b = torch.tensor(b0, dtype=torch.float64, requires_grad=True)
    c = b.detach()
    d = a * b
    return a, b, c, d


def reference(a0: float, b0: float) -> dict:
    return {name: {"requires_grad": t.requires_grad,
                   "grad_fn": None if t.grad_fn is None else type(t.grad_fn).__name__}
            for name, t in zip(ROWS, _tensors(a0, b0), strict=True)}


def analytic(a0: float, b0: float) -> dict:
    # default is untracked; asked-for is tracked; detach cuts; any tracked input tracks the output
    return {"a": {"requires_grad": False, "grad_fn": None},
            "b": {"requires_grad": True, "grad_fn": None},
            "c": {"requires_grad": False, "grad_fn": None},
            "d": {"requires_grad": True, "grad_fn": "MulBackward0"}}


EXERCISE = Exercise(
    title="Tracked or not?",
    prompt=r"""
```python
a = torch.tensor({{a0}})
b = torch.tensor({{b0}}, requires_grad=True)
c = b.detach()
d = a * b
```

For each of (i) `a`, (ii) `b`, (iii) `c` and (iv) `d`: does autograd track it
(`requires_grad`), and what is its `grad_fn` (a class name as a string, or `None`)? Fill in the
table `tracked`.
""",
    setup="""a = torch.tensor({{a0}})
b = torch.tensor({{b0}}, requires_grad=True)
c = b.detach()
d = a * b""",
    answer="tracked",
    placeholder='tracked = ...  # {"a": {"requires_grad": ..., "grad_fn": ...}, "b": ..., "c": ..., "d": ...}',
    solution="""tracked = {name: {"requires_grad": t.requires_grad, "grad_fn": t.grad_fn}
           for name, t in {"a": a, "b": b, "c": c, "d": d}.items()}""",
    kind=KIND,
    params={"a0": 2.0, "b0": 3.0},
    hidden=({"a0": -1.0, "b0": 0.25},),
    draw=lambda rng: {"a0": rng.uniform(-5, 5), "b0": rng.uniform(-5, 5)},
    reference=reference,
    analytic=analytic,
    wrong=(
        Wrong("detach_cuts_path", table_with(analytic, c={"requires_grad": True, "grad_fn": "DetachBackward0"}),
              ".detach() returns a tensor that shares b's numbers but has no history: "
              "requires_grad=False and no grad_fn. It is a photocopy of the value with no memory "
              "of where it came from.",
              "What would be the point of detach if the result were still tracked?"),
        Wrong("requires_grad_propagation", table_with(analytic, d={"requires_grad": False, "grad_fn": None}),
              "If any input of an operation requires grad, so does its output. a is untracked but "
              "b is tracked, so d = a * b is tracked and remembers MulBackward0.",
              "Follow the arrows: does one tracked input reach d?"),
        Wrong("grad_fn_of_leaf", table_with(analytic, b={"grad_fn": "AccumulateGrad"}),
              "b is a leaf you created, so it has no grad_fn; AccumulateGrad is the graph node that "
              "will write into b.grad, not b's own grad_fn.",
              "Which of these tensors were produced by an operation?"),
        Wrong("requires_grad_propagation", table_with(analytic, a={"requires_grad": True}),
              "Tensors do not require grad by default. a was created without requires_grad=True, "
              "and nothing later changes a itself; d = a * b makes a new tensor.",
              "Look only at how a was created."),
    ),
)
