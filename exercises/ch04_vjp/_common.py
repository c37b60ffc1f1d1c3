"""Chapter 4 helpers: an answer kind that reads the shapes of known slips, and a numeric Jacobian.

Chapter 4's typical mistakes change the shape of the answer: a dot product (one number) where
a vector-Jacobian product (a vector) belongs, a whole Jacobian where one row belongs, a
transposed Jacobian. Plain ``Tensor(shape)`` refuses those as invalid; this kind reads them so
the judge can diagnose them. They can never be right: the comparison checks the shape first.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from autograder.kinds import Invalid, Tensor
from autograder.numeric import Fn, tensor_gradient, vjp
from autograder.plain import Plain


def _drop_ones(shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(s for s in shape if s != 1)


@dataclass(frozen=True)
class TensorOrSlip(Tensor):
    """``Tensor(shape)``, plus answers whose shape is one of ``slips`` (judged, never right)."""

    slips: tuple[tuple[int, ...], ...] = ()

    def canonical(self, p: Plain) -> torch.Tensor:
        try:
            return super().canonical(p)
        except Invalid:
            slip = self._slip_shape(p)
            if slip is None:
                raise
            return Tensor(shape=slip).canonical(p)

    def _slip_shape(self, p: Plain) -> tuple[int, ...] | None:
        if p.get("t") != "array":
            return None
        shape = tuple(p["shape"])
        for slip in self.slips:
            if shape == slip or _drop_ones(shape) == _drop_ones(slip):
                return slip
        return None


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
