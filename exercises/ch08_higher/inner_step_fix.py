"""Reference set 000, the fix graded by running it: the student repairs the post's snippet as a
function meta_grad(X, Y, step, a, loss_fn), and the grader calls it on other losses and step
sizes. At the post's values (MSE, X = 1, Y = 4, a = 3, s = 0.001) the true gradient is -6.108486;
the post's code gives -6.0540.

Either change alone leaves -6.0540: without .data but with no create_graph=True, the inner
gradient comes back without a grad_fn; with create_graph=True but still .data, the history is
thrown away. The post's hand formula 2(y - 3x - 0.027x + 0.009y)(-3 - 0.027) holds for MSE only,
so it is right at the shown values and wrong on the other losses.

For a loss ℓ(p) (one element, so the mean is ℓ itself): p1 = aX, g = a ℓ'(aX),
final = aX + (s a²/2) ℓ'(aX), d final/dX = a + (s a³/2) ℓ''(aX), dl2/dX = ℓ'(final) · d final/dX.
"""

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F

from autograder.kinds import Number
from gradtutor.key.exercise import Exercise, Wrong
from gradtutor.key.numeric import central_diff

LOSSES: dict[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    "mse": F.mse_loss,
    "quartic": lambda p, t: ((p - t) ** 4).mean(),
    "log_cosh": lambda p, t: torch.log(torch.cosh(p - t)).mean(),
}
# (ℓ, ℓ', ℓ'') of the error e = p - t, in plain math
PLAIN: dict[str, tuple[Callable[[float], float], ...]] = {
    "mse": (lambda e: e**2, lambda e: 2 * e, lambda e: 2.0),
    "quartic": (lambda e: e**4, lambda e: 4 * e**3, lambda e: 12 * e**2),
    "log_cosh": (lambda e: math.log(math.cosh(e)), math.tanh, lambda e: 1 - math.tanh(e) ** 2),
}


def reference(x0: float, y: float, step: float, a: float, loss: str) -> torch.Tensor:
    loss_fn = LOSSES[loss]
    X = torch.tensor([x0], dtype=torch.float64, requires_grad=True)
    Y = torch.tensor([y], dtype=torch.float64)
    p_y1 = a * X
    (grad,) = torch.autograd.grad(loss_fn(p_y1, Y), [X], create_graph=True)
    nX = X + grad * step
    final_y = (p_y1 + a * nX) / 2
    return torch.autograd.grad(loss_fn(final_y, Y), [X])[0]


def _final(x: float, y: float, step: float, a: float, loss: str, direction: float = 1.0) -> float:
    d1 = PLAIN[loss][1]
    return a * x + direction * step * a**2 / 2 * d1(a * x - y)


def _meta(x0: float, y: float, step: float, a: float, loss: str, direction: float = 1.0,
          through_step: bool = True) -> float:
    _, d1, d2 = PLAIN[loss]
    final = _final(x0, y, step, a, loss, direction)
    slope = a + (direction * step * a**3 / 2 * d2(a * x0 - y) if through_step else 0.0)
    return d1(final - y) * slope


def analytic(x0: float, y: float, step: float, a: float, loss: str) -> float:
    return _meta(x0, y, step, a, loss)


def finite_diff(x0: float, y: float, step: float, a: float, loss: str) -> float:
    ell = PLAIN[loss][0]
    return central_diff(lambda x: ell(_final(x, y, step, a, loss) - y), x0)


def _draw(rng) -> dict:
    a, y = rng.uniform(1, 3), rng.uniform(-3, 3)
    x0 = rng.uniform(-2, 2)
    while abs(a * x0 - y) < 0.5:  # away from the optimum, where every gradient is 0
        x0 = rng.uniform(-2, 2)
    return {"x0": x0, "y": y, "step": rng.uniform(0.001, 0.02), "a": a,
            "loss": rng.choice(sorted(LOSSES))}


