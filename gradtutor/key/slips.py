"""Trusted side: the generic slips made from a reference alone (a flipped sign, a factor, a
transpose, rounding, a sum, a reordering), applied to a canonical answer.

The judge names them (``autograder.judge.GENERIC``); the tests check that each shows at some
grading variant, and ``tools/unround_hidden.py`` picks hidden values where they do.
"""

from __future__ import annotations

from typing import Any

import torch


def rounded(t: torch.Tensor) -> torch.Tensor:
    """Each entry to three significant digits, as a learner copies a printed number."""
    flat = [float(f"{v:.3g}") for v in t.reshape(-1).tolist()]
    return torch.tensor(flat, dtype=t.dtype).reshape(t.shape)


SLIPS = {
    "sign_flipped": lambda t: -t,
    "factor_two": lambda t: 2 * t,
    "factor_half": lambda t: t / 2,
    "factor_k": lambda t: 3 * t,
    "factor_one_over_k": lambda t: t / 3,
    "transposed": lambda t: t.T if t.dim() == 2 else t,
    "rounded": rounded,
    "summed": lambda t: t.sum() if t.numel() > 1 else t,
    "reordered": lambda t: t.reshape(-1).flip(0).reshape(t.shape),
}


def slipped(value: Any, slip: str) -> Any:
    """``value`` (a canonical answer) with the slip applied to each floating-point tensor in it."""
    if isinstance(value, torch.Tensor):
        return SLIPS[slip](value) if value.is_floating_point() else value
    if isinstance(value, dict):
        return {k: slipped(v, slip) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(slipped(v, slip) for v in value)
    return value
