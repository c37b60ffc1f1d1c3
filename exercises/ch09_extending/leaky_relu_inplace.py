"""An in-place custom Function: leaky ReLU that overwrites its input (like nn.LeakyReLU(inplace=True)).
forward changes x in place and declares it with ctx.mark_dirty(x); the input is gone, so backward
reads the sign from the saved output: g · (1 if out > 0 else a)."""

import random

import torch
import torch.nn.functional as F

from autograder.byhand import AUTOGRAD
from autograder.harness import inplace_report
from autograder.kinds import Bool, Table, Tensor
from gradtutor.key.exercise import Exercise, Wrong

from ._common import call, central

N = 3
KIND = Table(rows=("report",), columns=(
    ("value", Tensor(shape=(N,))), ("grad", Tensor(shape=(N,))), ("grad_via_input", Tensor(shape=(N,))),
    ("input_changed", Bool()), ("same_tensor", Bool()), ("gradcheck", Bool())))


class _Leaky(torch.autograd.Function):
    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        return g * torch.where(out > 0, 1.0, ctx.a), None


class _NotMarked(_Leaky):
    @staticmethod
    def forward(ctx, x, a):
        x.mul_(torch.where(x > 0, 1.0, a))   # changed in place, but not declared
        ctx.a = a
        ctx.save_for_backward(x)
        return x


class _OutOfPlace(_Leaky):
    @staticmethod
    def forward(ctx, x, a):
        out = x * torch.where(x > 0, 1.0, a)
        ctx.a = a
        ctx.save_for_backward(out)
        return out


class _ReluSlope(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, a):
        x.mul_(torch.where(x > 0, 1.0, a))
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        return x

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        return g * (out > 0), None


class _TimesOutput(_ReluSlope):  # the incoming gradient times the output, not times the slope
    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        return g * out, None


def _run(function):
    def value(x: list, g: list, a: float) -> dict:
        return inplace_report(lambda t: function(t, a), [torch.tensor(x, dtype=torch.float64)],
                              torch.tensor(g, dtype=torch.float64))
    return value


def reference(x: list, g: list, a: float) -> dict:
    return _run(F.leaky_relu_)(x, g, a)  # torch's own in-place leaky ReLU


def _leaky(v: float, a: float) -> float:
    return v if v > 0 else a * v


def _row(x: list, g: list, a: float, slopes: list) -> dict:
    grad = [w * s for w, s in zip(g, slopes, strict=True)]
    return {"report": {"value": [_leaky(v, a) for v in x], "grad": grad, "grad_via_input": grad,
                       "input_changed": any(_leaky(v, a) != v for v in x), "same_tensor": True,
                       "gradcheck": True}}


def analytic(x: list, g: list, a: float) -> dict:
    return _row(x, g, a, [1.0 if v > 0 else a for v in x])


def finite_diff(x: list, g: list, a: float) -> dict:
    return _row(x, g, a, [central(lambda t: _leaky(t, a), v) for v in x])


def draw(rng: random.Random) -> dict:
    signs = [1, -1, rng.choice((-1, 1))]
    rng.shuffle(signs)
    return {"x": [s * rng.uniform(0.3, 2.5) for s in signs],
            "g": [rng.choice((-1, 1)) * rng.uniform(0.5, 2) for _ in range(N)],
            "a": round(rng.uniform(0.02, 0.5), 3)}


EXERCISE = Exercise(
    title="A Function that changes its input in place",
    prompt=r"""
`nn.LeakyReLU(inplace=True)` saves memory by writing $\mathrm{out} = x$ where $x > 0$ and
$a\,x$ elsewhere into $x$'s own storage. Write `LeakyReLUInplace`, a `torch.autograd.Function`
with `forward(ctx, x, a)` (`a` a number) that changes `x` **in place**, declares it with
`ctx.mark_dirty`, and returns `x`; and a `backward` you derive **by hand**. Once `forward` has
run, the original `x` is gone: `backward` must work from what is still there.

The grader runs `inplace_report(lambda t: LeakyReLUInplace.apply(t, a), [x], g)` with
`x = {{x}}`, `g = {{g}}`, `a = {{a}}`, and at fresh inputs. It passes a copy of a leaf (torch
refuses in-place changes of a leaf that requires grad) and reports the value, the gradient
reached through the returned tensor (`grad`) and through the input tensor you changed
(`grad_via_input`), whether the input changed, whether the output is that same tensor, and
`gradcheck`. It compares with `torch.nn.functional.leaky_relu_`.
""",
    setup="""x = torch.tensor({{x}}, dtype=torch.float64)
g = torch.tensor({{g}}, dtype=torch.float64)   # the gradient arriving at the output
a = {{a}}                                       # the slope for x <= 0
from autograder.harness import inplace_report   # what the grader runs""",
    answer="LeakyReLUInplace",
    refuse=AUTOGRAD,  # the prompt says: backward derived by hand
    call=call("inplace_report(lambda t: LeakyReLUInplace.apply(t, a), [x], g)"),
    placeholder="LeakyReLUInplace = ...  # replace with your class LeakyReLUInplace(torch.autograd.Function)",
    solution="""class LeakyReLUInplace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, a):
        x.mul_(torch.where(x > 0, 1.0, a))   # in place: x now holds the output
        ctx.mark_dirty(x)                     # tell autograd: x's old history is over
        ctx.save_for_backward(x)              # the output (x itself now); for a > 0, out > 0 exactly where x > 0
        ctx.a = a
        return x

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        return g * torch.where(out > 0, 1.0, ctx.a), None   # no gradient for the number a""",
    kind=KIND,
    params={"x": [1.0, -2.0, 0.5], "g": [1.0, 0.5, -2.0], "a": 0.1},
    hidden=({"x": [-0.5, 1.5, -1.0], "g": [2.0, -1.0, 0.5], "a": 0.2},
            {"x": [2.075, -1.5563, 1.0375], "g": [-0.5, 1.5, 1.0], "a": 0.05}),
    draw=draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("mark_dirty", _run(_NotMarked.apply),
              "The values and the gradient through the returned tensor are right, but forward "
              "changed x in place without ctx.mark_dirty(x). Autograd then hands back a new "
              "tensor that shares x's storage, and x itself keeps its old history: it holds the "
              "new values, yet a gradient through x skips your Function (grad_via_input is g "
              "unchanged). mark_dirty makes the returned tensor x itself, with your Function as "
              "its grad_fn.",
              "Read Extending PyTorch's rule for a forward that modifies an input in place."),
        Wrong("prompt_requirement", _run(_OutOfPlace.apply),
              "Values and gradients through the output are right, but x is unchanged and the "
              "output is a new tensor: this leaky ReLU is out of place, and saves no memory. "
              "The exercise asks for x to be overwritten.",
              "Which tensor methods end in an underscore, and what do they do to their tensor?"),
        Wrong("local_derivative", _run(_ReluSlope.apply),
              "Values are right and x is changed in place, but backward gives 0 where x <= 0: "
              "that is relu's slope. Leaky ReLU has slope a there, so the incoming gradient "
              "is multiplied by a, not dropped.",
              "What is d(a x)/dx?"),
        Wrong("local_derivative", _run(_TimesOutput.apply),
              "Values are right and x is changed in place, but backward multiplies the incoming "
              "gradient by the output itself. The local derivative of leaky ReLU is its slope "
              "(1 where x > 0, a elsewhere), not its value: the saved output only tells which "
              "side of 0 each entry was on.",
              "Differentiate out = x (x > 0) and out = a x (x <= 0). Does either derivative "
              "depend on x?"),
    ),
)
