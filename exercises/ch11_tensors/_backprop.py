"""Chapter 11, part 2's trusted helpers (the leading underscore keeps the registry away): each
layer's backward written by hand, with the classic slips a keyword switches on (the wrong answers
of the units run through the same report as a student's function), the whole network's backward
built from them, the autograd witness (``retain_grad()`` on every intermediate) and the
finite-difference witness (a directional central difference, nudging one tensor of the forward
pass at a time). What the grader runs on a student's code lives in
``autograder.backprop_harness`` (student side)."""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

from autograder.backprop_harness import BN_EPS, NET_ROWS, STEPS, net_forward, net_problem, net_report
from autograder.harness import directions

F64 = torch.float64


# ---------------------------------------------------------------- the layers, by hand

def xent_grad(logits, y, *, mean: bool = True, onehot: bool = True, dim: int = 1):
    """∂L/∂logits of the mean cross-entropy: (softmax − one-hot) / N."""
    p = torch.softmax(logits, dim=dim)
    g = p - F.one_hot(y, logits.shape[1]).to(p.dtype) if onehot else p
    return g / logits.shape[0] if mean else g


def linear_grads(x, W, b, dout, *, dx_t: bool = False, dW_t: bool = False, db: str = "sum",
                 dW_mean: bool = False):
    """dx, dW, db of out = x @ W + b; ``dx_t``/``dW_t`` give the transposed layouts, ``db``
    "mean" or "keep" (no sum over the batch) the bias slips, ``dW_mean`` a dW divided by N."""
    dx = W @ dout.T if dx_t else dout @ W.T
    dW = dout.T @ x if dW_t else x.T @ dout
    dW = dW / x.shape[0] if dW_mean else dW
    dbias = {"sum": dout.sum(0), "mean": dout.mean(0), "keep": dout}[db]
    return dx, dW, dbias


def bn_grads(x, gamma, beta, dout, eps=BN_EPS, *, paths: str = "both", ddof: int = 0,
             consistent: bool = False, means: bool = True, dgamma_x: bool = False, gamma_in: bool = True):
    """dx, dgamma, dbeta of training-mode batch norm. ``paths``: "both" (right), "mean" (the
    variance path dropped), "var" (the mean path dropped), "none" (mean and variance held
    constant); ``ddof=1`` normalises with the unbiased variance (``consistent``: and derives the
    backward for it); ``means=False`` sums where the backward takes means over the batch;
    ``dgamma_x`` multiplies dout by x instead of x̂ for dgamma; ``gamma_in=False`` leaves γ out
    of dx."""
    n = x.shape[0]
    mu = x.mean(0)
    var = ((x - mu) ** 2).sum(0) / (n - ddof)
    std = torch.sqrt(var + eps)
    xhat = (x - mu) / std
    dxhat = dout * gamma if gamma_in else dout
    avg = (lambda t: t.mean(0)) if means else (lambda t: t.sum(0))
    var_avg = (lambda t: t.sum(0) / (n - 1)) if consistent else avg
    dx = dxhat
    if paths in ("both", "var"):
        dx = dx - xhat * var_avg(dxhat * xhat)
    if paths in ("both", "mean"):
        dx = dx - avg(dxhat)
    dx = dx / std
    dgamma = (dout * (x if dgamma_x else xhat)).sum(0)
    return dx, dgamma, dout.sum(0)


def tanh_grad(hpre, dout, *, from_input: bool = False):
    """d hpre of h = tanh(hpre): dout · (1 − h²); ``from_input`` squares the input instead."""
    return dout * (1 - (hpre if from_input else torch.tanh(hpre)) ** 2)


def embedding_grad(E, X, dout, *, how: str = "add"):
    """dE of emb = E[X]: a scatter-add of dout into the rows X names. ``how``: "add" (right),
    "assign" (dE[X] = dout: a repeated index keeps one write), "rows" (a loop over examples
    that adds, each row written by assignment: repeats within a row are lost)."""
    dE = torch.zeros_like(E)
    if how == "add":
        return dE.index_add_(0, X.reshape(-1), dout.reshape(-1, E.shape[1]))
    if how == "assign":
        dE[X] = dout
        return dE
    for i in range(X.shape[0]):
        dE[X[i]] += dout[i]
    return dE


# ---------------------------------------------------------------- the whole network, by hand

def net_grads(X, y, P, *, xent: dict | None = None, linear2: dict | None = None,
              tanh: dict | None = None, bn: dict | None = None, linear1: dict | None = None,
              emb: dict | None = None) -> dict:
    """Every gradient of the network's loss, one layer at a time from the loss down; each
    keyword passes its slips to that layer's backward (the slips then travel down the chain,
    as they would in a student's code)."""
    f = net_forward(X, y, P)
    n = X.shape[0]
    g = {"logits": xent_grad(f["logits"], y, **(xent or {}))}
    g["h"], g["W2"], g["b2"] = linear_grads(f["h"], P["W2"], P["b2"], g["logits"], **(linear2 or {}))
    g["hbn"] = tanh_grad(f["hbn"], g["h"], **(tanh or {}))
    g["hpre"], g["gamma"], g["beta"] = bn_grads(f["hpre"], P["gamma"], P["beta"], g["hbn"], **(bn or {}))
    flat = f["emb"].reshape(n, -1)
    dflat, g["W1"], g["b1"] = linear_grads(flat, P["W1"], P["b1"], g["hpre"], **(linear1 or {}))
    g["emb"] = dflat.reshape(f["emb"].shape)
    g["E"] = embedding_grad(P["E"], X, g["emb"], **(emb or {}))
    return g


