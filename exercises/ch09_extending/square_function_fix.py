"""Chapter 2's BuggySquare, now to fix: a custom Function whose backward forgot the factor 2.

Graded by running the student's class on fresh inputs: the forward value against x * x, the
gradient of (g * out).sum() against 2xg, gradcheck and gradgradcheck. Every wrong answer is a
real Function run through the same report, so its table is torch's, not typed.
"""

import random

import torch

from autograder.byhand import AUTOGRAD
from autograder.kinds import Bool, Table, Tensor
from gradtutor.key.exercise import Exercise, Wrong

from ._common import call, central, function_report, report_row

N = 3
KIND = Table(rows=("report",), columns=(("value", Tensor(shape=(N,))), ("grad", Tensor(shape=(N,))),
                                        ("gradcheck", Bool()), ("gradgradcheck", Bool())))


class _Buggy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * x


class _NoUpstream(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return 2 * x


class _SavedOutput(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x * x
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_out):
        (y,) = ctx.saved_tensors
        return 2 * y * grad_out


class _Detached(_Buggy):
    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return 2 * grad_out * x.detach()


def _run(apply):
    def value(x: list, g: list) -> dict:
        return function_report(apply, [torch.tensor(x, dtype=torch.float64)], torch.tensor(g, dtype=torch.float64))
    return value


def reference(x: list, g: list) -> dict:
    return _run(lambda t: t * t)(x, g)


def analytic(x: list, g: list) -> dict:
    return report_row([v * v for v in x], {"grad": [2 * v * w for v, w in zip(x, g, strict=True)]}, True)


def finite_diff(x: list, g: list) -> dict:
    grads = [central(lambda t: t * t, v) * w for v, w in zip(x, g, strict=True)]
    return report_row([v * v for v in x], {"grad": grads}, True)


def draw(rng: random.Random) -> dict:
    return {"x": [rng.choice((-1, 1)) * rng.uniform(0.3, 2.5) for _ in range(N)],
            "g": [rng.choice((-1, 1)) * rng.uniform(0.5, 2) for _ in range(N)]}


SETUP = """x = torch.tensor({{x}}, dtype=torch.float64)
g = torch.tensor({{g}}, dtype=torch.float64)   # the gradient arriving at the output
from autograder.harness import function_report   # what the grader runs"""

EXERCISE = Exercise(
    title="Fix BuggySquare (fix-it)",
    prompt=r"""
Chapter 2's `BuggySquare` failed `gradcheck`:

```python
class BuggySquare(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * x
```

Write a fixed class `Square` (same structure, correct `backward`). This is a derivation by
hand: do not call autograd inside `backward`, write the formula. The grader runs
`function_report(Square.apply, [x], g)` on the setup's `x = {{x}}` with upstream gradient
`g = {{g}}`, and on fresh inputs. It reports the forward value, the gradient of
$\sum_i g_i\,\mathrm{Square}(x)_i$, and whether `gradcheck` and `gradgradcheck` pass. Run it
yourself before you check.
""",
    setup=SETUP,
    answer="Square",
    call=call("function_report(Square.apply, [x], g)"),
    placeholder="Square = ...  # replace with your class Square(torch.autograd.Function)",
    solution="""class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return 2 * x * grad_out""",
    refuse=AUTOGRAD,
    kind=KIND,
    params={"x": [0.7, -1.2, 2.0], "g": [1.0, 0.5, -1.0]},
    hidden=({"x": [1.5, 0.4, -2.0], "g": [2.0, -1.0, 0.5]}, {"x": [-0.3113, 2.5938, 1.1413], "g": [-1.5, 1.0, 0.25]}),
    draw=draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("power_rule", _run(_Buggy.apply),
              "This is BuggySquare's backward unchanged: grad_out * x. The derivative of x² is "
              "2x, so the gradient is half what it should be, and gradcheck (which compares "
              "with central differences) fails.",
              "Differentiate x·x by hand. What factor does the power rule bring down?"),
        Wrong("chain_rule_dropped", _run(_NoUpstream.apply),
              "This backward returns 2x whatever arrives: it ignores grad_out. backward "
              "receives dL/d(output) and must return dL/d(input) = grad_out · d(output)/d(input); "
              "without the factor it only works when the upstream gradient is all ones.",
              "Where does grad_out appear in what your backward returns?"),
        Wrong("backward_not_differentiable", _run(_Detached.apply),
              "The first derivative is right (gradcheck passes), but the backward computes it "
              "from a tensor cut off from autograd (x.detach(), .numpy(), .item() or "
              "torch.no_grad()), so the gradient has no graph back to x and its own derivative "
              "comes out wrong: gradgradcheck fails.",
              "Build backward from torch operations on the saved tensor itself."),
        Wrong("custom_saved_output", _run(_SavedOutput.apply),
              "This backward saved the output y = x² and returned 2·y·grad_out = 2x²·grad_out. "
              "The derivative 2x needs the input; if you save the output, rewrite the "
              "derivative in terms of it (here that would need √y and its sign, so save x).",
              "Which tensor did you save for backward, and what does 2x become in terms of it?"),
    ),
)
