"""A custom Function that works under torch.func: log-sum-exp of a vector, lse(x) = log Σ e^{x_i},
with forward(x) apart from setup_context (what every torch.func transform needs), a backward
derived by hand, g · softmax(x) = g · e^{x − lse(x)}, built from torch operations on saved inputs
and outputs (so reverse over reverse differentiates it), and a vmap rule: generate_vmap_rule =
True, or a vmap staticmethod."""

import math
import random

import torch

from autograder.byhand import AUTOGRAD
from autograder.harness import transforms_report
from autograder.kinds import Number, Table, Tensor
from gradtutor.key.exercise import Exercise, Wrong

from ._common import call

N, B = 3, 2  # one vector of N entries; a batch of B of them for vmap
KIND = Table(rows=("report",), columns=(
    ("value", Number()), ("vjp", Tensor(shape=(N,))), ("batched", Tensor(shape=(B,))),
    ("per_sample_grad", Tensor(shape=(B, N))), ("hessian", Tensor(shape=(N, N)))))


class _Lse(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        m = x.max()
        return m + torch.log(torch.exp(x - m).sum())

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0], output)

    @staticmethod
    def backward(ctx, g):
        x, out = ctx.saved_tensors
        return g * torch.exp(x - out)


class _CtxStyle(torch.autograd.Function):  # forward(ctx, x): the old style
    generate_vmap_rule = True

    @staticmethod
    def forward(ctx, x):
        out = torch.logsumexp(x, 0)
        ctx.save_for_backward(x, out)
        return out

    backward = staticmethod(_Lse.backward)


class _NoVmapRule(_Lse):
    generate_vmap_rule = False


class _SavedSoftmax(_Lse):  # an intermediate computed in setup_context: a constant to autograd
    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(torch.softmax(inputs[0], 0))

    @staticmethod
    def backward(ctx, g):
        (p,) = ctx.saved_tensors
        return g * p


class _NoLog(_Lse):  # d log(s)/dx taken as ds/dx: the 1/s of the log is lost
    @staticmethod
    def backward(ctx, g):
        x, out = ctx.saved_tensors
        return g * torch.exp(x)


class _NoSeed(_Lse):  # the local derivative alone: the gradient arriving at the output unused
    @staticmethod
    def backward(ctx, g):
        x, out = ctx.saved_tensors
        return torch.exp(x - out)


def _run(apply):
    def value(x: list, X: list, g: float) -> dict:
        return transforms_report(apply, torch.tensor(x, dtype=torch.float64),
                                 torch.tensor(X, dtype=torch.float64), g)
    return value


def reference(x: list, X: list, g: float) -> dict:
    return _run(lambda t: torch.logsumexp(t, -1))(x, X, g)  # torch's own, under the same transforms


def _lse(v: list) -> float:
    m = max(v)
    return m + math.log(sum(math.exp(a - m) for a in v))


def _softmax(v: list) -> list:
    s = _lse(v)
    return [math.exp(a - s) for a in v]


def analytic(x: list, X: list, g: float) -> dict:
    # d lse/dx_i = softmax_i; d² lse/dx_i dx_j = p_i [i = j] − p_i p_j
    p = _softmax(x)
    hessian = [[p[i] * (i == j) - p[i] * p[j] for j in range(N)] for i in range(N)]
    return {"report": {"value": _lse(x), "vjp": [g * q for q in p], "batched": [_lse(r) for r in X],
                       "per_sample_grad": [_softmax(r) for r in X], "hessian": hessian}}


def _nudged(v: list, steps: dict[int, float]) -> list:
    return [a + steps.get(i, 0.0) for i, a in enumerate(v)]


def _slopes(v: list, h: float = 1e-6) -> list:
    return [(_lse(_nudged(v, {i: h})) - _lse(_nudged(v, {i: -h}))) / (2 * h) for i in range(N)]


def _second(v: list, i: int, j: int, h: float = 1e-4) -> float:
    corners = [(1, 1, 1), (1, -1, -1), (-1, 1, -1), (-1, -1, 1)]
    total = 0.0
    for si, sj, sign in corners:
        steps = {i: si * h}
        steps[j] = steps.get(j, 0.0) + sj * h
        total += sign * _lse(_nudged(v, steps))
    return total / (4 * h * h)


def finite_diff(x: list, X: list, g: float) -> dict:
    return {"report": {"value": _lse(x), "vjp": [g * s for s in _slopes(x)], "batched": [_lse(r) for r in X],
                       "per_sample_grad": [_slopes(r) for r in X],
                       "hessian": [[_second(x, i, j) for j in range(N)] for i in range(N)]}}


def draw(rng: random.Random) -> dict:
    def some() -> list:
        return [round(rng.uniform(-2.5, 2.5), 2) for _ in range(N)]
    return {"x": some(), "X": [some() for _ in range(B)], "g": rng.choice((-1, 1)) * round(rng.uniform(0.5, 3), 2)}


