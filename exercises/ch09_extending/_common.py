"""What the grader runs on a student's ``torch.autograd.Function``, and the plain-maths helpers
of chapter 9's witnesses. Not an exercise (the leading underscore keeps the registry away).

``function_report`` is imported by the setup cells, so students can run it on their own class;
the grader reaches it through its module, so a redefinition in an answer cell changes nothing.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch.autograd import gradcheck, gradgradcheck

F64 = torch.float64
MODULE = "exercises.ch09_extending._common"


def call(expression: str) -> str:
    """A ``call=`` expression that reaches this module without trusting the answer's names."""
    return f"__import__({MODULE!r}, fromlist=['function_report']).{expression}"


def _fresh(inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    return [torch.as_tensor(t, dtype=F64).detach().clone().requires_grad_(True) for t in inputs]


def _passes(check: Callable[..., bool], apply: Callable[..., Any], inputs: list[torch.Tensor]) -> bool:
    try:
        return bool(check(apply, tuple(inputs), raise_exception=False))
    except RuntimeError:  # e.g. a first derivative with no graph: the check did not pass
        return False


def function_report(apply: Callable[..., Any], inputs: Sequence[torch.Tensor], seed: torch.Tensor,
                    *, second: bool = True) -> Any:
    """Run ``apply`` (a Function's ``.apply``) on fresh float64 copies of ``inputs``.

    Returns one table row: the forward value, the gradient of ``(seed * out).sum()`` with
    respect to each input (``grad`` for one input; ``grad_x``, ``grad_y`` ... otherwise), and
    whether ``gradcheck`` and (with ``second``) ``gradgradcheck`` pass.
    """
    xs = _fresh(inputs)
    out = apply(*xs)
    if out is Ellipsis:  # the starter function, unchanged: "not answered", not an error
        return Ellipsis
    grads = torch.autograd.grad(out, xs, grad_outputs=torch.as_tensor(seed, dtype=F64),
                                allow_unused=True)
    row: dict[str, Any] = {"value": out.detach()}
    if len(xs) == 1:
        row["grad"] = grads[0]
    else:
        row.update({f"grad_{name}": g for name, g in zip("xyzw", grads, strict=False)})
    row["gradcheck"] = _passes(gradcheck, apply, _fresh(inputs))
    if second:
        row["gradgradcheck"] = _passes(gradgradcheck, apply, _fresh(inputs))
    return {"report": row}


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
