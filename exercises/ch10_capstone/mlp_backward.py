"""The backward of cross-entropy ← linear ← ReLU ← linear, by hand (CS231n's and "backprop
ninja"'s exercise), checked against autograd on fresh shapes and seeds."""

import random

import torch

from autograder.byhand import AUTOGRAD
from autograder.harness import directions, mlp_problem
from autograder.kinds import Table, Tensor
from gradtutor.key.exercise import Exercise, Wrong

from ._common import MLP_NAMES, call, mlp_backward_report, mlp_grads, mlp_loss

KIND = Table(rows=MLP_NAMES, columns=(("proj", Tensor(shape=(3,))),))


def _run(**slips):
    return lambda seed, n, d, h, c: mlp_backward_report(
        lambda *a: mlp_grads(*a, **slips), seed, n, d, h, c)


def reference(seed, n, d, h, c):
    def autograd_backward(X, y, *params):
        with torch.enable_grad():
            leaves = [p.clone().requires_grad_(True) for p in params]
            return torch.autograd.grad(mlp_loss(X, y, *leaves), leaves)
    return mlp_backward_report(autograd_backward, seed, n, d, h, c)


def finite_diff(seed, n, d, h, c, eps=1e-6):
    """Directional central differences: (L(θ + εr) − L(θ − εr)) / 2ε is ⟨∇L, r⟩."""
    X, y, params = mlp_problem(seed, n, d, h, c)
    names = list(params)
    dirs = directions(seed, [tuple(p.shape) for p in params.values()])
    table = {}
    for i, name in enumerate(names):
        proj = []
        for r in dirs[i]:
            up = [p + eps * r if j == i else p for j, p in enumerate(params.values())]
            down = [p - eps * r if j == i else p for j, p in enumerate(params.values())]
            proj.append((mlp_loss(X, y, *up) - mlp_loss(X, y, *down)) / (2 * eps))
        table[name] = {"proj": torch.stack(proj)}
    return table


def draw(rng: random.Random) -> dict:
    return {"seed": rng.randrange(10**6), "n": rng.randint(3, 12), "d": rng.randint(1, 5),
            "h": rng.randint(2, 8), "c": rng.randint(2, 5)}


EXERCISE = Exercise(
    title="The MLP's backward, by hand",
    points=3,
    prompt=r"""
A batch of $N$ inputs $X$ ($N \times D$) with labels $y$, and a two-layer network
$$Z = X W_1 + b_1,\quad H = \mathrm{relu}(Z),\quad S = H W_2 + b_2,\quad
L = \frac{1}{N}\sum_{n} \Big(-S_{n, y_n} + \log \sum_j e^{S_{nj}}\Big),$$
with $W_1$ of shape $D \times h$ and $W_2$ of shape $h \times C$ ($h$ hidden units) (so `torch.nn.functional.cross_entropy(S, y)`
is $L$).

Write `mlp_backward(X, y, W1, b1, W2, b2)` returning `(dW1, db1, dW2, db2)`, the gradients of
$L$, **by hand**: tensor operations only, no autograd (the grader runs it under
`torch.no_grad()`). Go one node at a time, from $\partial L/\partial S$ down; check each shape
against its tensor's.

The grader runs `mlp_backward_report(mlp_backward, seed, n, d, h, c)` on a fresh problem of
those sizes (here `seed, n, d, h, c = {{seed}}, {{n}}, {{d}}, {{h}}, {{c}}`; when grading, other
seeds **and other shapes**) and compares each gradient with autograd's through three fixed
random projections.
""",
    setup="""seed, n, d, h, c = {{seed}}, {{n}}, {{d}}, {{h}}, {{c}}
from autograder.harness import mlp_backward_report, mlp_problem   # what the grader runs
X, y, params = mlp_problem(seed, n, d, h, c)   # one such problem, to try yours on""",
    answer="mlp_backward",
    call=call("mlp_backward_report(mlp_backward, seed, n, d, h, c)"),
    placeholder="def mlp_backward(X, y, W1, b1, W2, b2):\n    return ...  # dW1, db1, dW2, db2",
    solution="""def mlp_backward(X, y, W1, b1, W2, b2):
    N = X.shape[0]
    Z = X @ W1 + b1
    H = Z.clamp(min=0)
    S = H @ W2 + b2
    P = torch.softmax(S, dim=1)
    dS = P.clone()
    dS[torch.arange(N), y] -= 1        # softmax minus one-hot ...
    dS /= N                            # ... for the mean over the batch
    dW2 = H.T @ dS                     # (H x N) @ (N x C)
    db2 = dS.sum(0)                    # b2 was broadcast over the batch: sum it back
    dH = dS @ W2.T
    dZ = dH * (Z > 0)                  # relu lets the gradient through where it was active
    dW1 = X.T @ dZ
    db1 = dZ.sum(0)
    return dW1, db1, dW2, db2""",
    refuse=AUTOGRAD,
    kind=KIND,
    params={"seed": 0, "n": 6, "d": 2, "h": 5, "c": 3},
    hidden=({"seed": 7, "n": 9, "d": 3, "h": 4, "c": 2}, {"seed": 31, "n": 12, "d": 4, "h": 7, "c": 4}),
    draw=draw,
    reference=reference,
    analytic=_run(),
    finite_diff=finite_diff,
    wrong=(
        Wrong("xent_mean_dropped", _run(mean=False),
              "Every gradient is N times too large: the loss is a mean over the batch, so ∂L/∂S "
              "carries a factor 1/N that your backward left out (it is the gradient of the summed "
              "loss).",
              "L averages over N examples. Where does that 1/N go in ∂L/∂S?"),
        Wrong("xent_softmax_only", _run(onehot=False),
              "Your ∂L/∂S is softmax(S)/N: the -1 at each example's true class is missing, so "
              "the gradient pushes every logit down and none up.",
              "Differentiate -S[n, y_n] with respect to S: where is it not zero?"),
        Wrong("relu_mask_missing", _run(mask=False),
              "The second layer's gradients are right, the first layer's are not: the gradient "
              "went back through the ReLU unchanged. relu'(z) is 0 where z < 0, so ∂L/∂Z is "
              "∂L/∂H only where the unit was active.",
              "What is the derivative of relu at a negative input?"),
        Wrong("broadcast_sums", _run(bias_mean=True),
              "db2 is N times too small: b2 is added to every row of the batch (broadcast), so "
              "its gradient is the sum of ∂L/∂S over the rows, and the 1/N of the mean is "
              "already inside ∂L/∂S.",
              "b2 was used N times in the forward pass. How do N uses combine in backward?"),
    ),
)