SETUP = """import torch.nn.functional as F

x0, y, step, a = {{x0}}, {{y}}, {{step}}, {{a}}
LOSSES = {
    "mse": F.mse_loss,
    "quartic": lambda p, t: ((p - t) ** 4).mean(),
    "log_cosh": lambda p, t: torch.log(torch.cosh(p - t)).mean(),
}
loss_fn = LOSSES[{{loss}}]   # the grader also uses the other losses"""

EXERCISE = Exercise(
    title="Fix it: the gradient through the inner step",
    prompt=r"""
Here is the post's code as a function of the loss, and it prints the wrong gradient:

```python
def meta_grad(X, Y, step, a, loss_fn):
    p_y1 = a * X
    l1 = loss_fn(p_y1, Y)
    grad = torch.autograd.grad(l1, [X], retain_graph=True)[0]
    nX = X + grad.data * step
    p_y2 = a * nX
    final_y = (p_y1 + p_y2) / 2
    l2 = loss_fn(final_y, Y)
    return torch.autograd.grad(l2, [X])[0]
```

Repair it, so that it returns the true $\frac{d\,l_2}{dX}$, in which the inner step's
dependence on $X$ counts. Keep the signature. The grader calls
`meta_grad(torch.tensor([x0], requires_grad=True), torch.tensor([y]), step, a, loss_fn)` at the
post's values ($X = {{x0|pretty}}$, $Y = {{y|pretty}}$, $a = {{a|pretty}}$, step
${{step|pretty}}$, `F.mse_loss`) and then with **other losses and step sizes**, so a formula
worked out by hand for one loss will not do: let autograd differentiate through the step.
""",
    setup=SETUP,
    answer="meta_grad",
    call="meta_grad(torch.tensor([x0], requires_grad=True), torch.tensor([y]), step, a, loss_fn)",
    placeholder="def meta_grad(X, Y, step, a, loss_fn):\n    return ...",
    solution="""def meta_grad(X, Y, step, a, loss_fn):
    p_y1 = a * X
    l1 = loss_fn(p_y1, Y)
    grad = torch.autograd.grad(l1, [X], create_graph=True)[0]  # the inner gradient keeps its graph
    nX = X + grad * step                                         # and is used without .data
    p_y2 = a * nX
    final_y = (p_y1 + p_y2) / 2
    l2 = loss_fn(final_y, Y)
    return torch.autograd.grad(l2, [X])[0]""",
    kind=Number(),
    params={"x0": 1.0, "y": 4.0, "step": 0.001, "a": 3.0, "loss": "mse"},
    hidden=({"x0": 0.5, "y": 2.0, "step": 0.01, "a": 2.0, "loss": "quartic"},
            {"x0": -1.0, "y": 1.0, "step": 0.05, "a": 1.5, "loss": "log_cosh"},
            {"x0": 2.0, "y": -1.0, "step": 0.02, "a": 1.5, "loss": "mse"}),
    draw=_draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("meta_create_graph",
              lambda x0, y, step, a, loss: _meta(x0, y, step, a, loss, through_step=False),
              "This is what the post's code returns, and also what it returns after only one of "
              "the two repairs. grad.data is a number with no history, so nX = X + constant and "
              "d nX/dX = 1; dropping .data alone does not help either, because an inner gradient "
              "computed without create_graph=True has no grad_fn. The inner step's own "
              "dependence on X, step · d(∂l1/∂X)/dX, is cut both ways.",
              "Make both repairs: create_graph=True on the inner autograd.grad, and no .data."),
        Wrong("inner_gradient_reported",
              lambda x0, y, step, a, loss: a * PLAIN[loss][1](a * x0 - y),
              "That is ∂l1/∂X, the gradient of the inner loss, not of the final loss l2.",
              "Return the gradient of l2, the loss of the averaged prediction."),
        Wrong("sign_error",
              lambda x0, y, step, a, loss: _meta(x0, y, step, a, loss, direction=-1.0),
              "This steps X against the inner gradient (X - step · grad). The snippet adds it: "
              "nX = X + grad · step; a repair changes how the gradient flows, not the update.",
              "Compare your update line with the original one."),
    ),
)
