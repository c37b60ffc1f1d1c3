"""The plain-maths helpers of chapter 9's witnesses. Not an exercise (the leading underscore
keeps the registry away). What the grader runs on a student's class lives on the student side,
in ``autograder.harness`` (re-exported here for the units' references)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from autograder.harness import call, function_report  # noqa: F401 - the units' references use them

F64 = torch.float64
def central(f: Callable[[float], float], x: float, h: float = 1e-6) -> float:
    return (f(x + h) - f(x - h)) / (2 * h)


def sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x)) if x >= 0 else math.exp(x) / (1 + math.exp(x))


def softplus(x: float) -> float:
    return max(x, 0.0) + math.log1p(math.exp(-abs(x)))


def report_row(value: list, grads: dict[str, list], gradcheck_ok: bool,
               gradgradcheck_ok: bool | None = True) -> dict[str, dict[str, Any]]:
    """The same table written from plain numbers (the analytic and finite-difference witnesses)."""
    row: dict[str, Any] = {"value": value, **grads, "gradcheck": gradcheck_ok}
    if gradgradcheck_ok is not None:
        row["gradgradcheck"] = gradgradcheck_ok
    return {"report": row}
