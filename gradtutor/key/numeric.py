"""Trusted side: central finite differences in float64, the third witness where smooth."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

Fn = Callable[[torch.Tensor], torch.Tensor]


def central_diff(f: Callable[[float], float], x: float, h: float = 1e-6) -> float:
    """(f(x + h) - f(x - h)) / 2h for a function of one number."""
    return (f(x + h) - f(x - h)) / (2 * h)


def gradient(f: Callable[..., float], point: Sequence[float], h: float = 1e-6) -> list[float]:
    """Central-difference gradient of a scalar function of several numbers."""
    out = []
    for i in range(len(point)):
        up, down = list(point), list(point)
        up[i] += h
        down[i] -= h
        out.append((f(*up) - f(*down)) / (2 * h))
    return out


def tensor_gradient(f: Fn, x: torch.Tensor, h: float = 1e-6) -> torch.Tensor:
    """Central-difference gradient of a scalar function of one float64 tensor."""
    x = x.detach().to(torch.float64)
    grad = torch.zeros_like(x)
    flat = grad.view(-1)
    for i in range(x.numel()):
        e = torch.zeros_like(x).view(-1)
        e[i] = h
        e = e.view_as(x)
        flat[i] = (f(x + e) - f(x - e)) / (2 * h)
    return grad


def vjp(f: Fn, x: torch.Tensor, v: torch.Tensor, h: float = 1e-6) -> torch.Tensor:
    """Central-difference vector-Jacobian product v^T J of a tensor function (CS231n style)."""
    return tensor_gradient(lambda t: (f(t) * v).sum(), x, h)


def descended(w0: float, lr: float, target: float, steps: int) -> torch.Tensor:
    """``steps`` steps of gradient descent on (w - target)², done right with autograd in float64:
    the reference of the exercises that repair such a loop."""
    w = torch.tensor(w0, dtype=torch.float64, requires_grad=True)
    for _ in range(steps):
        ((w - target) ** 2).backward()
        with torch.no_grad():
            w -= lr * w.grad
        w.grad = None
    return w.detach()
