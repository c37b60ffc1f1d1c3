"""Reference set 002, 4.2 (second seed): y = x², x = [1, 2, 3], y.backward([1, 0, 2]) → [2, 0, 12]."""

import torch

from autograder.kinds import TensorOrSlip
from gradtutor.key.exercise import Exercise, Wrong, value_instead

from ._common import square_seed_analytic as analytic
from ._common import square_seed_finite_diff as finite_diff
from ._common import square_seed_reference as reference

EXERCISE = Exercise(
    title="A seed that weighs the outputs",
    prompt=r"""
Same function, another seed:

```python
x = torch.tensor({{x0}}, requires_grad=True)
y = x ** 2
y.backward(torch.tensor({{v}}))
```

What is `x.grad` now? Write it as an expression of `x0` and `v`.
""",
    setup="""x0 = {{x0}}
v = {{v}}""",
    answer="grad_reweighted",
    solution="""grad_reweighted = [vi * 2 * xi for xi, vi in zip(x0, v)]   # each seed entry weights its row of J = diag(2x)""",
    by_hand=True,
    kind=TensorOrSlip(shape=(3,), slips=((), (3, 3))),
    params={"x0": [1.0, 2.0, 3.0], "v": [1.0, 0.0, 2.0]},
    hidden=({"x0": [-1.0375, 0.5188, 2.075], "v": [2.0, -1.0, 0.5]},),
    draw=lambda rng: {"x0": [rng.uniform(-3, 3) for _ in range(3)],
                      "v": [rng.choice([-1, 1]) * rng.uniform(0.2, 3) for _ in range(3)]},
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("seed_is_vjp", lambda x0, v: [2 * xi for xi in x0],
              "That is the plain derivative 2x, as if the seed were all ones. The seed is not "
              "decoration: backward(v) computes vᵀJ, so each output's derivative is weighted by "
              "its entry of v. A 0 in the seed switches that output off.",
              "Write vᵀJ for J = diag(2x) entry by entry."),
        Wrong("seed_returned", lambda x0, v: v,
              "That is the seed itself. The seed is the gradient arriving at y; backward() "
              "multiplies it by each local derivative 2x_i on the way to x.",
              "What does the squaring do to a gradient passing back through it?"),
        Wrong("vjp_summed", lambda x0, v: sum(vi * 2 * xi for xi, vi in zip(x0, v, strict=True)),
              "You took the dot product v·(2x), one number. The vector-Jacobian product keeps one "
              "entry per input: entry j is Σ_i v_i ∂y_i/∂x_j, and here only i = j contributes.",
              "x.grad has the shape of x. Which outputs depend on x_j?"),
        Wrong("grad_is_jacobian", lambda x0, v: torch.diag(2 * torch.tensor(x0, dtype=torch.float64)),
              "That is the Jacobian diag(2x). backward() never forms it; with a seed it returns "
              "the single vector vᵀJ.",
              "Multiply the seed into the Jacobian."),
        value_instead(lambda x0, v: [xi**2 * vi for xi, vi in zip(x0, v, strict=True)],
                      "y = x² weighed by the seed"),
    ),
)
