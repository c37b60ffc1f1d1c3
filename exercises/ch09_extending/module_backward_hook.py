"""Module.register_full_backward_hook(hook(module, grad_input, grad_output)): grad_output is
dL/d(module output), grad_input is dL/d(module input) = Wᵀ grad_output for a Linear layer
(not the weight's gradient)."""

import random

import torch

from autograder.kinds import Table, Tensor
from gradtutor.key.exercise import Exercise, Wrong, value_instead
from gradtutor.key.numeric import gradient

KIND = Table(rows=("grad_input", "grad_output"), columns=(("value", Tensor(shape=(2,))),))


def reference(W: list, bias: list, x: list, c: list) -> dict:
    lin = torch.nn.Linear(2, 2, dtype=torch.float64)
    with torch.no_grad():
        lin.weight.copy_(torch.tensor(W, dtype=torch.float64))
        lin.bias.copy_(torch.tensor(bias, dtype=torch.float64))
    seen = {}
    lin.register_full_backward_hook(lambda m, gi, go: seen.update(gi=gi[0], go=go[0]))
    xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    (lin(xt) * torch.tensor(c, dtype=torch.float64)).sum().backward()
    return {"grad_input": {"value": seen["gi"]}, "grad_output": {"value": seen["go"]}}


def _wt_c(W: list, c: list) -> list:
    return [W[0][j] * c[0] + W[1][j] * c[1] for j in range(2)]


def analytic(W: list, bias: list, x: list, c: list) -> dict:
    # out_i = Σ_j W_ij x_j + b_i and L = Σ_i c_i out_i: dL/dout = c, dL/dx_j = Σ_i W_ij c_i
    return {"grad_input": {"value": _wt_c(W, c)}, "grad_output": {"value": list(c)}}


def finite_diff(W: list, bias: list, x: list, c: list) -> dict:
    def out(xv: list) -> list:
        return [sum(W[i][j] * xv[j] for j in range(2)) + bias[i] for i in range(2)]

    def loss_of_x(*xv: float) -> float:
        return sum(ci * oi for ci, oi in zip(c, out(list(xv)), strict=True))

    def loss_of_out(*ov: float) -> float:
        return sum(ci * oi for ci, oi in zip(c, ov, strict=True))

    return {"grad_input": {"value": gradient(loss_of_x, x)},
            "grad_output": {"value": gradient(loss_of_out, out(x))}}


def draw(rng: random.Random) -> dict:
    def some(n: int) -> list:
        return [round(rng.uniform(-2, 2), 2) for _ in range(n)]
    W = [some(2), some(2)]
    while abs(W[0][1] - W[1][0]) < 0.2:  # keep W away from symmetric, where Wc = Wᵀc
        W = [some(2), some(2)]
    return {"W": W, "bias": some(2), "x": some(2), "c": [rng.choice((-1, 1)) * rng.uniform(0.5, 2) for _ in range(2)]}


EXERCISE = Exercise(
    title="What a module backward hook receives",
    prompt=r"""

```python
lin = torch.nn.Linear(2, 2)
with torch.no_grad():
    lin.weight.copy_(torch.tensor({{W}}))   # W
    lin.bias.copy_(torch.tensor({{bias}}))
seen = {}
lin.register_full_backward_hook(lambda module, grad_input, grad_output:
                                seen.update(gi=grad_input[0], go=grad_output[0]))
x = torch.tensor({{x}}, requires_grad=True)
c = torch.tensor({{c}})
(lin(x) * c).sum().backward()
```

Fill in `module_grads = {"grad_input": {"value": seen["gi"]}, "grad_output": {"value": seen["go"]}}`
(two numbers each).
""",
    setup="W, bias, x_values, c_values = {{W}}, {{bias}}, {{x}}, {{c}}",
    answer="module_grads",
    placeholder='module_grads = ...  # {"grad_input": {"value": [...]}, "grad_output": {"value": [...]}}',
    solution="""Wt = torch.tensor(W).T
c = torch.tensor(c_values)
module_grads = {"grad_input": {"value": Wt @ c},      # dL/dx: back through out = W x + b
                "grad_output": {"value": c}}          # dL/d(out) for L = Σ c·out""",
    by_hand=True,
    kind=KIND,
    params={"W": [[1.0, 2.0], [0.0, -1.0]], "bias": [0.5, 0.0], "x": [1.0, 2.0], "c": [1.0, -1.0]},
    hidden=({"W": [[0.5188, -1.0375], [2.075, 1.0375]], "bias": [0.0, 1.0], "x": [-1.0, 0.5], "c": [2.0, 1.0]},),
    draw=draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("backward_hook_in_out",
              lambda W, bias, x, c: {"grad_input": {"value": list(c)}, "grad_output": {"value": _wt_c(W, c)}},
              "The two are swapped. The names follow the forward pass: grad_output is the "
              "gradient with respect to the module's output (what arrives from the loss), "
              "grad_input the gradient with respect to its input (what the module sends on).",
              "grad_output belongs to lin(x); grad_input belongs to x."),
        Wrong("matmul_transpose",
              lambda W, bias, x, c: {"grad_input": {"value": [W[i][0] * c[0] + W[i][1] * c[1] for i in range(2)]},
                                     "grad_output": {"value": list(c)}},
              "This grad_input is W c, not Wᵀ c. out_i = Σ_j W_ij x_j, so dL/dx_j = Σ_i W_ij c_i: "
              "the sum runs down column j of W.",
              "Write out_i as a sum over j. Which index of W meets x_j?"),
        value_instead(lambda W, bias, x, c: {
            "grad_input": {"value": _wt_c(W, c)},
            "grad_output": {"value": [sum(W[i][j] * x[j] for j in range(2)) + bias[i] for i in range(2)]}},
            "the layer's output Wx + b, in the grad_output row"),
    ),
)
