"""Second-order central differences: the finite-difference witness for chapter 8.

Not an exercise (the leading underscore keeps the registry away).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

H = 1e-4  # second differences divide by h²: a larger step than for first differences


def second_derivative(f: Callable[[float], float], x: float, h: float = H) -> float:
    return (f(x + h) - 2 * f(x) + f(x - h)) / h**2


def hessian(f: Callable[[list[float]], float], point: Sequence[float], h: float = H) -> list[list[float]]:
    """H[i][j] = (f(x+hei+hej) - f(x+hei-hej) - f(x-hei+hej) + f(x-hei-hej)) / 4h²."""
    n = len(point)

    def at(di: int, si: float, dj: int, sj: float) -> float:
        p = list(point)
        p[di] += si * h
        p[dj] += sj * h
        return f(p)

    return [[(at(i, 1, j, 1) - at(i, 1, j, -1) - at(i, -1, j, 1) + at(i, -1, j, -1)) / (4 * h * h)
             for j in range(n)] for i in range(n)]


def hvp(f: Callable[[list[float]], float], point: Sequence[float], v: Sequence[float]) -> list[float]:
    H_ = torch.tensor(hessian(f, point), dtype=torch.float64)
    return (H_ @ torch.tensor(v, dtype=torch.float64)).tolist()