def net_with(**slips) -> Callable[..., dict]:
    """The network's analytic table with the given slips, as a unit's witness or wrong answer."""
    return lambda seed, n, v, t, d, h, c: net_report(
        lambda X, y, P: net_grads(X, y, P, **slips), seed, n, v, t, d, h, c)


def net_retain_grad(seed, n, v, t, d, h, c) -> dict:
    """The autograd witness: the forward pass with ``retain_grad()`` on every intermediate, one
    ``backward()``, and each ``.grad`` read through the same report."""
    X, y, P = net_problem(seed, n, v, t, d, h, c)
    with torch.enable_grad():
        leaves = {k: p.clone().requires_grad_(True) for k, p in P.items()}
        f = net_forward(X, y, leaves)
        for k in STEPS:
            f[k].retain_grad()
        f["loss"].backward()
    grads = {k: f[k].grad for k in STEPS} | {k: leaves[k].grad for k in leaves}
    return net_report(lambda *_: grads, seed, n, v, t, d, h, c)


def _staged_loss(X, y, P, nudge: dict[str, torch.Tensor]) -> torch.Tensor:
    """The loss with ``nudge[k]`` added to tensor ``k`` of the forward pass as it is computed,
    written independently of ``net_forward`` (the variance as a plain average of squares)."""
    def at(k, t):
        return t + nudge[k] if k in nudge else t
    Q = {k: at(k, p) for k, p in P.items()}
    emb = at("emb", Q["E"][X])
    hpre = at("hpre", emb.reshape(X.shape[0], -1) @ Q["W1"] + Q["b1"])
    centred = hpre - hpre.mean(0)
    hbn = at("hbn", Q["gamma"] * centred / ((centred ** 2).mean(0) + BN_EPS).sqrt() + Q["beta"])
    h = at("h", torch.tanh(hbn))
    logits = at("logits", h @ Q["W2"] + Q["b2"])
    return torch.logsumexp(logits, 1).mean() - logits.gather(1, y[:, None]).mean()


def net_finite_diff(seed, n, v, t, d, h, c, eps: float = 1e-6) -> dict:
    """Directional central differences: (L(a + εr) − L(a − εr)) / 2ε is ⟨∂L/∂a, r⟩ for each
    tensor a of the forward pass and each of the report's directions r."""
    X, y, P = net_problem(seed, n, v, t, d, h, c)
    f = net_forward(X, y, P)
    likes = [f[k] for k in STEPS] + [P[k] for k in NET_ROWS[len(STEPS):]]
    dirs = directions(seed, [tuple(a.shape) for a in likes])
    table = {}
    for name, ds in zip(NET_ROWS, dirs, strict=True):
        proj = [(_staged_loss(X, y, P, {name: eps * r}) - _staged_loss(X, y, P, {name: -eps * r})) / (2 * eps)
                for r in ds]
        table[name] = {"proj": torch.stack(proj), "layout": "own_shape"}
    return table


def layer_finite_diff(forward: Callable[..., torch.Tensor], inputs: list[torch.Tensor],
                      dout: torch.Tensor, names: tuple[str, ...], seed: int, eps: float = 1e-6) -> dict:
    """The finite-difference witness of one layer: ⟨dout, f(inputs)⟩ differentiated along each
    of the report's directions, for each input named in ``names`` (the first ones)."""
    dirs = directions(seed, [tuple(a.shape) for a in inputs[:len(names)]])
    table = {}
    for i, (name, ds) in enumerate(zip(names, dirs, strict=True)):
        proj = []
        for r in ds:
            up = [a + eps * r if j == i else a for j, a in enumerate(inputs)]
            down = [a - eps * r if j == i else a for j, a in enumerate(inputs)]
            proj.append(((forward(*up) - forward(*down)) * dout).sum() / (2 * eps))
        table[name] = {"proj": torch.stack(proj), "layout": "own_shape"}
    return table


def layer_autograd(forward: Callable[..., torch.Tensor], inputs: list[torch.Tensor],
                   dout: torch.Tensor, count: int) -> tuple[torch.Tensor, ...]:
    """The autograd witness of one layer: the vector-Jacobian product with dout for the first
    ``count`` inputs."""
    with torch.enable_grad():
        leaves = [a.clone().requires_grad_(k < count) for k, a in enumerate(inputs)]
        return torch.autograd.grad(forward(*leaves), leaves[:count], dout)
