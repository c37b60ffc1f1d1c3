"""Batch normalisation's backward by hand (training mode, biased variance): dx has three terms,
one for each path from x to the output; checked against autograd on fresh shapes and seeds."""

import random

import torch.nn.functional as F

from autograder.backprop_harness import BN_EPS, LAYOUTS, batchnorm_problem, batchnorm_report, call
from autograder.byhand import AUTOGRAD
from autograder.kinds import Choice, Table, Tensor
from gradtutor.key.exercise import Exercise, Wrong

from ._backprop import bn_grads, layer_autograd, layer_finite_diff

ROWS = ("x", "gamma", "beta")
KIND = Table(rows=ROWS, columns=(("proj", Tensor(shape=(3,))), ("layout", Choice(options=LAYOUTS))))


def _forward(x, gamma, beta):
    return F.batch_norm(x, None, None, gamma, beta, training=True, eps=BN_EPS)


def _plain_forward(x, gamma, beta):
    centred = x - x.mean(0)
    return gamma * centred / ((centred ** 2).mean(0) + BN_EPS).sqrt() + beta


def _with(**slips):
    return lambda seed, n, h: batchnorm_report(
        lambda x, gamma, beta, dout, eps: bn_grads(x, gamma, beta, dout, eps, **slips), seed, n, h)


def reference(seed, n, h):
    x, gamma, beta, dout = batchnorm_problem(seed, n, h)
    grads = layer_autograd(_forward, [x, gamma, beta], dout, 3)
    return batchnorm_report(lambda *_: grads, seed, n, h)


def finite_diff(seed, n, h):
    x, gamma, beta, dout = batchnorm_problem(seed, n, h)
    return layer_finite_diff(_plain_forward, [x, gamma, beta], dout, ROWS, seed)


def draw(rng: random.Random) -> dict:
    return {"seed": rng.randrange(10**6), "n": rng.randint(3, 16), "h": rng.randint(2, 6)}


