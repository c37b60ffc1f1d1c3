"""Reference set 002, "no_grad vs detach": no_grad stops recording for a whole block, detach cuts
one tensor while everything around it still records."""


import torch

from autograder.kinds import Bool, Choice, Table
from gradtutor.key.exercise import Exercise, Wrong, table_with

ROWS = ("a", "b", "c")
GRAD_FNS = (None, "MulBackward0", "DetachBackward0", "AccumulateGrad")
KIND = Table(rows=ROWS, columns=(("requires_grad", Bool()), ("grad_fn", Choice(options=GRAD_FNS))))


def reference(p0: float, q0: float) -> dict:
    p = torch.tensor(p0, dtype=torch.float64, requires_grad=True)
    q = torch.tensor(q0, dtype=torch.float64, requires_grad=True)
    with torch.no_grad():
        a = p * q
    b = p.detach() * q
    c = a * q
    return {name: {"requires_grad": t.requires_grad,
                   "grad_fn": None if t.grad_fn is None else type(t.grad_fn).__name__}
            for name, t in zip(ROWS, (a, b, c), strict=True)}


def analytic(p0: float, q0: float) -> dict:
    # nothing inside no_grad is recorded; detach cuts p only, q still records; outside the
    # block a is a constant, and q (tracked) is enough to make a * q tracked
    return {"a": {"requires_grad": False, "grad_fn": None},
            "b": {"requires_grad": True, "grad_fn": "MulBackward0"},
            "c": {"requires_grad": True, "grad_fn": "MulBackward0"}}


EXERCISE = Exercise(
    title="no_grad or detach?",
    prompt=r"""
```python
p = torch.tensor({{p0}}, requires_grad=True)
q = torch.tensor({{q0}}, requires_grad=True)
with torch.no_grad():
    a = p * q              # inside the block
b = p.detach() * q         # one input cut, the rest records
c = a * q                  # after the block, using a
```

For `a`, `b` and `c`: does it require grad, and what is its `grad_fn` (a class name as a string,
or `None`)? Fill in the table `modes`.
""",
    setup="""p = torch.tensor({{p0}}, requires_grad=True)
q = torch.tensor({{q0}}, requires_grad=True)
with torch.no_grad():
    a = p * q
b = p.detach() * q
c = a * q""",
    answer="modes",
    placeholder='modes = ...  # {"a": {"requires_grad": ..., "grad_fn": ...}, "b": ..., "c": ...}',
    solution="""modes = {name: {"requires_grad": t.requires_grad, "grad_fn": t.grad_fn}
         for name, t in {"a": a, "b": b, "c": c}.items()}""",
    kind=KIND,
    params={"p0": 2.0, "q0": 3.0},
    hidden=({"p0": -1.0, "q0": 0.5},),
    draw=lambda rng: {"p0": rng.uniform(-4, 4), "q0": rng.uniform(-4, 4)},
    reference=reference,
    analytic=analytic,
    wrong=(
        Wrong("grad_modes", table_with(analytic, b={"requires_grad": False, "grad_fn": None}),
              "detach() is not a block-wide switch: it returns a new tensor with p's values and no "
              "history, and cuts only that one input. q still requires grad, so b = p.detach() * q "
              "is recorded (MulBackward0) and will send a gradient to q.",
              "Which inputs of b still require grad?"),
        Wrong("no_graph", table_with(analytic, a={"requires_grad": True, "grad_fn": "MulBackward0"}),
              "Inside torch.no_grad() nothing is recorded, even when the inputs require grad: a "
              "comes out with requires_grad=False and no grad_fn: a constant to autograd.",
              "What does no_grad switch off while its block runs?"),
        Wrong("requires_grad_propagation", table_with(analytic, c={"requires_grad": False, "grad_fn": None}),
              "a is untracked, but q is tracked, and one tracked input is enough: c = a * q is "
              "recorded outside the block. Results made under no_grad are ordinary tensors that "
              "can be used later.",
              "Does any input of c require grad?"),
    ),
)
