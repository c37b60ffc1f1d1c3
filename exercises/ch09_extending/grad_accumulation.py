"""Gradient accumulation: k micro-batches, each loss divided by k, one backward each, no
zero_grad in between, give the full batch's mean-squared-error gradient. The student writes
the loop; the grader calls it on fresh data."""

import random

import torch

from autograder.kinds import Tensor
from gradtutor.key.exercise import Exercise, Wrong
from gradtutor.key.numeric import gradient

D = 2


def _tensors(X: list, Y: list) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.tensor(X, dtype=torch.float64), torch.tensor(Y, dtype=torch.float64)


def reference(w: list, X: list, Y: list, k: int) -> torch.Tensor:
    tX, tY = _tensors(X, Y)
    tw = torch.tensor(w, dtype=torch.float64, requires_grad=True)
    torch.nn.functional.mse_loss(tX @ tw, tY).backward()  # the whole batch at once
    return tw.grad


def _mse_grad(w: list, X: list, Y: list) -> list[float]:
    n = len(X)
    residual = [sum(a * b for a, b in zip(row, w, strict=True)) - y for row, y in zip(X, Y, strict=True)]
    return [2 / n * sum(X[i][j] * residual[i] for i in range(n)) for j in range(D)]


def analytic(w: list, X: list, Y: list, k: int) -> list[float]:
    return _mse_grad(w, X, Y)


def finite_diff(w: list, X: list, Y: list, k: int) -> list[float]:
    def mse(*wv: float) -> float:
        return sum((sum(a * b for a, b in zip(row, wv, strict=True)) - y) ** 2
                   for row, y in zip(X, Y, strict=True)) / len(X)
    return gradient(mse, w)


def _last_micro_batch(w: list, X: list, Y: list, k: int) -> list[float]:
    size = len(X) // k
    return [v / k for v in _mse_grad(w, X[-size:], Y[-size:])]


def draw(rng: random.Random) -> dict:
    n = 6
    return {"w": [rng.uniform(-1, 1) for _ in range(D)],
            "X": [[rng.uniform(-2, 2) for _ in range(D)] for _ in range(n)],
            "Y": [rng.uniform(-2, 2) for _ in range(n)], "k": rng.choice((2, 3, 6))}


EXERCISE = Exercise(
    title="Accumulate gradients over micro-batches",
    prompt=r"""
A batch of 6 examples does not fit in memory, so you split it into `k` equal micro-batches
and accumulate. Write `accumulated_grad(w, X, Y, k)`: for each micro-batch, compute the
mean-squared error of the linear model `X_mb @ w` against `Y_mb`
(`torch.nn.functional.mse_loss`), scale it so that the sum over micro-batches equals the
full batch's mean loss, and call `backward()`. Return `w.grad` at the end. With autograd;
`w` is a fresh leaf with `w.grad` equal to `None`.

The grader calls `accumulated_grad(w, X, Y, k)` with the setup's values (`k = {{k}}`) and at
fresh ones (other `k` too), and compares with the gradient of the full batch's mean loss.
""",
    setup="""X = torch.tensor({{X}}, dtype=torch.float64)
Y = torch.tensor({{Y}}, dtype=torch.float64)
k = {{k}}
w = torch.tensor({{w}}, dtype=torch.float64, requires_grad=True)""",
    answer="accumulated_grad",
    call="accumulated_grad(w.detach().clone().requires_grad_(True), X.clone(), Y.clone(), k)",
    placeholder="def accumulated_grad(w, X, Y, k):\n    return ...",
    solution="""def accumulated_grad(w, X, Y, k):
    for X_mb, Y_mb in zip(X.chunk(k), Y.chunk(k)):
        loss = torch.nn.functional.mse_loss(X_mb @ w, Y_mb) / k   # each micro-batch is 1/k of the batch
        loss.backward()                                            # adds into w.grad
    return w.grad""",
    kind=Tensor(shape=(D,)),
    params={"w": [0.5, -1.0], "X": [[1.0, 2.0], [0.0, 1.0], [2.0, -1.0], [1.0, 1.0], [-1.0, 0.5], [0.5, 0.0]],
            "Y": [1.0, -1.0, 2.0, 0.0, 1.5, -0.5], "k": 3},
    hidden=({"w": [-0.25, 0.75], "X": [[2.0, 1.0], [1.0, -1.0], [0.5, 0.5], [-1.0, 2.0], [0.0, 1.0], [1.5, -0.5]],
             "Y": [0.5, 1.0, -1.0, 2.0, 0.0, 1.0], "k": 2},
            {"w": [1.0, 0.5], "X": [[0.5, -1.0], [1.0, 2.0], [-2.0, 0.5], [1.0, 0.0], [0.5, 1.5], [-1.0, -1.0]],
             "Y": [-1.0, 2.0, 0.5, 1.0, -0.5, 0.0], "k": 6}),
    draw=draw,
    reference=reference,
    analytic=analytic,
    finite_diff=finite_diff,
    wrong=(
        Wrong("accumulation_not_averaged", lambda w, X, Y, k: [k * v for v in _mse_grad(w, X, Y)],
              "This is k times the full-batch gradient: each micro-batch's mean loss was "
              "backpropagated without dividing by k. The gradients of k means add up to k "
              "times the gradient of their average, which silently multiplies the learning "
              "rate by k.",
              "The full-batch mean is the average of the k micro-batch means. What do you "
              "divide each micro-batch loss by?"),
        Wrong("accumulation", _last_micro_batch,
              "This is only the last micro-batch's share: w.grad was reset inside the loop "
              "(zero_grad, or w.grad = None, before each backward), so every micro-batch "
              "overwrote the one before. Accumulation needs the gradients to add up.",
              "Zero the gradient once, before the first micro-batch, not inside the loop."),
    ),
)
