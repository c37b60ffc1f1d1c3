"""Student side: answers shipped sealed, as a salted digest of their canonical value, not the value.

An answer that is the same at every variant (a grad_fn name, an error name, a table of flags)
would earn full marks if its shown-value copy in the runtime's check data could be typed in. So
the runtime ships such an answer, and its listed wrong answers, as ``Sealed``: SHA-256 of a salt
(one per exercise, and per cell of a table) and the answer's canonical JSON. The self-check seals
the student's answer the same way and compares digests: right, wrong, which entries, which listed
mistake, without the value. Numbers are written with six significant digits first, so a float32
answer seals as its float64 twin. A seal stops copying, not searching: trying every possible
value against it finds the answer, as trying them with ``check()`` does (docs/grading.md).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from autograder.plain import to_plain

DIGITS = 6  # significant digits numbers keep before sealing (the kinds' rtol is 1e-4)


@dataclass(frozen=True)
class Sealed:
    salt: str
    digest: str

    def holds(self, value: Any) -> bool:
        """Is ``value`` (a canonical value, or another seal of this exercise) what this seals?"""
        if isinstance(value, Sealed):
            return value == self
        try:
            return seal(self.salt, value).digest == self.digest
        except (TypeError, ValueError):
            return False

    def to_json(self) -> dict[str, str]:
        return {"t": "sealed", "salt": self.salt, "digest": self.digest}


def _round(v: Any) -> Any:
    if isinstance(v, list):
        return [_round(x) for x in v]
    if isinstance(v, float):
        r = float(f"{v:.{DIGITS}g}")
        return 0.0 if r == 0 else r  # -0.0 and 0.0 seal alike
    return v


def _normal(p: Any) -> Any:
    """Plain data as the seal reads it: arrays without their dtype, numbers rounded."""
    if isinstance(p, dict):
        if p.get("t") == "array":
            return {"t": "array", "shape": p.get("shape"), "v": _round(p.get("v"))}
        return {str(k): _normal(v) for k, v in p.items()}
    if isinstance(p, list):
        return [_normal(x) for x in p]
    return _round(p)


def seal(salt: str, value: Any) -> Sealed:
    """The seal of a canonical value (not a table: see ``seal_table``) under ``salt``."""
    text = json.dumps(_normal(to_plain(value)), sort_keys=True, separators=(",", ":"))
    return Sealed(salt, hashlib.sha256(f"{salt}\n{text}".encode()).hexdigest())


def from_json(p: Any) -> Sealed | None:
    """The seal ``p`` holds, or None where ``p`` is a plain value."""
    if isinstance(p, dict) and p.get("t") == "sealed":
        return Sealed(str(p["salt"]), str(p["digest"]))
    return None


def seal_table(salt: str, table: dict[str, dict[str, Any]]) -> dict[str, dict[str, Sealed]]:
    """A table sealed cell by cell, so that feedback can still name the wrong entries."""
    return {r: {c: seal(f"{salt}:{r}.{c}", v) for c, v in row.items()} for r, row in table.items()}


def to_json(c: Any) -> Any:
    """Plain data for a canonical value that may be, or hold, seals (``None`` when it holds none)."""
    if isinstance(c, Sealed):
        return c.to_json()
    if isinstance(c, dict) and any(isinstance(v, Sealed) for row in c.values() if isinstance(row, dict)
                                   for v in row.values()):
        return {"t": "dict", "v": {r: {"t": "dict", "v": {k: to_json(v) for k, v in row.items()}}
                                   for r, row in c.items()}}
    return None
