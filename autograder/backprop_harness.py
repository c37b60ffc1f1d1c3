"""Student side: what the grader runs on a hand-written backward of chapter 11's network.

The network is Karpathy's makemore MLP ("Building makemore Part 4: Becoming a Backprop Ninja"):
an embedding lookup, a linear layer, batch normalisation, tanh, a second linear layer and the
mean cross-entropy. Each ``*_report`` draws a fresh problem from its seed and shapes, calls the
student's function on it with autograd switched off, and reads every gradient the function
returns as plain data: its projections on three fixed random directions (so gradients of any
shape compare as a few numbers) and its layout (the tensor's own shape, the transpose of it, or
one extra leading batch axis). Nothing here knows an answer: the forward pass is the lesson's,
and the gradients are only read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch

from autograder.harness import directions

F64 = torch.float64
MODULE = "autograder.backprop_harness"
BN_EPS = 1e-5  # nn.BatchNorm1d's default eps
LAYOUTS = ("own_shape", "transposed", "per_example")
PARAMS = ("E", "W1", "b1", "gamma", "beta", "W2", "b2")
STEPS = ("logits", "h", "hbn", "hpre", "emb")  # the intermediates, from the loss down
NET_ROWS = STEPS + ("W2", "b2", "gamma", "beta", "W1", "b1", "E")


def call(expression: str) -> str:
    """A ``call=`` expression that reaches this module without trusting the answer's names."""
    name = expression.split("(", 1)[0]
    return f"__import__({MODULE!r}, fromlist=[{name!r}]).{expression}"


def _gen(seed: int, salt: int) -> torch.Generator:
    return torch.Generator().manual_seed(1000 * salt + seed)


# ---------------------------------------------------------------- reading a gradient

def read_grad(name: str, grad: Any, like: torch.Tensor, n: int, dirs: Sequence[torch.Tensor]) -> dict:
    """One gradient as a table row: ``proj`` (its projections on ``dirs``, or None when its
    shape is not its tensor's) and ``layout`` (how its shape relates to its tensor's)."""
    if grad is None:
        raise ValueError(f"the gradient for {name} is None: return a tensor of {name}'s shape")
    grad = torch.as_tensor(grad).to(F64)
    shape, want = tuple(grad.shape), tuple(like.shape)
    if shape != want and grad.numel() == like.numel() and \
            tuple(s for s in shape if s != 1) == tuple(s for s in want if s != 1):
        grad, shape = grad.reshape(want), want  # a kept singleton axis (sum(0, keepdim=True))
    if shape == want:
        return {"proj": torch.stack([(grad * r).sum() for r in dirs]), "layout": "own_shape"}
    if len(want) == 2 and shape == want[::-1]:
        return {"proj": None, "layout": "transposed"}
    if shape == (n, *want):
        return {"proj": None, "layout": "per_example"}
    raise ValueError(f"the gradient for {name} has shape {shape}, but {name} has shape {want}: "
                     "a gradient has the shape of its tensor")


def _grads(result: Any, names: Sequence[str]) -> list[Any]:
    """The function's gradients, in ``names`` order: a tuple or list of them, or a dict by name
    (a lone tensor for one name)."""
    if isinstance(result, Mapping):
        missing = [k for k in names if k not in result]
        if missing:
            raise ValueError(f"your dict has no entry for {missing}; it should have {list(names)}")
        return [result[k] for k in names]
    if len(names) == 1 and isinstance(result, torch.Tensor):
        return [result]
    result = list(result)
    if len(result) != len(names):
        raise ValueError(f"return {len(names)} gradients ({', '.join(names)}), not {len(result)}")
    return result


def _table(result: Any, names: Sequence[str], rows: Sequence[str], likes: Sequence[torch.Tensor],
           n: int, seed: int) -> Any:
    if result is Ellipsis:  # the starter function, unchanged: "not answered", not an error
        return Ellipsis
    grads = _grads(result, names)
    dirs = directions(seed, [tuple(t.shape) for t in likes])
    return {row: read_grad(row, g, like, n, ds)
            for row, g, like, ds in zip(rows, grads, likes, dirs, strict=True)}


def _run(backward: Callable[..., Any], *inputs: torch.Tensor) -> Any:
    with torch.no_grad():
        return backward(*(t.clone() for t in inputs))


# ---------------------------------------------------------------- one layer at a time

def linear_problem(seed: int, n: int, i: int, o: int) -> tuple[torch.Tensor, ...]:
    """x (n, i), W (i, o), b (o,) and an upstream gradient dout (n, o), for out = x @ W + b."""
    g = _gen(seed, 1)
    return (torch.randn(n, i, generator=g, dtype=F64), torch.randn(i, o, generator=g, dtype=F64),
            torch.randn(o, generator=g, dtype=F64), torch.randn(n, o, generator=g, dtype=F64))


def linear_report(backward: Callable[..., Any], seed: int, n: int, i: int, o: int) -> Any:
    """Call ``backward(x, W, b, dout)`` (returning dx, dW, db) on a fresh problem."""
    x, W, b, dout = linear_problem(seed, n, i, o)
    return _table(_run(backward, x, W, b, dout), ("dx", "dW", "db"), ("x", "W", "b"), (x, W, b), n, seed)


