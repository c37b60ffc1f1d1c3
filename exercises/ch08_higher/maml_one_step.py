"""One MAML step: f(w) = w², w' = w - α f'(w), L = w'². At w = 1, α = 0.1: dL/dw = 1.28.

Without create_graph the inner gradient is a constant (first-order MAML): 2w' = 1.6. With
w.data in the update only the path through the inner gradient survives: -0.32.
"""

import torch

from autograder.kinds import Number
from gradtutor.key.exercise import Exercise, Wrong
from gradtutor.key.numeric import central_diff


def reference(w0: float, alpha: float) -> torch.Tensor:
    w = torch.tensor(w0, dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(w**2, w, create_graph=True)
    w_new = w - alpha * g
    (meta,) = torch.autograd.grad(w_new**2, w)
    return meta


def outer_loss(w0: float, alpha: float) -> float:
    return (w0 - alpha * 2 * w0) ** 2


def analytic(w0: float, alpha: float) -> float:
    # L = (w(1 - 2α))², dL/dw = 2w(1 - 2α)²: the inner step's own slope (1 - 2α) counts twice
    return 2 * w0 * (1 - 2 * alpha) ** 2


EXERCISE = Exercise(
    title="Differentiate through one step of gradient descent",
    prompt=r"""
A one-step meta-learning (MAML) toy: inner loss $f(w) = w^2$, one inner gradient step
$w' = w - \alpha f'(w)$, outer loss $L = w'^2$, with `w = torch.tensor({{w0}},
requires_grad=True)` and $\alpha = {{alpha|pretty}}$.

What is the meta-gradient $\frac{dL}{dw}$, counting that $w'$ depends on $w$ both directly and
through $f'(w)$? Compute it with autograd.
""",
    setup="w0, alpha = {{w0}}, {{alpha}}",
    answer="meta_grad",
    solution="""w = torch.tensor(w0, requires_grad=True)
(g,) = torch.autograd.grad(w**2, w, create_graph=True)
w_new = w - alpha * g
(meta_grad,) = torch.autograd.grad(w_new**2, w)""",
    kind=Number(),
    params={"w0": 1.0, "alpha": 0.1},
    hidden=({"w0": 1.5, "alpha": 0.05}, {"w0": -2.0, "alpha": 0.2125}),
    draw=lambda rng: {"w0": rng.choice((-1, 1)) * rng.uniform(0.5, 3),
                      "alpha": rng.uniform(0.05, 0.3)},
    reference=reference,
    analytic=analytic,
    finite_diff=lambda w0, alpha: central_diff(lambda w: outer_loss(w, alpha), w0),
    wrong=(
        Wrong("meta_create_graph", lambda w0, alpha: 2 * w0 * (1 - 2 * alpha),
              "This is 2w', the first-order approximation: without create_graph=True the "
              "inner gradient f'(w) = 2w comes back as a tensor with no history, so "
              "autograd treats the step -αf'(w) as a constant and drops its slope -2α.",
              "Ask the inner torch.autograd.grad call to build a graph of its own result."),
        Wrong("detach_cuts_path", lambda w0, alpha: 2 * w0 * (1 - 2 * alpha) * (-2 * alpha),
              "This keeps only the path through the inner gradient, as happens when the "
              "update is written w.data - α·g: .data is a copy with no history, so the "
              "direct dependence of w' on w (slope 1) is lost, and only -α·f''(w) = -2α is "
              "left.",
              "Write the update with w itself, not w.data or w.detach()."),
        Wrong("update_not_gradient", lambda w0, alpha: w0 * (1 - 2 * alpha),
              "That is w', the parameter after the inner step, not the derivative of the "
              "outer loss with respect to w.",
              "Differentiate L = w'² with respect to the original w."),
        Wrong("inner_gradient_reported", lambda w0, alpha: 2 * w0,
              "This is f'(w) = 2w, the gradient of the inner loss at w. The meta-gradient is the "
              "derivative of the outer loss L = w'², taken through the inner step w' = w - αf'(w).",
              "Which loss does the question differentiate, and with respect to what?"),
    ),
)
