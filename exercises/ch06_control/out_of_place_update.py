"""Content map M12: w = w - lr * w.grad outside no_grad makes w a non-leaf result of a
subtraction; its .grad stays None, so the next step fails."""


import torch

from autograder.kinds import Bool, Choice, Number, Table
from gradtutor.key.exercise import Exercise, Wrong, table_with

KIND = Table(rows=("w",), columns=(
    ("is_leaf", Bool()), ("requires_grad", Bool()),
    ("grad_fn", Choice(options=(None, "SubBackward0", "MulBackward0", "AccumulateGrad"))),
    ("grad", Number())))


def reference(w0: float, lr: float) -> dict:
    w = torch.tensor(w0, dtype=torch.float64, requires_grad=True)
    ((w - 3) ** 2).backward()
    w = w - lr * w.grad
    return {"w": {"is_leaf": w.is_leaf, "requires_grad": w.requires_grad,
                  "grad_fn": None if w.grad_fn is None else type(w.grad_fn).__name__,
                  "grad": None if not w.is_leaf else w.grad}}


def analytic(w0: float, lr: float) -> dict:
    # the new w is the output of a subtraction from a tracked leaf: recorded, not a leaf, no .grad
    return {"w": {"is_leaf": False, "requires_grad": True, "grad_fn": "SubBackward0", "grad": None}}


EXERCISE = Exercise(
    title="An update that turns w into something else",
    prompt=r"""
```python
w = torch.tensor({{w0}}, requires_grad=True)
L = (w - 3) ** 2
L.backward()
w = w - {{lr}} * w.grad        # no torch.no_grad() here
```

Describe the **new** `w`: is it a leaf, does it require grad, what is its `grad_fn` (a class name
or `None`), and what is its `.grad` (a number or `None`)? Fill in the table `new_w` with one row
`"w"`.
""",
    setup="""w = torch.tensor({{w0}}, requires_grad=True)
L = (w - 3) ** 2
L.backward()
w = w - {{lr}} * w.grad""",
    answer="new_w",
    placeholder='new_w = ...  # {"w": {"is_leaf": ..., "requires_grad": ..., "grad_fn": ..., "grad": ...}}',
    solution="""new_w = {"w": {"is_leaf": w.is_leaf, "requires_grad": w.requires_grad,
                "grad_fn": w.grad_fn, "grad": None}}  # a non-leaf keeps no .grad""",
    kind=KIND,
    params={"w0": 1.0, "lr": 0.1},
    hidden=({"w0": -2.0, "lr": 0.25},),
    draw=lambda rng: {"w0": rng.uniform(-5, 2.5), "lr": rng.uniform(0.01, 0.4)},
    reference=reference,
    analytic=analytic,
    wrong=(
        Wrong("out_of_place_update",
              lambda w0, lr: {"w": {"is_leaf": True, "requires_grad": True, "grad_fn": None,
                                    "grad": 2 * (w0 - 3)}},
              "The name w now points at a new tensor: the result of w - lr·grad, computed with "
              "grad mode on from a leaf that requires grad. Autograd recorded the subtraction, "
              "so the new w has grad_fn SubBackward0, is not a leaf, and its .grad is None. The "
              "old leaf (with its gradient) is only reachable through the graph.",
              "Is the new w typed in, or the result of an operation?"),
        Wrong("grad_modes",
              lambda w0, lr: {"w": {"is_leaf": True, "requires_grad": False, "grad_fn": None,
                                    "grad": None}},
              "That would be true inside torch.no_grad(), which is exactly what is missing here. "
              "With grad mode on, an operation on a tensor that requires grad is recorded.",
              "Was anything switching off recording when w - lr * w.grad ran?"),
        Wrong("grad_fn_name", table_with(analytic, w={"grad_fn": "MulBackward0"}),
              "grad_fn names the operation that produced the tensor itself, the last one in "
              "its expression; the product lr · w.grad is only an input to it (and w.grad does "
              "not require grad, so that product is not even recorded).",
              "Which operation is the last one to produce the new w?"),
        Wrong("nonleaf_grad", table_with(analytic, w=lambda w0, lr: {"grad": 2 * (w0 - 3)}),
              "The gradient computed before belongs to the old leaf. The new w is another "
              "tensor, a non-leaf made by an operation: autograd keeps no .grad on a non-leaf "
              "unless retain_grad() is called on it, and nothing was ever accumulated into it.",
              "Is the new w the same tensor whose .grad backward filled?"),
    ),
)
