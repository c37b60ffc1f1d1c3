"""Chapter 11's trusted helpers (the leading underscore keeps the registry away): three
independent tensor engines (the witnesses of ``tensor_engine`` and of the code built on it: torch
autograd behind the engine's interface, local derivatives in closed form, local derivatives by
central differences) and the buggy engines whose behaviour the diagnoses name; unbroadcast
variants; the reference gradient checker and digit trainer. What the grader runs on a student's
code lives in ``autograder.tensor_harness`` (student side)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from autograder.tensor_harness import (  # noqa: F401 - the units use them
    BANDS,
    DIGITS_TRAIN,
    ENGINE_OPS,
    ENGINE_ROWS,
    GRADCHECK_ROWS,
    UNBROADCAST_ROWS,
    XENT_ROWS,
    call,
    digits_report,
    gradcheck_report,
    tensor_engine_report,
    unbroadcast_report,
    xent_report,
)

F64 = torch.float64


# ---------------------------------------------------------------- unbroadcast, right and wrong

def unbroadcast(g: torch.Tensor, shape: tuple[int, ...]) -> torch.Tensor:
    """Sum ``g`` back to ``shape``: over the leading axes broadcasting added, then (keeping them)
    over the axes where ``shape`` has a 1 and ``g`` does not."""
    while g.dim() > len(shape):
        g = g.sum(0)
    for axis, size in enumerate(shape):
        if size == 1 and g.shape[axis] != 1:
            g = g.sum(axis, keepdim=True)
    return g


def unbroadcast_identity(g, shape):
    return g


def unbroadcast_leading_only(g, shape):
    while g.dim() > len(shape):
        g = g.sum(0)
    return g


def unbroadcast_ones_only(g, shape):
    """Sums the stretched size-1 axes, counting axes from the left, and never the leading ones."""
    for axis, size in enumerate(shape):
        if size == 1 and axis < g.dim() and g.shape[axis] != 1:
            g = g.sum(axis, keepdim=True)
    return g


def unbroadcast_no_keepdim(g, shape):
    while g.dim() > len(shape):
        g = g.sum(0)
    for axis in reversed(range(len(shape))):
        if shape[axis] == 1 and g.shape[axis] != 1:
            g = g.sum(axis)
    return g


def unbroadcast_from_left(g, shape):
    """Lines the shapes up from the left: drops the trailing axes instead of the leading ones."""
    while g.dim() > len(shape):
        g = g.sum(-1)
    for axis, size in enumerate(shape):
        if size == 1 and g.shape[axis] != 1:
            g = g.sum(axis, keepdim=True)
    return g


# ---------------------------------------------------------------- the analytic engine

def _as64(v: Any) -> torch.Tensor:
    return v.detach().to(F64).clone() if isinstance(v, torch.Tensor) else torch.as_tensor(v, dtype=F64)


class Engine:
    """The analytic witness: each operation's forward and its vector-Jacobian products in closed
    form; gradients summed back to each input's shape, added at fan-out."""

    def __init__(self, data: Any, _parents: tuple = (), _vjps: Callable | None = None) -> None:
        self.data = _as64(data)
        self.grad = torch.zeros_like(self.data)
        self._parents, self._vjps = tuple(_parents), _vjps

    # --- the hooks the buggy engines replace ---
    unbroadcast = staticmethod(unbroadcast)

    @staticmethod
    def _accumulate(parent: Engine, g: torch.Tensor) -> None:
        parent.grad += g

    def _lift(self, other: Any) -> Engine:
        return other if isinstance(other, Engine) else type(self)(other)

    def _op(self, forward: Callable, parents: tuple, vjps: Callable) -> Engine:
        return type(self)(forward(*(p.data for p in parents)), parents, vjps)

    # --- elementwise ---
    def __add__(self, o):
        o = self._lift(o)
        return self._op(torch.add, (self, o), lambda g, a, b: (g, g))

    def __sub__(self, o):
        o = self._lift(o)
        return self._op(torch.sub, (self, o), lambda g, a, b: (g, -g))

    def __mul__(self, o):
        o = self._lift(o)
        return self._op(torch.mul, (self, o), lambda g, a, b: (g * b, g * a))

    def __truediv__(self, o):
        o = self._lift(o)
        return self._op(torch.div, (self, o), lambda g, a, b: (g / b, -g * a / b ** 2))

    def __neg__(self):
        return self._op(torch.neg, (self,), lambda g, a: (-g,))

    def __pow__(self, k):
        return self._op(lambda a: a ** k, (self,), lambda g, a: (g * k * a ** (k - 1),))

    def exp(self):
        return self._op(torch.exp, (self,), lambda g, a: (g * torch.exp(a),))

    def log(self):
        return self._op(torch.log, (self,), lambda g, a: (g / a,))

    def tanh(self):
        return self._op(torch.tanh, (self,), lambda g, a: (g * (1 - torch.tanh(a) ** 2),))

    def relu(self):
        return self._op(lambda a: a.clamp(min=0), (self,), lambda g, a: (g * (a > 0),))

    # --- reductions ---
    def _sum_vjp(self, axis, keepdim):
        def vjp(g, a):
            if axis is not None and not keepdim:
                g = g.unsqueeze(axis)
            return (g.expand(a.shape),)
        return vjp

    def sum(self, axis=None, keepdim=False):
        forward = (lambda a: a.sum()) if axis is None else (lambda a: a.sum(axis, keepdim=keepdim))
        return self._op(forward, (self,), self._sum_vjp(axis, keepdim))

    def mean(self, axis=None, keepdim=False):
        n = self.data.numel() if axis is None else self.data.shape[axis]
        return self.sum(axis, keepdim) * (1.0 / n)

    # --- shapes ---
    def _matmul_vjp(self, g, a, b):
        return g @ b.T, a.T @ g

    def __matmul__(self, o):
        return self._op(torch.matmul, (self, self._lift(o)), self._matmul_vjp)

    def reshape(self, *shape):
        shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], tuple | list) else shape
        return self._op(lambda a: a.reshape(shape), (self,), lambda g, a: (g.reshape(a.shape),))

    def transpose(self, d0, d1):
        return self._op(lambda a: a.transpose(d0, d1), (self,), lambda g, a: (g.transpose(d0, d1),))

    def _getitem_vjp(self, idx):
        def vjp(g, a):
            where = torch.arange(a.numel()).reshape(a.shape)[idx].reshape(-1)
            out = torch.zeros(a.numel(), dtype=F64)
            out.index_add_(0, where, g.reshape(-1))  # a repeated index gets each use's gradient
            return (out.reshape(a.shape),)
        return vjp

    def __getitem__(self, idx):
        return self._op(lambda a: a[idx], (self,), self._getitem_vjp(idx))

    # --- backward ---
    def _order(self) -> list[Engine]:
        topo: list[Engine] = []
        seen: set[int] = set()

        def visit(v: Engine) -> None:
            if id(v) not in seen:
                seen.add(id(v))
                for p in v._parents:
                    visit(p)
                topo.append(v)
        visit(self)
        return topo

    def _zero(self, topo: list[Engine]) -> None:
        for v in topo:
            v.grad = torch.zeros_like(v.data)

    def _walk(self, topo: list[Engine]) -> list[Engine]:
        return topo[::-1]

    def backward(self, grad=None):
        topo = self._order()
        self._zero(topo)
        self.grad = torch.ones_like(self.data) if grad is None else _as64(grad).reshape(self.data.shape)
        for v in self._walk(topo):
            if v._vjps is not None:
                for p, g in zip(v._parents, v._vjps(v.grad, *(p.data for p in v._parents)), strict=True):
                    self._accumulate(p, self.unbroadcast(g, tuple(p.data.shape)))


