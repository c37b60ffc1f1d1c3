"""A gradient check of the student's engine: largest relative error between the engine's
gradient and central differences in float64, read in chapter 2's bands."""

import torch

from autograder.byhand import AUTOGRAD
from autograder.kinds import Choice, Table
from gradtutor.key.exercise import Exercise, Wrong

from ._common import (
    BANDS,
    GRADCHECK_ROWS,
    Engine,
    FiniteDiffEngine,
    TorchTensor,
    call,
    grad_check,
    gradcheck_report,
)
from .tensor_engine import SOLUTION as ENGINE_SOLUTION

FUNCTION = '''def grad_check(f, x, eps=1e-6):
    x = x.to(torch.float64)                  # float64: float32 rounding swamps the differences
    t = Tensor(x)
    f(t).backward()
    analytic = t.grad.reshape(-1)
    numeric = torch.zeros(x.numel(), dtype=torch.float64)
    for k in range(x.numel()):
        e = torch.zeros(x.numel(), dtype=torch.float64)
        e[k] = eps
        up = f(Tensor(x + e.reshape(x.shape))).data
        down = f(Tensor(x - e.reshape(x.shape))).data
        numeric[k] = (up - down) / (2 * eps)  # central: error of order eps², not eps
    error = (analytic - numeric).abs() / torch.maximum(analytic.abs(), numeric.abs())
    return error.max().item()'''


def _run(engine, **slips):
    return lambda seed: gradcheck_report(lambda f, x: grad_check(f, x, engine, **slips), seed, engine)


EXERCISE = Exercise(
    title="Check your engine's gradients",
    points=2,
    prompt=r"""
Write `grad_check(f, x)`: `f` takes one of your `Tensor`s and returns a one-number `Tensor`, `x`
is a torch tensor. Return the **largest relative error** over the entries of `x` between your
engine's gradient of `f` at `x` (`backward()`, then `.grad`) and **central differences** in
**float64** with step $\varepsilon = 10^{-6}$:
$$n_k = \frac{f(x + \varepsilon e_k) - f(x - \varepsilon e_k)}{2\varepsilon},\qquad
r_k = \frac{|a_k - n_k|}{\max(|a_k|, |n_k|)}.$$

Chapter 2's bands read the result: $r \le 10^{-7}$ happy; up to $10^{-4}$ fine only with kinks;
up to $10^{-2}$ uncomfortable; above, the gradient is wrong.

The grader runs `gradcheck_report(grad_check, seed)` with `seed = {{seed}}` (other seeds
when grading) on four functions built from your `Tensor`'s operations (the class your cell sees): a `smooth` one, the same
times $10^6$ (`smooth_large`), and two that hide a dependence on `x` in a constant made from
`x.data` (`hidden`, and the same times $10^{-9}$, `hidden_tiny`), so that the engine's gradient
is wrong there. It reads the band of each number you return.
""",
    setup="""seed = {{seed}}
from autograder.tensor_harness import band, gradcheck_report   # what the grader runs""",
    answer="grad_check",
    call=call("gradcheck_report(grad_check, seed)"),
    placeholder="def grad_check(f, x):\n    return ...  # the largest relative error",
    solution=ENGINE_SOLUTION.replace(
        "def unbroadcast(grad, shape):",
        "# your Tensor from the engine exercise, repeated so this cell stands alone\n"
        "def unbroadcast(grad, shape):", 1) + "\n\n\n" + FUNCTION,
    refuse=AUTOGRAD,
    kind=Table(rows=GRADCHECK_ROWS, columns=(("band", Choice(options=BANDS)),)),
    params={"seed": 0},
    hidden=({"seed": 5}, {"seed": 8}),
    draw=lambda rng: {"seed": rng.randrange(100, 10**6)},
    reference=_run(TorchTensor),
    analytic=_run(Engine),
    finite_diff=_run(FiniteDiffEngine),
    wrong=(
        Wrong("forward_difference", _run(Engine, central=False),
              "The smooth functions land between 10⁻⁷ and 10⁻⁴ instead of below 10⁻⁷: a forward "
              "difference (f(x + ε) − f(x)) / ε is off by about ε·f''/2, an error of order 10⁻⁶ "
              "here, where the central difference's is of order ε².",
              "Evaluate f on both sides of x: at x + ε and at x − ε."),
        Wrong("absolute_error", _run(Engine, relative=False),
              "smooth_large and hidden_tiny land in other bands than they should: you compare "
              "absolute errors. Multiply f by 10⁶ and the same relative agreement is a million "
              "times larger in absolute terms; multiply a broken gradient by 10⁻⁹ and its error "
              "looks tiny. The bands are for relative errors.",
              "Divide each |a − n| by the size of the numbers compared."),
        Wrong("signed_error", _run(Engine, signed=True),
              "The hidden functions pass as if all were well: your error has a sign. Where the "
              "engine's gradient is below the true one, a − n is negative, and the largest of "
              "negative numbers looks like a tiny error. Take the absolute value before the "
              "maximum.",
              "Can your relative error be negative? What should the size of a disagreement be?"),
        Wrong("gradcheck_precision", _run(Engine, dtype=torch.float32),
              "Even the smooth functions land above 10⁻²: in float32 a step of 10⁻⁶ is below the "
              "rounding of f's value (about 10⁻⁷ relative), so the differences are mostly "
              "rounding noise. Gradient checks run in float64.",
              "What dtype do x and the Tensors your check builds have?"),
    ),
)
