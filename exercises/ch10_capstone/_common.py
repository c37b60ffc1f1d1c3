"""Chapter 10's trusted helpers (the leading underscore keeps the registry away): three
independent scalar engines (the witnesses of ``value_engine``) and the buggy engines whose
behaviour its diagnoses name; the hand-written MLP backward; the planted training loop with
any subset of its bugs. What the grader runs on a student's code lives in
``autograder.harness`` (student side)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import torch
import torch.nn.functional as F

from autograder.harness import (  # noqa: F401 - the units use them
    ENGINE_GRAPHS,
    ENGINE_OPS,
    ENGINE_ROWS,
    ENGINE_TRAIN,
    LOOP,
    LOOP_CHECKS,
    MLP_NAMES,
    call,
    engine_report,
    engine_train_report,
    loop_report,
    mlp_backward_report,
    mlp_init,
    moons,
)

F64 = torch.float64


# ---------------------------------------------------------------- scalar engines

class Engine:
    """The analytic witness: micrograd's shape, local derivatives in closed form."""

    def __init__(self, data: float, _children: tuple = ()) -> None:
        self.data, self.grad = float(data), 0.0
        self._prev, self._backward = tuple(_children), lambda: None

    def _new(self, data: float, children: tuple, local: Callable[[], tuple[float, ...]]) -> Engine:
        out = type(self)(data, children)

        def _backward() -> None:
            for child, d in zip(children, local(), strict=True):
                self._accumulate(child, d * out.grad)
        out._backward = _backward
        return out

    @staticmethod
    def _accumulate(child: Engine, g: float) -> None:
        child.grad += g

    def __add__(self, other: Engine) -> Engine:
        return self._new(self.data + other.data, (self, other), lambda: (1.0, 1.0))

    def __mul__(self, other: Engine) -> Engine:
        return self._new(self.data * other.data, (self, other), lambda: (other.data, self.data))

    def __pow__(self, k: float) -> Engine:
        return self._new(self.data ** k, (self,), lambda: (k * self.data ** (k - 1),))

    def tanh(self) -> Engine:
        t = math.tanh(self.data)
        return self._new(t, (self,), lambda: (1 - t * t,))

    def relu(self) -> Engine:
        return self._new(max(self.data, 0.0), (self,), lambda: (float(self.data > 0),))

    def exp(self) -> Engine:
        e = math.exp(self.data)
        return self._new(e, (self,), lambda: (e,))

    def log(self) -> Engine:
        return self._new(math.log(self.data), (self,), lambda: (1 / self.data,))

    def _order(self) -> list[Engine]:
        topo: list[Engine] = []
        seen: set[int] = set()

        def visit(v: Engine) -> None:
            if id(v) not in seen:
                seen.add(id(v))
                for c in v._prev:
                    visit(c)
                topo.append(v)
        visit(self)
        return topo

    def _zero(self, topo: list[Engine]) -> None:
        for v in topo:
            v.grad = 0.0

    def backward(self) -> None:
        topo = self._order()
        self._zero(topo)
        self.grad = 1.0
        for v in reversed(topo):
            v._backward()


FUNCS: dict[str, Callable[..., float]] = {
    "tanh": math.tanh, "relu": lambda x: max(x, 0.0), "exp": math.exp, "log": math.log}


class FiniteDiffEngine(Engine):
    """The finite-difference witness: every local derivative by a central difference."""

    def _local(self, f: Callable[..., float], *xs: float, h: float = 1e-6) -> tuple[float, ...]:
        out = []
        for i in range(len(xs)):
            up = [x + h * (j == i) for j, x in enumerate(xs)]
            down = [x - h * (j == i) for j, x in enumerate(xs)]
            out.append((f(*up) - f(*down)) / (2 * h))
        return tuple(out)

    def __add__(self, other):
        return self._new(self.data + other.data, (self, other),
                         lambda: self._local(lambda a, b: a + b, self.data, other.data))

    def __mul__(self, other):
        return self._new(self.data * other.data, (self, other),
                         lambda: self._local(lambda a, b: a * b, self.data, other.data))

    def __pow__(self, k):
        return self._new(self.data ** k, (self,), lambda: self._local(lambda a: a ** k, self.data))