class FiniteDiffEngine(Engine):
    """The finite-difference witness: every vector-Jacobian product by finite differences of the
    operation's own forward, one input entry at a time (so it sums over broadcasting and adds
    at repeated indices without being told). A five-point stencil with a step relative to the
    entry: error of order h⁴, so logits of 10⁴ are measured as well as those of size 1."""

    def _op(self, forward, parents, vjps):
        def numeric(g, *datas):
            out = []
            for i, a in enumerate(datas):
                flat = torch.zeros(a.numel(), dtype=F64)
                for k in range(a.numel()):
                    h = 1e-3 * max(1.0, abs(float(a.reshape(-1)[k])))

                    def at(step, i=i, k=k, a=a):
                        e = torch.zeros(a.numel(), dtype=F64)
                        e[k] = step
                        moved = [d + e.reshape(d.shape) if j == i else d for j, d in enumerate(datas)]
                        return (forward(*moved) * g).sum()
                    flat[k] = (8 * (at(h) - at(-h)) - (at(2 * h) - at(-2 * h))) / (12 * h)
                out.append(flat.reshape(a.shape))
            return tuple(out)
        return type(self)(forward(*(p.data for p in parents)), parents, numeric)


class TorchTensor:
    """The torch witness: the engine's interface over a float64 tensor that requires grad; its
    backward is torch autograd's, for the leaves the output was built from."""

    def __init__(self, data: Any, _t: torch.Tensor | None = None, _leaves: tuple = ()) -> None:
        self.t = _as64(data).requires_grad_(True) if _t is None else _t
        self.leaves = (self,) if _t is None else _leaves
        self.grad = None

    @property
    def data(self) -> torch.Tensor:
        return self.t.detach()

    def _wrap(self, t: torch.Tensor, *others: Any) -> TorchTensor:
        leaves = dict.fromkeys(self.leaves)
        for o in others:
            if isinstance(o, TorchTensor):
                leaves.update(dict.fromkeys(o.leaves))
        return TorchTensor(None, t, tuple(leaves))

    @staticmethod
    def _raw(o: Any) -> Any:
        return o.t if isinstance(o, TorchTensor) else _as64(o)

    def __add__(self, o):
        return self._wrap(self.t + self._raw(o), o)

    def __sub__(self, o):
        return self._wrap(self.t - self._raw(o), o)

    def __mul__(self, o):
        return self._wrap(self.t * self._raw(o), o)

    def __truediv__(self, o):
        return self._wrap(self.t / self._raw(o), o)

    def __matmul__(self, o):
        return self._wrap(self.t @ self._raw(o), o)

    def __neg__(self):
        return self._wrap(-self.t)

    def __pow__(self, k):
        return self._wrap(self.t ** k)

    def __getitem__(self, idx):
        return self._wrap(self.t[idx])

    def sum(self, axis=None, keepdim=False):
        return self._wrap(self.t.sum() if axis is None else self.t.sum(axis, keepdim=keepdim))

    def mean(self, axis=None, keepdim=False):
        return self._wrap(self.t.mean() if axis is None else self.t.mean(axis, keepdim=keepdim))

    def reshape(self, *shape):
        return self._wrap(self.t.reshape(*shape))

    def transpose(self, d0, d1):
        return self._wrap(self.t.transpose(d0, d1))

    def backward(self, grad=None):
        seed = torch.ones_like(self.t) if grad is None else _as64(grad).reshape(self.t.shape)
        with torch.enable_grad():
            grads = torch.autograd.grad(self.t, [v.t for v in self.leaves], seed, allow_unused=True,
                                        retain_graph=True)
        for v, g in zip(self.leaves, grads, strict=True):
            v.grad = torch.zeros_like(v.t) if g is None else g


