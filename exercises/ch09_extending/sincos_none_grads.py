"""A Function with two outputs, (sin x, cos x), of which a caller often uses one. With
ctx.set_materialize_grads(False) the unused output's gradient reaches backward as None instead
of a tensor of zeros, and backward adds only the contributions that arrived:
g_sin · cos x − g_cos · sin x, each term only when its gradient is there."""

import math
import random

import torch

from autograder.byhand import AUTOGRAD
from autograder.harness import unused_output_report
from autograder.kinds import Bool, Table, Tensor
from gradtutor.key.exercise import Exercise, Wrong, table_with

from ._common import call, central

N = 3
ROWS = ("first_only", "second_only", "both")
KIND = Table(rows=ROWS, columns=(("grad", Tensor(shape=(N,))), ("none_arrived", Bool()), ("raised", Bool())))


class _TorchSinCos(torch.autograd.Function):
    """Witness 1: the same outputs, their gradients computed by torch's autograd of sin and cos."""

    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(x)
        return torch.sin(x), torch.cos(x)

    @staticmethod
    def backward(ctx, g_sin, g_cos):
        (x,) = ctx.saved_tensors
        pairs = [(f, g) for f, g in ((torch.sin, g_sin), (torch.cos, g_cos)) if g is not None]
        with torch.enable_grad():
            t = x.detach().requires_grad_(True)
            return torch.autograd.grad([f(t) for f, _ in pairs], t, [g for _, g in pairs])


