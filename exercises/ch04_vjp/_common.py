"""Chapter 4 helpers: the answer kind that reads the shapes of known slips (it lives in
``autograder.kinds``, which the student runtime ships), and a numeric Jacobian."""

from __future__ import annotations

import torch

from gradtutor.key.numeric import Fn, tensor_gradient, vjp


def fd_jacobian(f: Fn, x: torch.Tensor) -> torch.Tensor:
    """Central-difference Jacobian, one output (one row) at a time; no autograd involved."""
    x = torch.as_tensor(x, dtype=torch.float64)
    rows = f(x).numel()
    return torch.stack([tensor_gradient(lambda t, i=i: f(t).reshape(-1)[i], x) for i in range(rows)])


def one_hot(n: int, i: int) -> list[float]:
    return [1.0 if k == i else 0.0 for k in range(n)]


# y = x², seeded with v (reference set 002, 4.2): the witnesses both seed exercises share
def square_seed_reference(x0: list[float], v: list[float]) -> torch.Tensor:
    x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    (x**2).backward(torch.tensor(v, dtype=torch.float64))
    return x.grad


def square_seed_analytic(x0: list[float], v: list[float]) -> list[float]:
    # J = diag(2x), so vᵀJ = [v_i · 2x_i]: each seed entry weights its own output's derivative
    return [vi * 2 * xi for xi, vi in zip(x0, v, strict=True)]


def square_seed_finite_diff(x0: list[float], v: list[float]) -> torch.Tensor:
    return vjp(lambda t: t**2, torch.tensor(x0), torch.tensor(v, dtype=torch.float64))
