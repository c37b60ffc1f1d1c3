"""Reference set 000: the gradient through an inner update step.

p1 = aX, l1 = mse(p1, Y), X' = X + s·∂l1/∂X, p2 = aX', final = (p1 + p2)/2, l2 = mse(final, Y).
At X = 1, Y = 4, a = 3, s = 0.001 the true dl2/dX is -6.108486; cutting the inner gradient
(grad.data, detach) gives -6.0540, because the inner step becomes a constant shift.
The poster's algebra: final = 3x + 0.027x - 0.009y and dl2/dX = 2(y - 3x - 0.027x + 0.009y)(-3 - 0.027),
i.e. with a and s as parameters: final = (a + s a³) x - s a² y.
"""

import torch
import torch.nn.functional as F

from autograder.kinds import Number
from gradtutor.key.exercise import Exercise, Wrong
from gradtutor.key.numeric import central_diff


def reference(x0: float, y: float, step: float, a: float) -> torch.Tensor:
    X = torch.tensor([x0], dtype=torch.float64, requires_grad=True)
    Y = torch.tensor([y], dtype=torch.float64)
    p_y1 = a * X
    l1 = F.mse_loss(p_y1, Y)
    (grad,) = torch.autograd.grad(l1, [X], create_graph=True)
    nX = X + grad * step
    final_y = (p_y1 + a * nX) / 2
    l2 = F.mse_loss(final_y, Y)
    return torch.autograd.grad(l2, [X])[0]


def _final(x: float, y: float, step: float, a: float) -> float:
    # (ax + a(x + s·2a(ax - y)))/2 = ax + s a²(ax - y); for a = 3, s = 0.001: 3x + 0.027x - 0.009y
    return (a + step * a**3) * x - step * a**2 * y


def analytic(x0: float, y: float, step: float, a: float) -> float:
    # the post's formula 2(y - 3x - 0.027x + 0.009y)(-3 - 0.027), with a and s as parameters
    slope = a + step * a**3
    return 2 * (y - _final(x0, y, step, a)) * (-slope)


def l2_plain(x0: float, y: float, step: float, a: float) -> float:
    return (_final(x0, y, step, a) - y) ** 2


def _draw(rng) -> dict:
    a, y = rng.uniform(1, 3), rng.uniform(-5, 5)
    x0 = rng.uniform(-3, 3)
    while abs(a * x0 - y) < 0.5:  # away from the optimum, where every gradient is 0
        x0 = rng.uniform(-3, 3)
    return {"x0": x0, "y": y, "step": rng.uniform(0.001, 0.05), "a": a}


SETUP = """import torch.nn.functional as F

x0, y, step, a = {{x0}}, {{y}}, {{step}}, {{a}}"""

EXERCISE = Exercise(
    title="The gradient through an inner update step",
    prompt=r"""
A forum post asks why PyTorch disagrees with a hand calculation. The model predicts $aX$ for
the target $Y$; one inner step moves $X$ along the inner loss's gradient, and the final
prediction averages the old and the new prediction:

```python
X = torch.tensor([{{x0}}], requires_grad=True)
Y = torch.tensor([{{y}}])
p_y1 = {{a}} * X
l1 = F.mse_loss(p_y1, Y)
grad = torch.autograd.grad(l1, [X], retain_graph=True)[0]
nX = X + grad.data * {{step}}
p_y2 = {{a}} * nX
final_y = (p_y1 + p_y2) / 2
l2 = F.mse_loss(final_y, Y)
print(torch.autograd.grad(l2, [X])[0])
```

The printed gradient disagrees with the poster's algebra. What is the **true** derivative
$\frac{d\,l_2}{dX}$, in which the inner step's dependence on $X$ counts? Compute it with autograd
from `x0, y, step, a` (the setup cell defines them) and bind it to `meta_x_grad`.
""",
    setup=SETUP,
    answer="meta_x_grad",
    solution="""X = torch.tensor([x0], requires_grad=True)
Y = torch.tensor([y])
p_y1 = a * X
l1 = F.mse_loss(p_y1, Y)
grad = torch.autograd.grad(l1, [X], create_graph=True)[0]  # keep the inner gradient's graph
nX = X + grad * step                                         # and no .data
p_y2 = a * nX
final_y = (p_y1 + p_y2) / 2
l2 = F.mse_loss(final_y, Y)
meta_x_grad = torch.autograd.grad(l2, [X])[0]""",
    kind=Number(),
    params={"x0": 1.0, "y": 4.0, "step": 0.001, "a": 3.0},
    hidden=({"x0": 0.5, "y": 4.0, "step": 0.01, "a": 3.0},
            {"x0": 2.0, "y": -1.0, "step": 0.005, "a": 1.5}),
    draw=_draw,
    reference=reference,
    analytic=analytic,
    finite_diff=lambda x0, y, step, a: central_diff(lambda x: l2_plain(x, y, step, a), x0),
    wrong=(
        Wrong("meta_create_graph",
              lambda x0, y, step, a: 2 * (_final(x0, y, step, a) - y) * a,
              "This is what the post's code prints: grad.data (like detach, or a grad "
              "computed without create_graph=True) is a number with no history, so "
              "nX = X + constant and d nX/dX = 1. The inner step's own dependence on X, "
              "step · d(∂l1/∂X)/dX = step · 2a², is cut, and d final/dX shrinks from "
              "a + step·a³ to a.",
              "Compute the inner gradient with create_graph=True and use it without .data."),
        Wrong("inner_gradient_reported", lambda x0, y, step, a: 2 * a * (a * x0 - y),
              "That is ∂l1/∂X, the gradient of the inner loss (grad1 in the post), not the "
              "gradient of the final loss l2.",
              "Differentiate l2, the loss of the averaged prediction."),
        Wrong("sign_error",
              lambda x0, y, step, a: 2 * ((a - step * a**3) * x0 + step * a**2 * y - y)
              * (a - step * a**3),
              "This steps X against the inner gradient (X - step · grad). The code adds the "
              "gradient: nX = X + grad · step.",
              "Re-read the update line of the code."),
    ),
)