EXERCISE = Exercise(
    title="A Function that torch.func can batch: log-sum-exp",
    prompt=r"""
Write `LogSumExp`, a `torch.autograd.Function` for
$\mathrm{lse}(x) = \log \sum_i e^{x_i}$ of a vector `x` (one number out), with a `backward` you
derive **by hand**, that works under the `torch.func` transforms: `torch.func.vjp`,
`torch.func.vmap`, and their compositions `vmap(grad(...))` (one gradient per sample) and
`jacrev(jacrev(...))` (the matrix of second derivatives, reverse over reverse).

The grader runs `transforms_report(LogSumExp.apply, x, X, g)` with `x = {{x}}`, the batch
`X = {{X}}` (one vector per row), the gradient arriving at the output `g = {{g}}`, and at fresh
inputs. Its row holds `LogSumExp.apply(x)`, the vector-Jacobian product at `g`
(`torch.func.vjp`), `vmap` over the rows of `X`, `vmap(grad(...))` over them, and
`jacrev(jacrev(...))` at `x`; an entry is `None` where that transform raised. It compares with
`torch.logsumexp(x, -1)` under the same transforms.
""",
    setup="""x = torch.tensor({{x}}, dtype=torch.float64)
X = torch.tensor({{X}}, dtype=torch.float64)   # a batch: one vector per row
g = {{g}}                                       # the gradient arriving at the output
from autograder.harness import transforms_report   # what the grader runs""",
    answer="LogSumExp",
    refuse=AUTOGRAD,  # the prompt says: backward derived by hand
    call=call("transforms_report(LogSumExp.apply, x, X, g)"),
    placeholder="LogSumExp = ...  # replace with your class LogSumExp(torch.autograd.Function)",
    solution="""class LogSumExp(torch.autograd.Function):
    generate_vmap_rule = True             # forward, setup_context, backward: torch operations only

    @staticmethod
    def forward(x):                       # no ctx: what torch.func needs
        m = x.max()                       # shifted, so that exp never overflows
        return m + torch.log(torch.exp(x - m).sum())

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x, output)  # an input and the output: double backward sees both

    @staticmethod
    def backward(ctx, g):
        x, out = ctx.saved_tensors
        return g * torch.exp(x - out)     # softmax(x), times the gradient arriving""",
    kind=KIND,
    params={"x": [0.5, -1.0, 2.0], "X": [[1.0, 0.0, -1.0], [2.0, 2.5, -0.5]], "g": 1.5},
    hidden=({"x": [-0.3, 1.2, 0.4], "X": [[0.5, -2.0, 1.0], [-1.5, 0.3, 0.8]], "g": -2.0},
            {"x": [1.5, 1.0, -2.0], "X": [[-0.5, 1.5, 2.0], [0.0, -1.0, 1.0]], "g": 0.75}),
    draw=draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("func_setup_context", _run(_CtxStyle.apply),
              "LogSumExp.apply(x) is right, but every torch.func transform raised: your forward "
              "takes ctx. The torch.func transforms accept only the other style, a forward "
              "without ctx and a separate setup_context(ctx, inputs, output) that saves what "
              "backward needs (Extending torch.func: \"Only the latter is supported with "
              "function transforms\"). Plain backward() never needed that, so it worked.",
              "Which of the two ways of writing a Function does Extending torch.func support?"),
        Wrong("vmap_rule", _run(_NoVmapRule.apply),
              "The value, the vjp and jacrev(jacrev(...)) are right, but vmap raised, and so did "
              "vmap(grad(...)): torch.func has no rule for batching your Function. vmap needs "
              "one: generate_vmap_rule = True on the class (when forward, setup_context and "
              "backward use only torch operations), or a vmap staticmethod that works. jacrev "
              "only vmaps over your backward, which is why it ran.",
              "Read the section of Extending torch.func on torch.vmap support."),
        Wrong("saved_intermediate", _run(_SavedSoftmax.apply),
              "Value, vjp and the batched values are right, but the matrix of second "
              "derivatives is all zeros: your backward multiplies by a tensor that autograd sees "
              "as a constant, either computed from x in setup_context or forward (neither an "
              "input nor an output) or detached. Differentiating the backward once more then "
              "finds nothing that depends on x. Compute it in backward from the saved input and "
              "output themselves.",
              "What does your backward's result depend on, as autograd sees it?"),
        Wrong("chain_rule_dropped", _run(_NoLog.apply),
              "The value is right, but the gradient is e^x, the derivative of the sum inside "
              "the log only. The log's own derivative, 1/Σ e^x, is a factor of the chain rule "
              "too.",
              "Differentiate log(s(x)) with the chain rule: which two factors appear?"),
        Wrong("local_gradient_only", _run(_NoSeed.apply),
              "The value, the batched values and the per-sample gradients are right (there the "
              "gradient arriving at the output is 1), but the vjp at g and the second "
              "derivatives are not: backward returned the local derivative alone, without the "
              "gradient that arrives at the output. backward receives it to multiply by it; "
              "jacrev feeds a different one for each row it computes.",
              "What is backward's second argument for?"),
    ),
)
