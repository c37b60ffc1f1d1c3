"""Reference set 002, 5.1: one gradient-descent step on L = (w - 3)² from w = 1 with lr 0.1
gives w = 1.4; the student writes the update as a function, graded on fresh w and lr."""

import torch

from autograder.kinds import Number
from gradtutor.key.exercise import Exercise, Require, Wrong
from gradtutor.key.numeric import central_diff


def reference(w0: float, lr: float, target: float) -> torch.Tensor:
    w = torch.tensor(w0, dtype=torch.float64, requires_grad=True)
    ((w - target) ** 2).backward()
    with torch.no_grad():
        w -= lr * w.grad
    return w.detach()


def analytic(w0: float, lr: float, target: float) -> float:
    # dL/dw = 2(w - target); step against it
    return w0 - lr * 2 * (w0 - target)


def finite_diff(w0: float, lr: float, target: float) -> float:
    return w0 - lr * central_diff(lambda w: (w - target) ** 2, w0)


def _grad(w0: float, target: float) -> float:
    return 2 * (w0 - target)


EXERCISE = Exercise(
    title="One step of gradient descent, by hand",
    prompt=r"""
The setup cell makes a parameter `w` (a leaf that requires grad), computes
$L = (w - {{target|pretty}})^2$ and calls `L.backward()`, so `w.grad` is filled.

Write a function `sgd_step(w, lr)` that performs **one gradient-descent step in place**:
update `w` itself by the learning rate times its gradient, without autograd recording the update
(use `torch.no_grad()`), reset `w.grad`, and return `w`. The grader calls `sgd_step(w, lr)` and
then reads the `w` it passed in, so the update must change that tensor, not make a new one. It
does so with $w = {{w0|pretty}}$, lr $= {{lr|pretty}}$ and with fresh values.
""",
    setup="""w0, lr, target = {{w0}}, {{lr}}, {{target}}
w = torch.tensor(w0, requires_grad=True)
L = (w - target) ** 2
L.backward()""",
    answer="sgd_step",
    # read the caller's w after the call (an out-of-place update never reaches it);
    # a placeholder returning ... still reads as "not answered"
    call="(lambda returned: returned if returned is ... else w)(sgd_step(w, lr))",
    placeholder="def sgd_step(w, lr):\n    return ...",
    solution="""def sgd_step(w, lr):
    with torch.no_grad():
        w -= lr * w.grad
    w.grad = None
    return w""",
    requires=(Require("grad_reset", "w.grad is None or not bool(w.grad.any())", "w.grad reset after the step",
                      "After your step, w.grad still holds the gradient it used. The next backward() "
                      "adds into it, so the second step would use the sum of two gradients.",
                      "Set w.grad to None (or zero it) inside sgd_step, after the update."),),
    kind=Number(),
    params={"w0": 1.0, "lr": 0.1, "target": 3.0},
    hidden=({"w0": -2.0, "lr": 0.25, "target": 3.0}, {"w0": 5.0, "lr": 0.05, "target": -1.35}),
    draw=lambda rng: {"w0": rng.uniform(-5, 5), "lr": rng.uniform(0.01, 0.4), "target": rng.uniform(-3, 3)},
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("descent_direction", lambda w0, lr, target: w0 + lr * _grad(w0, target),
              "This steps uphill: w + lr·grad. The gradient points in the direction in which L "
              "grows fastest, so descent moves the other way, w - lr·grad.",
              "Is the minimum of L to the left or to the right of w? Which way must w move?"),
        Wrong("update_not_gradient", lambda w0, lr, target: _grad(w0, target),
              "That is w.grad, the gradient 2(w - target), not the updated parameter. The step "
              "uses the gradient to move w; the function returns the moved w.",
              "Return w after the update, not the quantity you update it with."),
        Wrong("out_of_place_update", lambda w0, lr, target: w0,
              "The w passed to your function still holds its old value. Inside the function, "
              "w = w - lr * w.grad makes a new tensor and binds it to the local name w; the "
              "caller's tensor (the parameter an optimizer would hold) is never changed. Update "
              "it in place, with -=, inside torch.no_grad().",
              "After your function returns, print the w you passed in. Did it move?"),
        Wrong("lr_dropped", lambda w0, lr, target: w0 - _grad(w0, target),
              "The learning rate is missing: the step is w - grad. lr scales how far each step "
              "goes along the negative gradient.",
              "Where does lr enter the update?"),
    ),
)