EXERCISE = Exercise(
    title="Batch norm's backward, by hand",
    points=3,
    prompt=r"""
A batch of $N$ rows $x$ ($N \times H$) through batch normalisation in training mode, column by
column ($\epsilon$ = `eps`, the same as `nn.BatchNorm1d`):
$$\mu = \frac1N\sum_n x_n,\qquad \sigma^2 = \frac1N\sum_n (x_n - \mu)^2,\qquad
\hat x_n = \frac{x_n - \mu}{\sqrt{\sigma^2 + \epsilon}},\qquad y_n = \gamma\,\hat x_n + \beta .$$
Write `batchnorm_backward(x, gamma, beta, dout, eps)` returning `(dx, dgamma, dbeta)`, the
gradients of $L$ given `dout` $= \partial L / \partial y$, **by hand**: tensor operations only,
no autograd. Go one node at a time ($\hat x$, then $\sigma^2$, then $\mu$, then $x$); every
path from $x_n$ to the output contributes to $\partial L/\partial x_n$.

The grader runs `batchnorm_report(batchnorm_backward, seed, n, h)` on a fresh problem of those
sizes (here `seed, n, h = {{seed}}, {{n}}, {{h}}`; when grading, other seeds **and other
shapes**) and compares each gradient with autograd's through three fixed random projections.
""",
    setup="""seed, n, h = {{seed}}, {{n}}, {{h}}
from autograder.backprop_harness import BN_EPS, batchnorm_problem, batchnorm_report   # what the grader runs
x, gamma, beta, dout = batchnorm_problem(seed, n, h)   # one such problem, to try yours on""",
    answer="batchnorm_backward",
    call=call("batchnorm_report(batchnorm_backward, seed, n, h)"),
    placeholder="def batchnorm_backward(x, gamma, beta, dout, eps):\n    return ...  # dx, dgamma, dbeta",
    solution="""def batchnorm_backward(x, gamma, beta, dout, eps):
    N = x.shape[0]
    mu = x.mean(0)
    xc = x - mu
    var = (xc ** 2).mean(0)                  # the biased variance: divide by N
    inv = 1 / torch.sqrt(var + eps)
    xhat = xc * inv
    dbeta = dout.sum(0)                      # beta is broadcast over the batch
    dgamma = (dout * xhat).sum(0)
    dxhat = dout * gamma
    dvar = (dxhat * xc).sum(0) * -0.5 * inv ** 3
    dxc = dxhat * inv + dvar * 2 * xc / N    # xc reaches the output directly and through var
    dmu = -dxc.sum(0)
    dx = dxc + dmu / N                       # ... and x reaches it directly and through mu
    return dx, dgamma, dbeta""",
    refuse=AUTOGRAD,
    kind=KIND,
    params={"seed": 0, "n": 8, "h": 3},
    hidden=({"seed": 7, "n": 5, "h": 4}, {"seed": 31, "n": 12, "h": 2}),
    draw=draw,
    reference=reference,
    analytic=_with(),
    finite_diff=finite_diff,
    wrong=(
        Wrong("bn_stats_constant", _with(paths="none"),
              "Your dx is dout·γ/√(σ²+ε): it treats μ and σ² as constants. They are computed from "
              "the batch, so each x_n moves them, and through them every output of its column: "
              "two more paths, two more terms. (dγ and dβ are right.)",
              "Draw the graph: how many paths lead from x_n to y_m? Follow the ones through μ and σ²."),
        Wrong("bn_term_dropped", _with(paths="mean"),
              "Your dx has the direct term and the one through μ, but not the one through σ²: "
              "x_n moves the variance too, and the variance scales every x̂ of its column.",
              "Differentiate σ² = mean((x − μ)²) with respect to x_n, and send ∂L/∂σ² back along it."),
        Wrong("bn_term_dropped", _with(paths="var"),
              "Your dx has the direct term and the one through σ², but not the one through μ: "
              "every x_n moves the mean, and the mean is subtracted from every row of its column.",
              "What does ∂L/∂μ collect from the N rows, and how does it reach each x_n?"),
        Wrong("bn_bessel", _with(ddof=1),
              "You normalised with the unbiased variance (dividing by N − 1, torch.var's default): "
              "batch norm in training divides by N, so your x̂, and every gradient built on it, "
              "is off by a factor near √((N−1)/N).",
              "Which variance does the forward pass in the prompt use: torch.var(x, 0), or a mean "
              "of squares?"),
        Wrong("bn_bessel", _with(ddof=1, consistent=True),
              "You derived the backward of a batch norm that divides by N − 1 (torch.var's "
              "default, unbiased). Batch norm in training divides by N: the x̂ the forward "
              "pass makes, and so every gradient, differ.",
              "Which variance does the forward pass in the prompt use: torch.var(x, 0), or a mean "
              "of squares?"),
        Wrong("bn_mean_factor", _with(means=False),
              "Your terms through μ and σ² use sums over the batch where the derivative gives "
              "means: μ and σ² each carry a 1/N, so ∂μ/∂x_n = 1/N, and the 1/N stays in "
              "the gradient.",
              "Differentiate μ = (1/N) Σ x_m with respect to x_n: what factor is left?"),
        Wrong("chain_rule_dropped", _with(gamma_in=False),
              "Your dx leaves γ out: y = γ·x̂ + β, so the gradient that reaches x̂ is dout·γ, and "
              "every term of dx is built from it. (dγ and dβ are right.)",
              "What is ∂y/∂x̂? Multiply it in before you go further down."),
        Wrong("bn_dgamma_xhat", _with(dgamma_x=True),
              "Your dγ sums dout·x, but γ multiplies the normalised x̂, not x: ∂y_n/∂γ is x̂_n.",
              "Which tensor does γ multiply in the forward pass?"),
    ),
)