for _name in ("exp", "log", "tanh", "relu"):
    setattr(TorchTensor, _name, lambda self, n=_name: self._wrap(getattr(self.t, n)()))


# --- the engines with one classic bug each (run through the same report as the student's) ---

def with_unbroadcast(fn: Callable) -> type[Engine]:
    return type(f"Engine_{fn.__name__}", (Engine,), {"unbroadcast": staticmethod(fn)})


class AssignEngine(Engine):
    """``=`` instead of ``+=``: each use overwrites what other uses of the node put there."""

    @staticmethod
    def _accumulate(parent, g):
        parent.grad = g.clone()


class NoZeroEngine(Engine):
    """backward() never zeroes the gradients an earlier pass left."""

    def _zero(self, topo):
        for v in topo:
            if v.grad is None:
                v.grad = torch.zeros_like(v.data)


class ForwardOrderEngine(Engine):
    """The topological list walked from the leaves up."""

    def _walk(self, topo):
        return topo


class SumNoUnsqueezeEngine(Engine):
    """sum(axis)'s backward leans on broadcasting instead of putting the summed axis back."""

    def _sum_vjp(self, axis, keepdim):
        return lambda g, a: (g.expand(a.shape),)


class MatmulTransposedEngine(Engine):
    """dB written as Gᵀ·A: the transpose of the right gradient (B's shape turned round)."""

    def _matmul_vjp(self, g, a, b):
        return g @ b.T, g.T @ a


