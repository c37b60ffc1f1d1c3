"""Trusted side: nbgrader's cell metadata, read in one place, for the trusted side and the tests.

The accessors follow nbgrader's own ``utils.is_grade``, ``is_solution`` and ``is_locked``.

Cells may come from a student's file: every accessor takes a dict or a ``NotebookNode`` of any
shape and never raises. The only writer of this metadata is ``gradtutor/authoring/cells.py``.
"""

from __future__ import annotations

from typing import Any


def nbgrader_meta(cell: Any) -> dict:
    """The cell's ``metadata.nbgrader`` dict, or an empty dict."""
    meta = cell.get("metadata") if isinstance(cell, dict) else None
    nbg = meta.get("nbgrader") if isinstance(meta, dict) else None
    return nbg if isinstance(nbg, dict) else {}


def grade_id(cell: Any) -> str | None:
    gid = nbgrader_meta(cell).get("grade_id")
    return gid if isinstance(gid, str) else None


def is_grade(cell: Any) -> bool:
    return bool(nbgrader_meta(cell).get("grade"))


def is_solution(cell: Any) -> bool:
    return bool(nbgrader_meta(cell).get("solution"))


def is_locked(cell: Any) -> bool:
    """nbgrader's rule: solution cells are editable, grade cells always locked."""
    nbg = nbgrader_meta(cell)
    if nbg.get("solution"):
        return False
    return bool(nbg.get("grade") or nbg.get("locked"))


def points(cell: Any) -> float:
    value = nbgrader_meta(cell).get("points", 0)
    return float(value) if type(value) in (int, float) else 0.0


def find(cells: list, wanted: str) -> Any:
    """The cell whose grade_id is ``wanted``, or None."""
    return next((c for c in cells if grade_id(c) == wanted), None)