def batchnorm_problem(seed: int, n: int, h: int) -> tuple[torch.Tensor, ...]:
    """x (n, h) with columns of several means and spreads, gamma, beta (h,) and dout (n, h)."""
    g = _gen(seed, 2)
    scale = 0.5 + 2 * torch.rand(h, generator=g, dtype=F64)
    x = torch.randn(n, h, generator=g, dtype=F64) * scale + torch.randn(h, generator=g, dtype=F64)
    gamma = 1 + 0.5 * torch.randn(h, generator=g, dtype=F64)
    beta = 0.5 * torch.randn(h, generator=g, dtype=F64)
    return x, gamma, beta, torch.randn(n, h, generator=g, dtype=F64)


def batchnorm_report(backward: Callable[..., Any], seed: int, n: int, h: int) -> Any:
    """Call ``backward(x, gamma, beta, dout, eps)`` (returning dx, dgamma, dbeta)."""
    x, gamma, beta, dout = batchnorm_problem(seed, n, h)
    with torch.no_grad():
        result = backward(x.clone(), gamma.clone(), beta.clone(), dout.clone(), BN_EPS)
    return _table(result, ("dx", "dgamma", "dbeta"), ("x", "gamma", "beta"), (x, gamma, beta), n, seed)


def embedding_problem(seed: int, n: int, t: int, v: int, d: int) -> tuple[torch.Tensor, ...]:
    """E (v, d), token ids X (n, t) and dout (n, t, d) for emb = E[X]. Some token repeats within
    the first row and across rows, as in real text."""
    g = _gen(seed, 3)
    X = torch.randint(0, v, (n, t), generator=g)
    X[0, 1] = X[0, 0]
    X[-1, -1] = X[0, 0]
    E = torch.randn(v, d, generator=g, dtype=F64)
    return E, X, torch.randn(n, t, d, generator=g, dtype=F64)


def embedding_report(backward: Callable[..., Any], seed: int, n: int, t: int, v: int, d: int) -> Any:
    """Call ``backward(E, X, dout)`` (returning dE) on a fresh problem."""
    E, X, dout = embedding_problem(seed, n, t, v, d)
    return _table(_run(backward, E, X, dout), ("dE",), ("E",), (E,), n, seed)


# ---------------------------------------------------------------- the whole network

def net_problem(seed: int, n: int, v: int, t: int, d: int, h: int,
                c: int) -> tuple[torch.Tensor, torch.Tensor, dict]:
    """A batch (token ids X of shape (n, t), labels y) and the network's parameters."""
    g = _gen(seed, 4)
    X = torch.randint(0, v, (n, t), generator=g)
    X[0, 1] = X[0, 0]  # a repeated token, as in real text
    y = torch.randint(0, c, (n,), generator=g)
    params = {"E": torch.randn(v, d, generator=g, dtype=F64),
              "W1": torch.randn(t * d, h, generator=g, dtype=F64) / (t * d) ** 0.5,
              "b1": 0.1 * torch.randn(h, generator=g, dtype=F64),
              "gamma": 1 + 0.2 * torch.randn(h, generator=g, dtype=F64),
              "beta": 0.2 * torch.randn(h, generator=g, dtype=F64),
              "W2": torch.randn(h, c, generator=g, dtype=F64) / h ** 0.5,
              "b2": 0.1 * torch.randn(c, generator=g, dtype=F64)}
    return X, y, params


def net_forward(X: torch.Tensor, y: torch.Tensor, P: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The forward pass, every intermediate kept: emb = E[X], hpre = emb flattened @ W1 + b1,
    hbn = batch norm of hpre (biased variance, as nn.BatchNorm1d in training), h = tanh(hbn),
    logits = h @ W2 + b2, loss = mean cross-entropy."""
    emb = P["E"][X]
    hpre = emb.reshape(X.shape[0], -1) @ P["W1"] + P["b1"]
    mu = hpre.mean(0)
    var = ((hpre - mu) ** 2).mean(0)
    hbn = P["gamma"] * (hpre - mu) / torch.sqrt(var + BN_EPS) + P["beta"]
    h = torch.tanh(hbn)
    logits = h @ P["W2"] + P["b2"]
    loss = torch.nn.functional.cross_entropy(logits, y)
    return {"emb": emb, "hpre": hpre, "hbn": hbn, "h": h, "logits": logits, "loss": loss}


def net_report(backward: Callable[..., Any], seed: int, n: int, v: int, t: int, d: int, h: int,
               c: int) -> Any:
    """Call ``backward(X, y, params)`` (returning a dict of the gradient of the loss at every
    intermediate and parameter, by name) on a fresh batch and network."""
    X, y, P = net_problem(seed, n, v, t, d, h, c)
    with torch.no_grad():
        inter = net_forward(X, y, P)
        result = backward(X.clone(), y.clone(), {k: p.clone() for k, p in P.items()})
    likes = [inter[k] for k in STEPS] + [P[k] for k in NET_ROWS[len(STEPS):]]
    return _table(result, NET_ROWS, NET_ROWS, likes, n, seed)
