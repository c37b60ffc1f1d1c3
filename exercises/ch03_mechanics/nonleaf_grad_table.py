"""Content-map M08: after backward, a non-leaf's .grad is None (with a warning); the leaf's is filled.

x = [1, 2], y = 3x, z = sum(y²): x.grad = 2·3²·x = [18, 36], y.grad = None.
"""


import torch

from autograder.kinds import Bool, Table
from autograder.kinds import Tensor as TensorKind
from gradtutor.key.exercise import Exercise, Wrong, table_with
from gradtutor.key.numeric import tensor_gradient

ROWS = ("x", "y")
KIND = Table(rows=ROWS, columns=(("is_leaf", Bool()), ("grad", TensorKind(shape=(2,)))))


def reference(x: list[float], k: float) -> dict:
    tx = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    ty = tx * k
    (ty**2).sum().backward()
    # reading ty.grad is the point of the exercise; it warns, and is None
    return {"x": {"is_leaf": tx.is_leaf, "grad": tx.grad},
            "y": {"is_leaf": ty.is_leaf, "grad": ty.grad}}


def analytic(x: list[float], k: float) -> dict:
    # z = Σ (k xᵢ)², dz/dxᵢ = 2k² xᵢ; y is the result of an operation, so it keeps no .grad
    return {"x": {"is_leaf": True, "grad": [2 * k**2 * v for v in x]},
            "y": {"is_leaf": False, "grad": None}}


def finite_diff(x: list[float], k: float) -> dict:
    t = analytic(x, k)
    t["x"]["grad"] = tensor_gradient(lambda v: ((v * k) ** 2).sum(), torch.tensor(x))
    return t


EXERCISE = Exercise(
    title="Who keeps a .grad?",
    prompt=r"""
```python
x = torch.tensor({{x}}, requires_grad=True)
y = x * {{k}}
z = (y**2).sum()
z.backward()
```

The setup cell runs exactly this. Fill in the table `grads`: for `x` and `y`, is it a leaf,
and what is its `.grad` now (numbers, or `None`)?
""",
    setup="""x = torch.tensor({{x}}, requires_grad=True)
y = x * {{k}}
z = (y**2).sum()
z.backward()""",
    answer="grads",
    placeholder='grads = ...  # {"x": {"is_leaf": ..., "grad": ...}, "y": {"is_leaf": ..., "grad": ...}}',
    solution="""grads = {"x": {"is_leaf": x.is_leaf, "grad": x.grad},
         "y": {"is_leaf": y.is_leaf, "grad": y.grad}}  # y.grad is None, and PyTorch warns""",
    kind=KIND,
    params={"x": [1.0, 2.0], "k": 3.0},
    hidden=({"x": [-0.5188, 1.5563], "k": -2.0},),
    draw=lambda rng: {"x": [rng.uniform(-3, 3), rng.uniform(-3, 3)],
                      "k": rng.choice([-1, 1]) * rng.uniform(1.5, 4)},
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("nonleaf_grad", table_with(analytic, y=lambda x, k: {"grad": [2 * k * v for v in x]}),
              "y is rightly a non-leaf, but its .grad stays None. backward() computes dz/dy = 2y "
              "on its way to x, uses it, and throws it away; only leaves that require grad keep "
              "theirs. Call y.retain_grad() before backward() to keep it (PyTorch warns when you "
              "read a non-leaf's .grad).",
              "Ask what autograd stores, not what it computes along the way."),
        Wrong("leaf_definition", table_with(analytic, y=lambda x, k: {"is_leaf": True, "grad": [2 * k * v for v in x]}),
              "y was produced by an operation (x * k), so it is not a leaf, and a non-leaf keeps "
              "no .grad. A leaf is a tensor you created directly.",
              "Is there an arrow pointing into y's box in the graph?"),
        Wrong("chain_rule_dropped", table_with(analytic, x=lambda x, k: {"grad": [2 * k * v for v in x]}),
              "x.grad is dz/dy = 2y, without the factor dy/dx = k on the way from y to x. The chain "
              "rule multiplies both: dz/dx = 2y·k = 2k²x.",
              "Write dz/dx as (dz/dy)(dy/dx) and evaluate both factors."),
    ),
)
