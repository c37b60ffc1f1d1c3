"""Reference set 002 (a): which tensors are leaves, and which hold a .grad after backward."""

import torch

from autograder.kinds import Bool, Number, Table
from gradtutor.key.exercise import Exercise, Wrong, table_with

ROWS = ("x", "y", "z")
KIND = Table(rows=ROWS, columns=(("is_leaf", Bool()), ("grad", Number())))


def reference(x0: float, y0: float) -> dict:
    x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    y = torch.tensor(y0, dtype=torch.float64, requires_grad=True)
    z = x + y
    z.backward()
    return {name: {"is_leaf": t.is_leaf, "grad": None if t.is_leaf is False else t.grad}
            for name, t in zip(ROWS, (x, y, z), strict=True)}


def analytic(x0: float, y0: float) -> dict:
    # typed-in tensors are leaves; a result of an operation is not, and keeps no .grad;
    # dz/dx = dz/dy = 1 for z = x + y
    return {"x": {"is_leaf": True, "grad": 1.0}, "y": {"is_leaf": True, "grad": 1.0},
            "z": {"is_leaf": False, "grad": None}}


def finite_diff(x0: float, y0: float) -> dict:
    h = 1e-6
    t = analytic(x0, y0)
    t["x"]["grad"] = ((x0 + h + y0) - (x0 - h + y0)) / (2 * h)
    t["y"]["grad"] = ((x0 + y0 + h) - (x0 + y0 - h)) / (2 * h)
    return t


EXERCISE = Exercise(
    title="Leaves hold the gradients",
    prompt=r"""
Two tensors are typed in and added:

```python
x = torch.tensor({{x0}}, requires_grad=True)
y = torch.tensor({{y0}}, requires_grad=True)
z = x + y
z.backward()
```

Fill in the table `leaves`: for each of `x`, `y` and `z`, is it a **leaf** (`is_leaf`), and
what is its `.grad` after `z.backward()` (a number, or `None` if autograd leaves it empty)?
""",
    setup="""x = torch.tensor({{x0}}, requires_grad=True)
y = torch.tensor({{y0}}, requires_grad=True)
z = x + y
z.backward()""",
    answer="leaves",
    placeholder='leaves = ...  # e.g. {"x": {"is_leaf": ..., "grad": ...}, "y": {...}, "z": {...}}',
    solution="""leaves = {
    "x": {"is_leaf": x.is_leaf, "grad": x.grad},
    "y": {"is_leaf": y.is_leaf, "grad": y.grad},
    "z": {"is_leaf": z.is_leaf, "grad": None},  # a non-leaf keeps no .grad
}""",
    kind=KIND,
    params={"x0": 2.0, "y0": 3.0},
    hidden=({"x0": -1.25, "y0": 0.5},),
    draw=lambda rng: {"x0": rng.uniform(-5, 5), "y0": rng.uniform(-5, 5)},
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("leaf_definition", table_with(analytic, z={"is_leaf": True, "grad": 1.0}),
              "z was made by an operation (the + box has arrows coming in), so it is not a leaf. "
              "Autograd only stores .grad on leaves; it passes z's gradient straight through to x "
              "and y.",
              "A leaf is a box with no arrow pointing into it. Which boxes were typed in by hand?"),
        Wrong("nonleaf_grad", table_with(analytic, z={"grad": 1.0}),
              "z is correctly a non-leaf, but a non-leaf's .grad stays None: backward() uses dz/dz "
              "= 1 on its way to the leaves and then throws it away (retain_grad() would keep it).",
              "Ask what autograd stores, not what it computes along the way."),
        Wrong("leaf_grad_filled", table_with(analytic, x={"grad": None}, y={"grad": None}),
              "x and y are leaves that require grad, so backward() fills their .grad with dz/dx and "
              "dz/dy.",
              "After backward(), every leaf that requires grad and lies on a path to z has a .grad."),
    ),
)
