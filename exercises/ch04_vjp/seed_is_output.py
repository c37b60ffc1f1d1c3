"""y.backward(y): the output as its own seed gives 2x · x², not 2x (content map M03, outline 4.2)."""

import torch

from autograder.kinds import TensorOrSlip
from gradtutor.key.exercise import Exercise, Wrong
from gradtutor.key.numeric import vjp


def _x(x0: list[float]) -> torch.Tensor:
    return torch.tensor(x0, dtype=torch.float64)


def reference(x0: list[float]) -> torch.Tensor:
    x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    y = x**2
    y.backward(y)
    return x.grad


def analytic(x0: list[float]) -> list[float]:
    # seed v = y = x², Jacobian diag(2x): entry i is x_i² · 2x_i
    return [2 * xi**3 for xi in x0]


EXERCISE = Exercise(
    title="The output as its own seed",
    prompt=r"""
Seen in real notebooks: "backward needs an argument, so give it `y`":

```python
x = torch.tensor({{x0}}, requires_grad=True)
y = x ** 2
y.backward(y)
```

What is `x.grad`? Write it as an expression of `x0`.
""",
    setup="x0 = {{x0}}",
    answer="grad_seed_y",
    solution="""grad_seed_y = [xi**2 * 2 * xi for xi in x0]   # the seed is y = x², so vᵀJ = x²·2x""",
    by_hand=True,
    kind=TensorOrSlip(shape=(3,), slips=((),)),
    params={"x0": [1.0, 2.0, 3.0]},
    hidden=({"x0": [-1.0375, 0.5188, 1.5563]},),
    draw=lambda rng: {"x0": [rng.choice([-1, 1]) * rng.uniform(0.3, 3) for _ in range(3)]},
    reference=reference,
    analytic=analytic,
    finite_diff=lambda x0: vjp(lambda t: t**2, _x(x0), _x(x0) ** 2),
    wrong=(
        Wrong("seed_selects_wrt", lambda x0: 2 * _x(x0),
              "That is 2x, the derivative, as if handing y to backward() only said 'start from "
              "y'. The call already starts from y; its argument is the seed v, and backward(v) "
              "returns vᵀJ. With v = y = x² every derivative 2x_i is multiplied by x_i².",
              "Which seed would give the plain derivative here?"),
        Wrong("seed_returned", lambda x0: _x(x0) ** 2,
              "That is y, the seed itself. The seed is multiplied by the local derivative 2x_i "
              "on its way back to x.",
              "Write vᵀJ for v = y and J = diag(2x)."),
        Wrong("vjp_summed", lambda x0: sum(2 * xi**3 for xi in x0),
              "You added the entries into one number. x.grad has the shape of x: one entry per "
              "input, each with its own seed entry.",
              "How many numbers does x.grad hold?"),
    ),
)
