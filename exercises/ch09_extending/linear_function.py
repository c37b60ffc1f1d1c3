"""PyTorch's own LinearFunction (the "Extending PyTorch" note's example): out = x Wᵀ + b with
x (N, I), W (O, I), b (O,). Inputs of three shapes: backward returns one gradient per input,
each of its input's shape; the bias, broadcast over the batch, gets the sum over the batch."""

import random

import torch

from autograder.byhand import AUTOGRAD
from autograder.kinds import Bool, Table, Tensor
from gradtutor.key.exercise import Exercise, Wrong

from ._common import call, function_report, report_row

N, N_IN, N_OUT = 4, 3, 2  # all different, so a transposed gradient cannot pass for the right one
KIND = Table(rows=("report",), columns=(
    ("value", Tensor(shape=(N, N_OUT))), ("grad_x", Tensor(shape=(N, N_IN))), ("grad_y", Tensor(shape=(N_OUT, N_IN))),
    ("grad_z", Tensor(shape=(N_OUT,))), ("gradcheck", Bool()), ("gradgradcheck", Bool())))


class _Linear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, W, b):
        ctx.save_for_backward(x, W)
        return x.mm(W.t()) + b


class _BiasMean(_Linear):
    @staticmethod
    def backward(ctx, g):
        x, W = ctx.saved_tensors
        return g.mm(W), g.t().mm(x), g.mean(0)


class _BatchMean(_Linear):
    @staticmethod
    def backward(ctx, g):
        x, W = ctx.saved_tensors
        n = x.shape[0]
        return g.mm(W), g.t().mm(x) / n, g.sum(0) / n


class _Detached(_Linear):
    @staticmethod
    def backward(ctx, g):
        x, W = (t.detach() for t in ctx.saved_tensors)
        return g.mm(W), g.t().mm(x), g.sum(0)


def _tensors(x: list, W: list, b: list) -> list[torch.Tensor]:
    return [torch.tensor(v, dtype=torch.float64) for v in (x, W, b)]


def _run(apply):
    def value(x: list, W: list, b: list, g: list) -> dict:
        return function_report(apply, _tensors(x, W, b), torch.tensor(g, dtype=torch.float64))
    return value


def reference(x: list, W: list, b: list, g: list) -> dict:
    return _run(torch.nn.functional.linear)(x, W, b, g)


def _out(x: list, W: list, b: list) -> list:
    return [[sum(x[n][i] * W[o][i] for i in range(N_IN)) + b[o] for o in range(N_OUT)] for n in range(N)]


def analytic(x: list, W: list, b: list, g: list) -> dict:
    # L = Σ g ⊙ out: dL/dx = g W, dL/dW = gᵀ x, dL/db = Σ_n g[n] (b is added to every row)
    gx = [[sum(g[n][o] * W[o][i] for o in range(N_OUT)) for i in range(N_IN)] for n in range(N)]
    gW = [[sum(g[n][o] * x[n][i] for n in range(N)) for i in range(N_IN)] for o in range(N_OUT)]
    gb = [sum(g[n][o] for n in range(N)) for o in range(N_OUT)]
    return report_row(_out(x, W, b), {"grad_x": gx, "grad_y": gW, "grad_z": gb}, True)


def finite_diff(x: list, W: list, b: list, g: list, h: float = 1e-6) -> dict:
    def loss(x_, W_, b_) -> float:
        return sum(g[n][o] * v for n, row in enumerate(_out(x_, W_, b_)) for o, v in enumerate(row))

    def nudged(m: list, idx: tuple, d: float) -> list:
        out = [list(r) if isinstance(r, list) else r for r in m]
        if len(idx) == 2:
            out[idx[0]][idx[1]] += d
        else:
            out[idx[0]] += d
        return out

    def slope(which: int, idx: tuple) -> float:
        args_up, args_down = [x, W, b], [x, W, b]
        args_up[which] = nudged(args_up[which], idx, h)
        args_down[which] = nudged(args_down[which], idx, -h)
        return (loss(*args_up) - loss(*args_down)) / (2 * h)

    gx = [[slope(0, (n, i)) for i in range(N_IN)] for n in range(N)]
    gW = [[slope(1, (o, i)) for i in range(N_IN)] for o in range(N_OUT)]
    gb = [slope(2, (o,)) for o in range(N_OUT)]
    return report_row(_out(x, W, b), {"grad_x": gx, "grad_y": gW, "grad_z": gb}, True)


def draw(rng: random.Random) -> dict:
    def some(*shape: int) -> list:
        if len(shape) == 1:
            return [round(rng.uniform(-2, 2), 2) for _ in range(shape[0])]
        return [some(*shape[1:]) for _ in range(shape[0])]
    return {"x": some(N, N_IN), "W": some(N_OUT, N_IN), "b": some(N_OUT), "g": some(N, N_OUT)}


