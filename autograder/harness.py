"""What the grader runs on a student's function or class to read it: student side.

A function or ``torch.autograd.Function`` answer is graded by calling it on fresh inputs; the
``call=`` of its exercise unit reaches one of these through this module (``call``), so an
answer cell that redefines a name cannot stand in for it. Nothing here knows an answer: each
helper only runs the student's code and reports plain values. The student runtime and the
grading sandbox ship it; setup cells import it so students can run it on their own code.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch.autograd import gradcheck, gradgradcheck

F64 = torch.float64
MODULE = "autograder.harness"


def call(expression: str) -> str:
    """A ``call=`` expression that reaches this module without trusting the answer's names."""
    name = expression.split("(", 1)[0]
    return f"__import__({MODULE!r}, fromlist=[{name!r}]).{expression}"


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


def clip_run(attach: Callable[..., Any], w_values: list, x_values: list, c: float) -> Any:
    """Loss Σ (w·x)², backward with the student's hook, remove it by its handle, backward again."""
    w = torch.tensor(w_values, dtype=F64, requires_grad=True)
    x = torch.tensor(x_values, dtype=F64)
    handle = attach(w, c)
    if handle is Ellipsis:  # the starter function, unchanged: "not answered"
        return Ellipsis
    ((w * x) ** 2).sum().backward()
    clipped = w.grad.clone()
    handle.remove()
    w.grad = None
    ((w * x) ** 2).sum().backward()
    return {"with_hook": {"grad": clipped}, "after_remove": {"grad": w.grad}}


def saved_table(count: Callable[..., Any], functions: dict[str, Callable[..., Any]], x: torch.Tensor) -> Any:
    """The student's counter of saved tensors run on each of the setup's functions."""
    table = {}
    for name, fn in functions.items():
        saved = count(fn, x)
        if saved is Ellipsis:  # the starter function, unchanged: "not answered"
            return Ellipsis
        table[name] = {"saved": saved}
    return table