class GetitemAssignEngine(Engine):
    """Indexing's backward writes ``out[idx] = g``: at a repeated index only one use survives."""

    def _getitem_vjp(self, idx):
        def vjp(g, a):
            out = torch.zeros_like(a)
            out[idx] = g
            return (out,)
        return vjp


def wrong_local(op: str) -> type[Engine]:
    """The engine with the local derivative of ``op`` wrong (a typical slip for each)."""
    slips: dict[str, tuple[str, Callable]] = {
        "add": ("__add__", lambda self, o: self._op(torch.add, (self, self._lift(o)), lambda g, a, b: (g, 0 * g))),
        "sub": ("__sub__", lambda self, o: self._op(torch.sub, (self, self._lift(o)), lambda g, a, b: (g, g))),
        "mul": ("__mul__", lambda self, o: self._op(torch.mul, (self, self._lift(o)), lambda g, a, b: (g * a, g * b))),
        "div": ("__truediv__", lambda self, o: self._op(torch.div, (self, self._lift(o)),
                                                        lambda g, a, b: (g / b, g * a / b ** 2))),
        "pow": ("__pow__", lambda self, k: self._op(lambda a: a ** k, (self,), lambda g, a: (g * k * a ** k,))),
        "exp": ("exp", lambda self: self._op(torch.exp, (self,), lambda g, a: (g * a,))),
        "log": ("log", lambda self: self._op(torch.log, (self,), lambda g, a: (g / torch.log(a),))),
        "tanh": ("tanh", lambda self: self._op(torch.tanh, (self,), lambda g, a: (g * (1 - a ** 2),))),
        "relu": ("relu", lambda self: self._op(lambda a: a.clamp(min=0), (self,), lambda g, a: (g,))),
    }
    method, fn = slips[op]
    return type(f"Wrong_{op}", (Engine,), {method: fn})


# ---------------------------------------------------------------- Part 3's reference code

def cross_entropy(logits: Any, y: torch.Tensor, *, shift: bool = True, via_softmax: bool = False,
                  mean: bool = True) -> Any:
    """Mean cross-entropy in the engine's operations: log-sum-exp shifted by the row's largest
    logit (a constant: the shift changes nothing but the range of exp). The keywords switch on
    the classic slips: no shift; log of a softmax (underflows to log 0); the sum over the batch."""
    n = logits.data.shape[0]
    m = logits.data.max(1, keepdim=True).values if shift else torch.zeros(n, 1, dtype=F64)
    shifted = logits - m
    e = shifted.exp()
    if via_softmax:
        p = e / e.sum(1, True)
        picked = p[torch.arange(n), y].log()
    else:
        picked = shifted[torch.arange(n), y] - e.sum(1, True).log().reshape(n)
    loss = -picked.sum()
    return loss * (1.0 / n) if mean else loss