EXERCISE = Exercise(
    title="Inputs of different shapes: a linear layer",
    prompt=r"""
PyTorch's note *Extending PyTorch* builds its example Function from `nn.Linear`:
$\mathrm{out} = x W^\top + b$ for a batch `x` of shape (N, I), a weight `W` of shape (O, I) and a
bias `b` of shape (O,), which broadcasting adds to every row of $x W^\top$.

Write `Linear`, a `torch.autograd.Function` with `forward(ctx, x, W, b)` and a `backward` you
derive **by hand** that returns the three gradients in the order of `forward`'s inputs, each of
its own input's shape. Build `backward` from torch operations on the saved inputs, so that
`gradgradcheck` passes too.

The grader runs `function_report(Linear.apply, [x, W, b], g)` with `x = {{x}}`, `W = {{W}}`,
`b = {{b}}` and `g = {{g}}` (the gradient arriving at the output, shape (N, O)), and at fresh
inputs; its rows `grad_x`, `grad_y`, `grad_z` are the gradients of `x`, `W` and `b`. It compares
with `torch.nn.functional.linear(x, W, b)`.
""",
    setup="""x = torch.tensor({{x}}, dtype=torch.float64)   # (N, I): a batch of N inputs
W = torch.tensor({{W}}, dtype=torch.float64)   # (O, I)
b = torch.tensor({{b}}, dtype=torch.float64)   # (O,)
g = torch.tensor({{g}}, dtype=torch.float64)   # (N, O): the gradient arriving at the output
from autograder.harness import function_report   # what the grader runs""",
    answer="Linear",
    refuse=AUTOGRAD,  # the prompt says: backward derived by hand
    call=call("function_report(Linear.apply, [x, W, b], g)"),
    placeholder="Linear = ...  # replace with your class Linear(torch.autograd.Function)",
    solution="""class Linear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, W, b):
        ctx.save_for_backward(x, W)
        return x.mm(W.t()) + b            # b is broadcast over the N rows

    @staticmethod
    def backward(ctx, g):
        x, W = ctx.saved_tensors
        grad_x = grad_W = grad_b = None
        if ctx.needs_input_grad[0]:
            grad_x = g.mm(W)              # (N, O) @ (O, I): x's shape
        if ctx.needs_input_grad[1]:
            grad_W = g.t().mm(x)          # (O, N) @ (N, I): W's shape, a sum over the batch
        if ctx.needs_input_grad[2]:
            grad_b = g.sum(0)             # b was used by every row: the rows' gradients add
        return grad_x, grad_W, grad_b""",
    kind=KIND,
    params={"x": [[1.0, -0.5, 2.0], [0.0, 1.5, -1.0], [2.0, 1.0, 0.5], [-1.5, 0.5, 1.0]],
            "W": [[0.5, -1.0, 0.25], [1.5, 0.5, -0.5]], "b": [0.1, -0.2],
            "g": [[1.0, -0.5], [0.5, 2.0], [-1.0, 1.0], [1.5, 0.5]]},
    hidden=({"x": [[0.5, 1.0, -1.0], [2.0, -0.5, 0.0], [-1.0, 1.5, 1.0], [1.0, 1.0, -2.0]],
             "W": [[-1.0, 0.5, 2.0], [0.25, 1.0, -0.5]], "b": [-0.5, 0.3],
             "g": [[-1.0, 0.5], [2.0, 1.0], [0.5, -1.5], [1.0, 1.0]]},
            {"x": [[-2.0, 0.5, 1.0], [1.0, 0.0, 0.5], [0.5, -1.0, 1.5], [1.5, 2.0, -0.5]],
             "W": [[1.0, 1.0, -1.0], [-0.5, 2.0, 0.5]], "b": [1.0, 0.0],
             "g": [[0.5, 1.5], [-1.0, -0.5], [2.0, 0.5], [-0.5, 1.0]]}),
    draw=draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("broadcast_sums", _run(_BiasMean.apply),
              "grad_x and the weight's gradient are right; the bias's is the mean of g over the "
              "batch. The forward pass adds the same b to each of the N rows, so b is used N "
              "times and its gradient is the sum of the N rows' gradients, as at any fan-out. "
              "Nothing in the forward pass divides by N.",
              "How many times is each entry of b used in the forward pass? What happens to the "
              "gradients of several uses?"),
        Wrong("mean_scales", _run(_BatchMean.apply),
              "grad_x is right; the weight's and the bias's gradients are divided by N, the "
              "batch size. The output here is x Wᵀ + b, not a mean over the batch: each sample "
              "contributes its whole gradient, and the batch's contributions add. A 1/N comes "
              "only from a mean in the loss, and that arrives already inside g.",
              "Where in out = x Wᵀ + b would a division by N come from?"),
        Wrong("backward_not_differentiable", _run(_Detached.apply),
              "Values and gradients are right, but gradgradcheck fails. backward computes from "
              "x.detach() and W.detach(), so the gradients it returns have no graph back to x "
              "and W: the derivative of grad_x = g W with respect to W is lost, for example. "
              "Inside backward, autograd records the torch operations you run on the saved "
              "tensors, as long as you do not cut them off.",
              "Use the saved tensors themselves in backward."),
    ),
)
