"""Content map M20 and M21: torch.tensor([a, b]) and .item() copy numbers out of the graph;
torch.stack keeps it. A tensor rebuilt from .item() with requires_grad=True is a new leaf."""

import torch

from autograder.kinds import Bool, Choice, Table
from gradtutor.key.exercise import Exercise, Wrong, table_with

ROWS = ("s1", "s2", "s3")
GRAD_FNS = (None, "StackBackward0", "CopyBackwards", "MulBackward0", "CatBackward0")
KIND = Table(rows=ROWS, columns=(("requires_grad", Bool()), ("grad_fn", Choice(options=GRAD_FNS))))


def reference(a0: float, b0: float) -> dict:
    a = torch.tensor(a0, dtype=torch.float64, requires_grad=True)
    b = torch.tensor(b0, dtype=torch.float64, requires_grad=True)
    s1 = torch.tensor([a, b])
    s2 = torch.stack([a, b])
    s3 = torch.tensor((a * b).item(), requires_grad=True)
    return {name: {"requires_grad": t.requires_grad,
                   "grad_fn": None if t.grad_fn is None else type(t.grad_fn).__name__}
            for name, t in zip(ROWS, (s1, s2, s3), strict=True)}


def analytic(a0: float, b0: float) -> dict:
    # torch.tensor(...) reads plain numbers out of its argument and builds a fresh leaf;
    # stack is an operation and is recorded; .item() returns a Python float with no history
    return {"s1": {"requires_grad": False, "grad_fn": None},
            "s2": {"requires_grad": True, "grad_fn": "StackBackward0"},
            "s3": {"requires_grad": True, "grad_fn": None}}


EXERCISE = Exercise(
    title="Quiet graph cutters",
    prompt=r"""
```python
a = torch.tensor({{a0}}, requires_grad=True)
b = torch.tensor({{b0}}, requires_grad=True)
s1 = torch.tensor([a, b])
s2 = torch.stack([a, b])
s3 = torch.tensor((a * b).item(), requires_grad=True)
```

For `s1`, `s2` and `s3`: does it require grad, and what is its `grad_fn` (a class name as a
string, or `None`)? Fill in the table `cutters`. Then ask yourself: after `s3.backward()`, what
would `a.grad` be?
""",
    setup="a0, b0 = {{a0}}, {{b0}}",
    answer="cutters",
    placeholder='cutters = ...  # {"s1": {"requires_grad": ..., "grad_fn": ...}, "s2": ..., "s3": ...}',
    solution="""a = torch.tensor(a0, requires_grad=True)
b = torch.tensor(b0, requires_grad=True)
s1 = torch.tensor([a, b])
s2 = torch.stack([a, b])
s3 = torch.tensor((a * b).item(), requires_grad=True)
cutters = {name: {"requires_grad": t.requires_grad, "grad_fn": t.grad_fn}
           for name, t in {"s1": s1, "s2": s2, "s3": s3}.items()}""",
    kind=KIND,
    params={"a0": 2.0, "b0": 3.0},
    hidden=({"a0": -1.0, "b0": 0.5},),
    draw=lambda rng: {"a0": rng.uniform(-4, 4), "b0": rng.uniform(-4, 4)},
    reference=reference,
    analytic=analytic,
    wrong=(
        Wrong("tensor_constructor_cuts", table_with(analytic, s1={"requires_grad": True, "grad_fn": "StackBackward0"}),
              "torch.tensor(...) is a constructor, not an operation: it reads the plain numbers "
              "out of a and b and builds a brand-new leaf with requires_grad=False (PyTorch even "
              "warns that it is converting tensors that require grad to scalars). The graph is "
              "cut. torch.stack (or torch.cat) is the operation that keeps it.",
              "Which of the two builds its result with a recorded operation?"),
        Wrong("item_leaves_graph", table_with(analytic, s3={"requires_grad": True, "grad_fn": "MulBackward0"}),
              ".item() returns a Python float, which has no history. Wrapping it in "
              "torch.tensor(..., requires_grad=True) makes a new leaf: it requires grad but has "
              "no grad_fn, and s3.backward() would fill s3.grad, leaving a.grad and b.grad None.",
              "What type does .item() return, and what does it remember about a * b?"),
        Wrong("item_leaves_graph", table_with(analytic, s3={"requires_grad": False, "grad_fn": None}),
              "s3 was created with requires_grad=True, so it does require grad; it is simply a "
              "new leaf, cut off from a and b because .item() handed over a plain Python float.",
              "Look at the arguments of the torch.tensor call that makes s3."),
        Wrong("requires_grad_propagation", table_with(analytic, s2={"requires_grad": False, "grad_fn": None}),
              "torch.stack is an ordinary recorded operation: its inputs require grad, so its "
              "result does too, with grad_fn StackBackward0.",
              "Is torch.stack an operation on tensors or a constructor from numbers?"),
        Wrong("grad_fn_name", table_with(analytic, s2={"grad_fn": "CatBackward0"}),
              "The graph is kept, but the node is misnamed: each operation records a node of "
              "its own, named after the function called (not after what it does inside), and "
              "that name is what grad_fn shows.",
              "Print type(s2.grad_fn).__name__: which function made s2?"),
    ),
)
