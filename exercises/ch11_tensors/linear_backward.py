"""A linear layer's backward by hand, out = x @ W + b: two matrix products and a sum over the
batch, each transpose placed by the shapes; checked against autograd on fresh shapes."""

import random

from autograder.backprop_harness import LAYOUTS, call, linear_problem, linear_report
from autograder.byhand import AUTOGRAD
from autograder.kinds import Choice, Table, Tensor
from gradtutor.key.exercise import Exercise, Wrong

from ._backprop import layer_autograd, layer_finite_diff, linear_grads

KIND = Table(rows=("x", "W", "b"), columns=(("proj", Tensor(shape=(3,))), ("layout", Choice(options=LAYOUTS))))


def _forward(x, W, b):
    return x @ W + b


def _with(**slips):
    return lambda seed, n, i, o: linear_report(
        lambda x, W, b, dout: linear_grads(x, W, b, dout, **slips), seed, n, i, o)


def reference(seed, n, i, o):
    x, W, b, dout = linear_problem(seed, n, i, o)
    grads = layer_autograd(_forward, [x, W, b], dout, 3)
    return linear_report(lambda *_: grads, seed, n, i, o)


def finite_diff(seed, n, i, o):
    x, W, b, dout = linear_problem(seed, n, i, o)
    return layer_finite_diff(lambda x_, W_, b_: sum(x_[:, k:k + 1] * W_[k] for k in range(W_.shape[0])) + b_,
                             [x, W, b], dout, ("x", "W", "b"), seed)


def draw(rng: random.Random) -> dict:
    # no axis of length 1 (a one-column matrix reads the same transposed) and no square matrix
    n, i = rng.randint(2, 8), rng.randint(2, 6)
    return {"seed": rng.randrange(10**6), "n": n, "i": i,
            "o": rng.choice([k for k in range(2, 8) if k not in (i, n)])}


EXERCISE = Exercise(
    title="A linear layer's backward, by hand",
    points=2,
    prompt=r"""
A linear layer on a batch: $\mathrm{out} = x W + b$, with $x$ of shape $N \times I$, $W$ of
shape $I \times O$ and $b$ of shape $O$ (added to every row). Write
`linear_backward(x, W, b, dout)` returning `(dx, dW, db)`, the gradients of $L$ given
`dout` $= \partial L / \partial\,\mathrm{out}$ ($N \times O$), **by hand**: tensor operations
only, no autograd. Write each gradient's shape first; the shapes place the transposes.

The grader runs `linear_report(linear_backward, seed, n, i, o)` on a fresh problem (here
`seed, n, i, o = {{seed}}, {{n}}, {{i}}, {{o}}`; when grading, other seeds **and other
shapes**) and compares each gradient with autograd's through three fixed random projections.
""",
    setup="""seed, n, i, o = {{seed}}, {{n}}, {{i}}, {{o}}
from autograder.backprop_harness import linear_problem, linear_report   # what the grader runs
x, W, b, dout = linear_problem(seed, n, i, o)   # one such problem, to try yours on""",
    answer="linear_backward",
    call=call("linear_report(linear_backward, seed, n, i, o)"),
    placeholder="def linear_backward(x, W, b, dout):\n    return ...  # dx, dW, db",
    solution="""def linear_backward(x, W, b, dout):
    dx = dout @ W.T          # (N x O) @ (O x I)
    dW = x.T @ dout          # (I x N) @ (N x O)
    db = dout.sum(0)         # b was broadcast over the N rows: their gradients add
    return dx, dW, db""",
    refuse=AUTOGRAD,
    kind=KIND,
    params={"seed": 0, "n": 5, "i": 3, "o": 2},
    hidden=({"seed": 7, "n": 4, "i": 2, "o": 3}, {"seed": 31, "n": 6, "i": 4, "o": 5}),
    draw=draw,
    reference=reference,
    analytic=_with(),
    finite_diff=finite_diff,
    wrong=(
        Wrong("matmul_transpose", _with(dW_t=True),
              "Your dW has the shape of W transposed (O × I): ∂L/∂W_ij collects x_ni · dout_nj "
              "over the batch, which is the product xᵀ · dout, of W's shape I × O.",
              "Write the shapes: which product of x (N × I) and dout (N × O) is I × O?"),
        Wrong("matmul_transpose", _with(dx_t=True),
              "Your dx has the shape of x transposed (I × N): ∂L/∂x_ni collects W_ij · dout_nj "
              "over j, one row per example, so dx is N × I like x.",
              "Write the shapes: which product of dout (N × O) and W (I × O) is N × I?"),
        Wrong("broadcast_sums", _with(db="mean"),
              "Your db is N times too small: b is added to every row (broadcast), so each row "
              "sends its gradient back to the same b, and they add; a mean divides by N once more.",
              "b was used N times in the forward pass. How do N uses combine in backward?"),
        Wrong("broadcast_sums", _with(db="keep"),
              "Your db keeps one row per example (N × O), but b has shape O: b was broadcast over "
              "the batch, and the gradients of its N copies add up into one.",
              "A gradient has the shape of its tensor. What reduces N rows to one?"),
        Wrong("mean_scales", _with(dW_mean=True),
              "Your dW is divided by N: the layer itself adds over the batch (each example's "
              "x_n dout_nᵀ is one term of the sum); any 1/N of a mean loss is already inside dout.",
              "Where would a 1/N come from inside a linear layer? Look at what dout already holds."),
    ),
)
