"""Content-map M05/M06: .grad accumulates; zero_grad(set_to_none=False) zeroes; zero_grad() sets None."""


import torch

from autograder.kinds import Table
from autograder.kinds import Tensor as TensorKind
from gradtutor.key.exercise import Exercise, Wrong, table_with
from gradtutor.key.numeric import tensor_gradient

ROWS = ("A", "B", "C", "D", "E")
KIND = Table(rows=ROWS, columns=(("grad", TensorKind(shape=(2,))),))


def reference(w: list[float]) -> dict:
    tw = torch.tensor(w, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.SGD([tw], lr=0.1)
    seen = {}

    def loss() -> torch.Tensor:
        return (tw**2).sum()

    loss().backward()
    seen["A"] = tw.grad.clone()
    loss().backward()
    seen["B"] = tw.grad.clone()
    opt.zero_grad(set_to_none=False)
    seen["C"] = tw.grad.clone()
    loss().backward()
    seen["D"] = tw.grad.clone()
    opt.zero_grad()
    seen["E"] = tw.grad
    return {row: {"grad": g} for row, g in seen.items()}


def analytic(w: list[float]) -> dict:
    g = [2 * v for v in w]  # d/dw Σ w² = 2w
    return {"A": {"grad": g}, "B": {"grad": [2 * v for v in g]}, "C": {"grad": [0.0, 0.0]},
            "D": {"grad": g}, "E": {"grad": None}}


def finite_diff(w: list[float]) -> dict:
    g = tensor_gradient(lambda t: (t**2).sum(), torch.tensor(w))
    return {"A": {"grad": g}, "B": {"grad": 2 * g}, "C": {"grad": 0 * g}, "D": {"grad": g},
            "E": {"grad": None}}


EXERCISE = Exercise(
    title="What zero_grad() leaves behind",
    prompt=r"""
```python
w = torch.tensor({{w}}, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
(w**2).sum().backward()              # A
(w**2).sum().backward()              # B
opt.zero_grad(set_to_none=False)     # C
(w**2).sum().backward()              # D
opt.zero_grad()                      # E
```

No `opt.step()` runs, so `w` never changes. Fill in `states`: `w.grad` right after each of the
lines A to E (numbers, or `None`).
""",
    setup="w0 = {{w}}",
    answer="states",
    placeholder='states = ...  # {"A": {"grad": ...}, "B": {"grad": ...}, ..., "E": {"grad": ...}}',
    solution="""w = torch.tensor(w0, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
states = {}
(w**2).sum().backward()
states["A"] = {"grad": w.grad.clone()}   # clone: w.grad is updated in place later
(w**2).sum().backward()
states["B"] = {"grad": w.grad.clone()}
opt.zero_grad(set_to_none=False)
states["C"] = {"grad": w.grad.clone()}
(w**2).sum().backward()
states["D"] = {"grad": w.grad.clone()}
opt.zero_grad()
states["E"] = {"grad": w.grad}""",
    kind=KIND,
    params={"w": [1.0, -2.0]},
    hidden=({"w": [0.5188, 3.1125]},),
    draw=lambda rng: {"w": [rng.choice([-1, 1]) * rng.uniform(0.2, 3) for _ in range(2)]},
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("zero_grad_none", table_with(analytic, E=lambda w: {"grad": [0.0, 0.0]}),
              "Since PyTorch 2.0, zero_grad() sets .grad to None by default (set_to_none=True): "
              "it frees the memory, and the next backward() creates a fresh gradient. Code that "
              "does w.grad.add_(...) right after zero_grad() fails on None.",
              "Compare line C with line E: what does set_to_none change?"),
        Wrong("accumulation", table_with(analytic, B=lambda w: {"grad": [2 * v for v in w]}),
              "Line B is the second backward() without zeroing in between, so it adds another "
              "2w to the 2w already in w.grad.",
              "What was in w.grad just before line B ran?"),
        Wrong("accumulation", table_with(analytic, D=lambda w: {"grad": [6 * v for v in w]}),
              "Line C emptied w.grad to zeros, so line D starts from zero and leaves one gradient "
              "2w, not the sum of all three backward() calls.",
              "What was in w.grad just before line D ran?"),
        Wrong("zero_grad_none", table_with(analytic, C=lambda w: {"grad": None}),
              "With set_to_none=False, zero_grad() keeps the gradient tensor and fills it with "
              "zeros (the pre-2.0 behaviour); only the default set_to_none=True leaves None.",
              "Read the set_to_none argument on line C."),
    ),
)