def grad_check(f: Callable, x: torch.Tensor, engine: type = Engine, *, eps: float = 1e-6,
               central: bool = True, relative: bool = True, signed: bool = False,
               dtype: torch.dtype = F64) -> float:
    """The largest relative error between ``engine``'s gradient of ``f`` at ``x`` and central
    differences in float64; the keywords switch on the classic slips."""
    x = x.to(dtype)
    t = engine(x)
    f(t).backward()
    analytic = torch.as_tensor(t.grad).to(dtype).reshape(-1)
    numeric = torch.zeros(x.numel(), dtype=dtype)
    for k in range(x.numel()):
        e = torch.zeros(x.numel(), dtype=dtype)
        e[k] = eps
        up = float(torch.as_tensor(f(engine((x.reshape(-1) + e).reshape(x.shape))).data))
        here = float(torch.as_tensor(f(engine((x.reshape(-1) - e).reshape(x.shape)) if central
                                       else engine(x)).data))
        numeric[k] = (up - here) / (2 * eps if central else eps)
    err = analytic - numeric if signed else (analytic - numeric).abs()
    if relative:
        err = err / torch.maximum(analytic.abs(), numeric.abs()).clamp(min=1e-300)
    return float(err.max())


def train_digits(X, y, params, steps, lr, engine: type = Engine, *, mean: bool = True,
                 sign: float = 1.0, zero: bool = True):
    """Full-batch gradient descent of tanh(X W1 + b1) W2 + b2 under mean cross-entropy, on
    ``engine``; returns (params, losses)."""
    ps = {k: engine(v) for k, v in params.items()}
    losses = []
    for _ in range(steps):
        logits = (engine(X) @ ps["W1"] + ps["b1"]).tanh() @ ps["W2"] + ps["b2"]
        loss = cross_entropy(logits, y, mean=mean)
        losses.append(float(torch.as_tensor(loss.data)))
        if zero:
            loss.backward()
        else:  # the gradients of earlier steps left in: grads added onto the last step's
            grads = {k: p.grad.clone() for k, p in ps.items()}
            loss.backward()
            for k, p in ps.items():
                p.grad += grads[k]
        for p in ps.values():
            p.data = p.data - sign * lr * p.grad
    return {k: p.data for k, p in ps.items()}, losses


def torch_digits(X, y, params, steps, lr):
    """The same training with torch autograd on plain tensors (the torch witness)."""
    ps = {k: v.clone().requires_grad_(True) for k, v in params.items()}
    losses = []
    for _ in range(steps):
        with torch.enable_grad():
            logits = (X @ ps["W1"] + ps["b1"]).tanh() @ ps["W2"] + ps["b2"]
            loss = torch.nn.functional.cross_entropy(logits, y)
            grads = torch.autograd.grad(loss, list(ps.values()))
        losses.append(loss.item())
        with torch.no_grad():
            ps = {k: (p - lr * g).requires_grad_(True) for (k, p), g in zip(ps.items(), grads, strict=True)}
    return {k: p.detach() for k, p in ps.items()}, losses


def hand_digits(X, y, params, steps, lr):
    """The same training with every gradient in closed form (the analytic witness)."""
    p = {k: v.clone() for k, v in params.items()}
    losses = []
    n = X.shape[0]
    for _ in range(steps):
        h = (X @ p["W1"] + p["b1"]).tanh()
        s = h @ p["W2"] + p["b2"]
        logp = s - s.logsumexp(1, keepdim=True)
        losses.append(float(-logp[torch.arange(n), y].mean()))
        ds = logp.exp()
        ds[torch.arange(n), y] -= 1
        ds /= n
        dh = ds @ p["W2"].T * (1 - h ** 2)
        grads = {"W1": X.T @ dh, "b1": dh.sum(0), "W2": h.T @ ds, "b2": ds.sum(0)}
        p = {k: p[k] - lr * grads[k] for k in p}
    return p, losses


def math_log_sum_exp(row: list[float]) -> float:
    m = max(row)
    return m + math.log(sum(math.exp(v - m) for v in row))