for _name, _f in FUNCS.items():
    def _op(self, f=_f):
        return self._new(f(self.data), (self,), lambda: self._local(f, self.data))
    setattr(FiniteDiffEngine, _name, _op)


class TorchScalar:
    """The torch witness: a Value whose backward is torch autograd's (for the leaves it reads)."""

    def __init__(self, data, _t: torch.Tensor | None = None, _leaves: tuple = ()) -> None:
        self.t = torch.tensor(float(data), dtype=F64, requires_grad=True) if _t is None else _t
        self.leaves = (self,) if _t is None else _leaves
        self.grad = 0.0

    @property
    def data(self) -> float:
        return float(self.t)

    def _wrap(self, t: torch.Tensor, *others: TorchScalar) -> TorchScalar:
        leaves = dict.fromkeys(self.leaves)
        for o in others:
            leaves.update(dict.fromkeys(o.leaves))
        return TorchScalar(None, t, tuple(leaves))

    def __add__(self, o):
        return self._wrap(self.t + o.t, o)

    def __mul__(self, o):
        return self._wrap(self.t * o.t, o)

    def __pow__(self, k):
        return self._wrap(self.t ** k)

    def backward(self) -> None:
        grads = torch.autograd.grad(self.t, [v.t for v in self.leaves], allow_unused=True,
                                    retain_graph=True)
        for v, g in zip(self.leaves, grads, strict=True):
            v.grad = 0.0 if g is None else float(g)


for _name in FUNCS:
    setattr(TorchScalar, _name, lambda self, n=_name: self._wrap(getattr(self.t, n)()))


# --- the engines with one classic bug each (run through the same report as the student's) ---

class AssignEngine(Engine):
    """``=`` instead of ``+=``: each local backward overwrites what other uses put there."""

    @staticmethod
    def _accumulate(child, g):
        child.grad = g


class ForwardOrderEngine(Engine):
    """The topological list walked from the leaves up instead of from the output down."""

    def backward(self):
        topo = self._order()
        self._zero(topo)
        self.grad = 1.0
        for v in topo:
            v._backward()


class RecursiveEngine(Engine):
    """No topological order: each node calls its children's backward as soon as it is done."""

    def backward(self):
        self._zero(self._order())
        self.grad = 1.0

        def push(v):
            v._backward()
            for c in dict.fromkeys(v._prev):
                push(c)
        push(self)


class NoVisitedEngine(Engine):
    """A topological list built without a visited set: a shared node, and everything below it,
    is listed (and its _backward run) once per path to it."""

    def _order(self):
        topo = []

        def visit(v):
            for c in v._prev:
                visit(c)
            topo.append(v)
        visit(self)
        return topo


class NoZeroEngine(Engine):
    """backward() seeds the output but never zeroes the gradients left by an earlier pass."""

    def _zero(self, topo):
        pass


def wrong_local(op: str) -> type[Engine]:
    """The engine with the local derivative of ``op`` wrong (a typical slip for each)."""
    slips: dict[str, Callable] = {
        "add": lambda self, o: self._new(self.data + o.data, (self, o), lambda: (1.0, 0.0)),
        "mul": lambda self, o: self._new(self.data * o.data, (self, o), lambda: (self.data, o.data)),
        "pow": lambda self, k: self._new(self.data ** k, (self,), lambda: (k * self.data ** k,)),
        "tanh": lambda self: self._new(math.tanh(self.data), (self,), lambda: (1 - self.data ** 2,)),
        "relu": lambda self: self._new(max(self.data, 0.0), (self,), lambda: (1.0,)),
        "exp": lambda self: self._new(math.exp(self.data), (self,), lambda: (self.data,)),
        "log": lambda self: self._new(math.log(self.data), (self,), lambda: (1 / math.log(self.data),)),
    }
    method = {"add": "__add__", "mul": "__mul__", "pow": "__pow__"}.get(op, op)
    return type(f"Wrong_{op}", (Engine,), {method: slips[op]})


# ---------------------------------------------------------------- the MLP, by hand