class _SinCos(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sin(x), torch.cos(x)


class _Materialized(_SinCos):  # right, but the default: zeros arrive for the unused output
    @staticmethod
    def backward(ctx, g_sin, g_cos):
        (x,) = ctx.saved_tensors
        return g_sin * torch.cos(x) - g_cos * torch.sin(x)


class _Unmaterialized(_SinCos):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(x)
        return torch.sin(x), torch.cos(x)


class _NoneUnchecked(_Unmaterialized):
    backward = staticmethod(_Materialized.backward)  # None * tensor: a TypeError when one is unused


class _NoneForAll(_Unmaterialized):
    @staticmethod
    def backward(ctx, g_sin, g_cos):
        (x,) = ctx.saved_tensors
        if g_sin is None or g_cos is None:
            return None
        return g_sin * torch.cos(x) - g_cos * torch.sin(x)


def _each(term_sin, term_cos, *, both_adds: bool = True):
    class Each(_Unmaterialized):
        @staticmethod
        def backward(ctx, g_sin, g_cos):
            (x,) = ctx.saved_tensors
            if g_sin is not None and g_cos is not None and not both_adds:
                return term_sin(g_sin, x)
            grad = torch.zeros_like(x)
            if g_sin is not None:
                grad = grad + term_sin(g_sin, x)
            if g_cos is not None:
                grad = grad + term_cos(g_cos, x)
            return grad
    return Each


_COS_SLOPE_PLUS = _each(lambda g, x: g * torch.cos(x), lambda g, x: g * torch.sin(x))
_FIRST_WHEN_BOTH = _each(lambda g, x: g * torch.cos(x), lambda g, x: -g * torch.sin(x), both_adds=False)


def _run(function: type):
    def value(x: list, g_sin: list, g_cos: list) -> dict:
        def f64(v: list) -> torch.Tensor:
            return torch.tensor(v, dtype=torch.float64)
        return unused_output_report(function, [f64(x)], [f64(g_sin), f64(g_cos)])
    return value


reference = _run(_TorchSinCos)


def _table(sin_part: list, cos_part: list) -> dict:
    both = [a + b for a, b in zip(sin_part, cos_part, strict=True)]
    return {"first_only": {"grad": sin_part, "none_arrived": True, "raised": False},
            "second_only": {"grad": cos_part, "none_arrived": True, "raised": False},
            "both": {"grad": both, "none_arrived": False, "raised": False}}


def analytic(x: list, g_sin: list, g_cos: list) -> dict:
    # d sin/dx = cos x, d cos/dx = -sin x; an output nobody used contributes nothing
    return _table([g * math.cos(v) for g, v in zip(g_sin, x, strict=True)],
                  [-g * math.sin(v) for g, v in zip(g_cos, x, strict=True)])


def finite_diff(x: list, g_sin: list, g_cos: list) -> dict:
    return _table([g * central(math.sin, v) for g, v in zip(g_sin, x, strict=True)],
                  [g * central(math.cos, v) for g, v in zip(g_cos, x, strict=True)])


def draw(rng: random.Random) -> dict:
    def some() -> list:
        return [rng.choice((-1, 1)) * rng.uniform(0.3, 2.8) for _ in range(N)]
    return {"x": some(), "g_sin": some(), "g_cos": some()}


EXERCISE = Exercise(
    title="Two outputs, one of them unused: set_materialize_grads",
    prompt=r"""
Write `SinCos`, a `torch.autograd.Function` with `forward(ctx, x)` that returns the two outputs
$(\sin x, \cos x)$, and a `backward(ctx, g_sin, g_cos)` you derive **by hand**. Callers often
use only one of the two outputs, so `forward` must call `ctx.set_materialize_grads(False)`:
then the gradient of an output nobody used arrives in `backward` as `None`, not as a tensor of
zeros, and `backward` must work with whichever gradients arrived.

The grader runs `unused_output_report(SinCos, [x], [g_sin, g_cos])` with `x = {{x}}`,
`g_sin = {{g_sin}}`, `g_cos = {{g_cos}}`, and at fresh inputs. It calls `SinCos.apply(x)` three
times: only the first output used (the gradient `g_sin` arriving at it), only the second (`g_cos`
arriving), and both. Each row gives `x`'s gradient, whether a gradient arrived in `backward` as
`None`, and whether `backward` raised. It compares with torch's own gradients of `torch.sin` and
`torch.cos`.
""",
    setup="""x = torch.tensor({{x}}, dtype=torch.float64)
g_sin = torch.tensor({{g_sin}}, dtype=torch.float64)   # the gradient arriving at sin(x), when it is used
g_cos = torch.tensor({{g_cos}}, dtype=torch.float64)   # the gradient arriving at cos(x), when it is used
from autograder.harness import unused_output_report   # what the grader runs""",
    answer="SinCos",
    refuse=AUTOGRAD,  # the prompt says: backward derived by hand
    call=call("unused_output_report(SinCos, [x], [g_sin, g_cos])"),
    placeholder="SinCos = ...  # replace with your class SinCos(torch.autograd.Function)",
    solution="""class SinCos(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)   # an unused output's gradient arrives as None
        ctx.save_for_backward(x)
        return torch.sin(x), torch.cos(x)

    @staticmethod
    def backward(ctx, g_sin, g_cos):
        (x,) = ctx.saved_tensors
        grad = torch.zeros_like(x)
        if g_sin is not None:             # only the outputs that were used contribute
            grad = grad + g_sin * torch.cos(x)
        if g_cos is not None:
            grad = grad - g_cos * torch.sin(x)
        return grad""",
    kind=KIND,
    params={"x": [0.5, -1.0, 2.0], "g_sin": [1.0, -0.5, 2.0], "g_cos": [0.5, 1.5, -1.0]},
    hidden=({"x": [-0.3, 1.2, 2.5], "g_sin": [2.0, 1.0, -1.0], "g_cos": [-1.0, 0.5, 1.5]},
            {"x": [1.5, -2.0, 0.7], "g_sin": [-0.5, 1.5, 1.0], "g_cos": [1.0, -2.0, 0.5]}),
    draw=draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("materialize_grads", table_with(reference, first_only={"none_arrived": False},
                                              second_only={"none_arrived": False}),
              "The gradients are right, but when one output was unused, backward received a "
              "tensor of zeros for it: materializing is still on (the default). "
              "ctx.set_materialize_grads(False) is a call on ctx in forward (or setup_context), "
              "before backward ever runs; it is what lets an unused output's gradient arrive as "
              "None.",
              "Where does the prompt ask for set_materialize_grads, and does your forward call it?"),
        Wrong("materialize_grads", _run(_NoneUnchecked),
              "With both outputs used your backward is right, but it raised when only one was "
              "used: with set_materialize_grads(False) the unused output's gradient arrives as "
              "None, and None times a tensor is a TypeError. A backward that switches "
              "materializing off must look at each gradient (is it None?) before using it.",
              "Run SinCos.apply(x)[0].sum().backward() and read the error. What does g_cos hold "
              "there?"),
        Wrong("backward_none_is_zero", _run(_NoneForAll),
              "With both outputs used your backward is right, but when one output was unused it "
              "returned None for x: that means no gradient at all, yet the output that was used "
              "depends on x. A gradient that arrives as None only drops that output's term; the "
              "other output's term is still there.",
              "When only sin(x) was used, how does the loss change with x?"),
        Wrong("sign_error", _run(_COS_SLOPE_PLUS),
              "The gradient through sin(x) is right; the one through cos(x) has the wrong sign. "
              "The slope of cos is -sin: cos falls where sin is positive.",
              "Differentiate cos x, and check the sign at x = π/2."),
        Wrong("fanout_adds", _run(_FIRST_WHEN_BOTH),
              "Each output alone gives the right gradient, but with both used your backward "
              "returned sin's term only. x feeds both outputs, so when gradients arrive at both, "
              "their contributions add, as at any fan-out.",
              "With both outputs used, how many terms does x's gradient have?"),
    ),
)
