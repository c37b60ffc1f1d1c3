"""Content-map M09: an operation after requires_grad=True makes the "parameter" a non-leaf.

w = torch.tensor(v, requires_grad=True) * s is the product of an anonymous leaf: w.is_leaf is
False and w.grad stays None. (torch.tensor(v) * s).requires_grad_() is a leaf and gets 2v.
"""


import torch

from autograder.kinds import Bool, Table
from autograder.kinds import Tensor as TensorKind
from gradtutor.key.exercise import Exercise, Wrong, table_with
from gradtutor.key.numeric import tensor_gradient

ROWS = ("w", "v")
KIND = Table(rows=ROWS, columns=(("is_leaf", Bool()), ("grad", TensorKind(shape=(3,)))))


def reference(vals: list[float], scale: float) -> dict:
    w = torch.tensor(vals, dtype=torch.float64, requires_grad=True) * scale
    v = (torch.tensor(vals, dtype=torch.float64) * scale).requires_grad_()
    ((w**2).sum() + (v**2).sum()).backward()
    return {"w": {"is_leaf": w.is_leaf, "grad": w.grad}, "v": {"is_leaf": v.is_leaf, "grad": v.grad}}


def analytic(vals: list[float], scale: float) -> dict:
    # w is the output of "* scale", a non-leaf: no .grad. v was scaled first, then asked to
    # require grad: a leaf, with d/dv Σ v² = 2v
    return {"w": {"is_leaf": False, "grad": None},
            "v": {"is_leaf": True, "grad": [2 * scale * x for x in vals]}}


def finite_diff(vals: list[float], scale: float) -> dict:
    t = analytic(vals, scale)
    t["v"]["grad"] = tensor_gradient(lambda u: (u**2).sum(), torch.tensor(vals) * scale)
    return t


def _twice(vals: list[float], scale: float) -> list[float]:
    return [2 * scale * x for x in vals]


EXERCISE = Exercise(
    title="The parameter that is not a leaf",
    prompt=r"""
Two ways to make a small "parameter" vector:

```python
w = torch.tensor({{vals}}, requires_grad=True) * {{scale}}
v = (torch.tensor({{vals}}) * {{scale}}).requires_grad_()
loss = (w**2).sum() + (v**2).sum()
loss.backward()
```

The setup cell runs this. Fill in `params_table`: for `w` and `v`, is it a leaf, and what is its
`.grad` (numbers, or `None`)?
""",
    setup="""w = torch.tensor({{vals}}, requires_grad=True) * {{scale}}
v = (torch.tensor({{vals}}) * {{scale}}).requires_grad_()
loss = (w**2).sum() + (v**2).sum()
loss.backward()""",
    answer="params_table",
    placeholder='params_table = ...  # {"w": {"is_leaf": ..., "grad": ...}, "v": {...}}',
    solution="""params_table = {"w": {"is_leaf": w.is_leaf, "grad": w.grad},
                "v": {"is_leaf": v.is_leaf, "grad": v.grad}}""",
    kind=KIND,
    params={"vals": [1.0, -2.0, 0.5], "scale": 0.01},
    hidden=({"vals": [3.1125, 0.2594, -1.0375], "scale": 0.1},),
    draw=lambda rng: {"vals": [rng.uniform(-3, 3) for _ in range(3)], "scale": rng.uniform(0.01, 2)},
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("accidental_nonleaf", table_with(analytic, w=lambda vals, scale: {"is_leaf": True, "grad": _twice(vals, scale)}),
              "w is not the tensor you created: it is the result of multiplying that tensor by "
              "the scale, so it is a non-leaf and keeps no .grad. The real leaf is the anonymous "
              "tensor before the multiplication, which you have no name for. An optimizer given "
              "w would refuse it (ValueError: can't optimize a non-leaf Tensor).",
              "Which operation ran last on the line that defines w?"),
        Wrong("nonleaf_grad", table_with(analytic, w=lambda vals, scale: {"grad": _twice(vals, scale)}),
              "w is rightly a non-leaf, and so its .grad stays None: autograd passes its gradient "
              "through to the anonymous leaf behind it and keeps nothing on w.",
              "Which tensors does backward() write .grad into?"),
        Wrong("leaf_grad_filled", table_with(analytic, v=lambda vals, scale: {"grad": None}),
              "v is a leaf: it was computed without tracking (torch.tensor(...) * scale does not "
              "require grad), and requires_grad_() then made it a tracked leaf before the loss "
              "was built. backward() fills its .grad with 2v.",
              "Was v asked to require grad before or after the loss was computed from it?"),
        Wrong("leaf_definition", table_with(analytic, v={"is_leaf": False, "grad": None}),
              "v was counted a non-leaf because an operation made it. An operation makes a "
              "non-leaf only when autograd records it, and it records one only if an input "
              "requires grad at that moment: requires_grad_() came after the multiplication.",
              "When v's multiplication ran, did any of its inputs require grad?"),
    ),
)