def mlp_grads(X, y, W1, b1, W2, b2, *, mean: bool = True, mask: bool = True, onehot: bool = True,
              bias_mean: bool = False):
    """dW1, db1, dW2, db2 of mean cross-entropy of relu(X W1 + b1) W2 + b2, in torch operations
    (no autograd); the keywords switch on the classic slips."""
    z = X @ W1 + b1
    h = z.clamp(min=0)
    logits = h @ W2 + b2
    p = torch.softmax(logits, dim=1)
    dlogits = p - F.one_hot(y, logits.shape[1]).to(p.dtype) if onehot else p
    if mean:
        dlogits = dlogits / X.shape[0]
    dW2, db2 = h.T @ dlogits, dlogits.sum(0)
    if bias_mean:
        db2 = dlogits.mean(0)
    dh = dlogits @ W2.T
    dz = dh * (z > 0) if mask else dh
    return X.T @ dz, dz.sum(0), dW2, db2


def mlp_loss(X, y, W1, b1, W2, b2):
    return F.cross_entropy((X @ W1 + b1).relu() @ W2 + b2, y)


# ---------------------------------------------------------------- the planted training loop

BUGS = ("zero_grad", "frozen_layer", "non_leaf", "where_nan", "accumulation", "logged_graph",
        "data_in_penalty")


def planted_loop(bugs: Iterable[str]) -> Callable:
    """The training loop of ``fix_training_loop`` with the given planted bugs left in (all of
    them: the loop as the student receives it; none: the repair)."""
    bugs = set(bugs)
    assert bugs <= set(BUGS), bugs

    def train(X, y, init, steps, lr, accum, lam):
        W1 = init["W1"].double().requires_grad_()
        b1 = init["b1"].requires_grad_().double() if "non_leaf" in bugs else \
            init["b1"].double().requires_grad_()
        W2 = init["W2"].double().requires_grad_()
        b2 = init["b2"].double().requires_grad_()
        if "frozen_layer" in bugs:
            for p in (W2, b2):
                p.requires_grad_(False)
        params = [W1, b1, W2, b2]
        history = []
        for _ in range(steps):
            total = 0.0
            for Xb, yb in zip(X.chunk(accum), y.chunk(accum), strict=True):
                loss = F.cross_entropy((Xb @ W1 + b1).relu() @ W2 + b2, yb)
                sq = ((W1.data if "data_in_penalty" in bugs else W1) ** 2).sum(0)
                if "where_nan" in bugs:
                    penalty = torch.where(sq > 0, sq.sqrt(), 0.0).sum()
                else:
                    safe = torch.where(sq > 0, sq, 1.0)
                    penalty = torch.where(sq > 0, safe.sqrt(), 0.0).sum()
                objective = loss + lam * penalty
                if "accumulation" not in bugs:
                    objective = objective / accum
                objective.backward()
                total = total + (objective if "logged_graph" in bugs else objective.item())
            history.append(total)
            with torch.no_grad():
                for p in params:
                    if p.grad is not None:
                        p -= lr * p.grad
            if "zero_grad" not in bugs:
                for p in params:
                    p.grad = None
        return {"W1": W1, "b1": b1, "W2": W2, "b2": b2}, history
    return train


def hand_loop(X, y, init, steps, lr, accum, lam):
    """The repaired loop with every gradient by hand (the analytic witness of the loop)."""
    p = {k: init[k].double().clone() for k in MLP_NAMES}
    history = []
    for _ in range(steps):
        g = {k: torch.zeros_like(v) for k, v in p.items()}
        total = 0.0
        for Xb, yb in zip(X.chunk(accum), y.chunk(accum), strict=True):
            for k, v in zip(MLP_NAMES, mlp_grads(Xb, yb, *(p[k] for k in MLP_NAMES)), strict=True):
                g[k] += v / accum
            norms = p["W1"].norm(dim=0)
            g["W1"] += lam * torch.where(norms > 0, p["W1"] / norms.clamp(min=1e-300), 0.0) / accum
            total += (float(mlp_loss(Xb, yb, *(p[k] for k in MLP_NAMES))) + lam * float(norms.sum())) / accum
        history.append(total)
        p = {k: p[k] - lr * g[k] for k in MLP_NAMES}
    return p, history


LASSO_ROWS, LASSO_COLS = 2, 3


def lasso_draw(rng) -> dict:
    """A weight matrix for the group-lasso exercises with one column exactly zero."""
    zero = rng.randrange(LASSO_COLS)
    return {"W": [[0.0 if j == zero else rng.choice((-1, 1)) * rng.uniform(0.3, 2) for j in range(LASSO_COLS)]
                  for _ in range(LASSO_ROWS)]}
