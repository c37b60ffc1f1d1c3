"""Reference set 002, 4.2 (first seed): y = x², x = [1, 2, 3], y.backward([1, 1, 1]) → [2, 4, 6]."""

import torch

from autograder.kinds import TensorOrSlip
from gradtutor.key.exercise import Exercise, Wrong

from ._common import square_seed_analytic as analytic
from ._common import square_seed_finite_diff as finite_diff
from ._common import square_seed_reference as reference

EXERCISE = Exercise(
    title="A seed of ones",
    prompt=r"""
```python
x = torch.tensor({{x0}}, requires_grad=True)
y = x ** 2
y.backward(torch.tensor({{v}}))
```

What is `x.grad` now? Work it out from the Jacobian of $y = x^2$ and the seed: write it as an expression of `x0` and `v` (a list of three numbers).
""",
    setup="""x0 = {{x0}}
v = {{v}}""",
    answer="grad_ones",
    solution="""grad_ones = [vi * 2 * xi for xi, vi in zip(x0, v)]   # vᵀJ with J = diag(2x)""",
    by_hand=True,
    kind=TensorOrSlip(shape=(3,), slips=((), (3, 3))),
    params={"x0": [1.0, 2.0, 3.0], "v": [1.0, 1.0, 1.0]},
    hidden=({"x0": [-0.5188, 1.5563, 2.5938], "v": [1.0, 1.0, 1.0]},),
    draw=lambda rng: {"x0": [rng.uniform(-3, 3) for _ in range(3)], "v": [1.0, 1.0, 1.0]},
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("seed_returned", lambda x0, v: v,
              "That is the seed itself. The seed is the gradient arriving at y from above; "
              "backward() carries it through the squaring, where each entry is multiplied by the "
              "local derivative 2x_i, before it lands in x.grad.",
              "Write the Jacobian of y = x² and multiply the seed into it."),
        Wrong("vjp_summed", lambda x0, v: sum(vi * 2 * xi for xi, vi in zip(x0, v, strict=True)),
              "You added the entries up into one number. x.grad always has the shape of x: "
              "entry j is Σ_i v_i ∂y_i/∂x_j, a sum over the outputs i for each input j separately, "
              "not one sum over everything.",
              "How many numbers does x hold, and so how many does x.grad hold?"),
        Wrong("grad_is_jacobian", lambda x0, v: torch.diag(2 * torch.tensor(x0, dtype=torch.float64)),
              "That is the whole Jacobian diag(2x). backward() never builds it: it only computes "
              "one vector-Jacobian product vᵀJ, a vector with the shape of x.",
              "Multiply the row vector of seeds into the Jacobian."),
        Wrong("value_not_derivative", lambda x0, v: [xi**2 for xi in x0],
              "That is y, the output values. x.grad holds how y changes when x is nudged, weighted "
              "by the seed.",
              "Differentiate x² before you plug in the numbers."),
    ),
)
