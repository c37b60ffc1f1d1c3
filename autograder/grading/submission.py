"""Submissions as data: where they are, and what cells a grader should run.

``sanitise`` does what nbgrader's DeduplicateIds + OverwriteCells(add_missing_cells=True) do,
from the SOURCE notebook instead of the gradebook: locked cells (setup, grade) get their
source back by ``grade_id``, deleted grade cells come back, duplicated ids keep the last copy.
Nothing here runs student code; reading is size-capped so an enormous file is a reason, not
an out-of-memory parent.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
from nbformat import NotebookNode
from nbformat.v4 import nbjson

MAX_NOTEBOOK_BYTES = 20 * 2**20  # course notebooks are ~100 kB; anything this big is a mistake


@dataclass(frozen=True)
class Submission:
    student: str
    assignment: str
    notebook: str  # notebook id (file stem), as in the gradebook
    path: Path

    @property
    def key(self) -> str:
        return f"{self.student}/{self.assignment}/{self.notebook}"


class Unreadable(Exception):
    """The file is not a notebook we can grade; the message says why, for the student."""


@dataclass(frozen=True)
class Cell:
    kind: str  # "code" or "markdown" / "raw"
    source: str
    grade_id: str | None  # only for cells the source notebook knows
    exercise: str | None  # set on grade cells of registered exercises: collect answers here


def find(course_dir: Path, assignments: list[str] | None = None) -> list[Submission]:
    """Every ``submitted/<student>/<assignment>/<notebook>.ipynb`` whose assignment has a source."""
    found = []
    for nb in sorted(course_dir.glob("submitted/*/*/*.ipynb")):
        student, assignment = nb.parent.parent.name, nb.parent.name
        if assignments and assignment not in assignments:
            continue
        if (course_dir / "source" / assignment / nb.name).exists():
            found.append(Submission(student, assignment, nb.stem, nb))
    return found


def source_notebooks(course_dir: Path, assignment: str) -> dict[str, NotebookNode]:
    folder = course_dir / "source" / assignment
    return {p.stem: nbformat.read(p, as_version=4) for p in sorted(folder.glob("*.ipynb"))}


def _nbgrader(cell: Any) -> dict:
    meta = cell.get("metadata") if isinstance(cell, dict) else None
    nbg = meta.get("nbgrader") if isinstance(meta, dict) else None
    return nbg if isinstance(nbg, dict) else {}


def is_grade(cell: Any) -> bool:
    return bool(_nbgrader(cell).get("grade"))


def is_locked(cell: Any) -> bool:
    """nbgrader's rule: solution cells are editable, grade cells always locked."""
    nbg = _nbgrader(cell)
    if nbg.get("solution"):
        return False
    return bool(nbg.get("grade") or nbg.get("locked"))


def grade_cells(source: NotebookNode) -> list[tuple[str, float]]:
    """(grade_id, points) of every grade cell, in notebook order."""
    return [(_nbgrader(c)["grade_id"], float(_nbgrader(c).get("points", 0))) for c in source.cells
            if is_grade(c)]


def read(path: Path) -> NotebookNode:
    """Parse an untrusted file as a version-4 notebook, or raise ``Unreadable`` with a reason."""
    size = path.stat().st_size
    if size > MAX_NOTEBOOK_BYTES:
        raise Unreadable(f"The notebook file is {size / 2**20:.0f} MiB; the limit is "
                         f"{MAX_NOTEBOOK_BYTES // 2**20} MiB. Clear large outputs and submit again.")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Unreadable(f"The notebook file is not UTF-8 text (bad byte at position {e.start}); "
                         "it may be corrupted. Download it again from Jupyter.") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        if not text.rstrip().endswith("}"):  # every notebook ends with its closing brace
            raise Unreadable("The notebook file is not valid JSON: it ends too early (truncated "
                             "upload or disk full?). Download it again from Jupyter.") from None
        raise Unreadable(f"The notebook file is not valid JSON: {e.msg} (line {e.lineno}, "
                         f"column {e.colno}).") from None
    if not isinstance(data, dict) or not isinstance(data.get("cells", []), list):
        raise Unreadable("The file is JSON but not a notebook (no list of cells).")
    version = data.get("nbformat")
    if version != 4 and not (version == 3 and "worksheets" in data):
        raise Unreadable(f"The notebook has format version {version!r}; only version 4 (what "
                         "Jupyter writes today) can be graded.")
    try:
        # nbformat.reads would parse the text again and run the JSON schema over it only to log
        # what it finds (5-8 ms per notebook); the checks here and in sanitise() are the guard
        nb = nbjson.to_notebook(data) if version == 4 else nbformat.reads(text, as_version=4)
    except Exception as e:  # nbformat's own checks: a clear reason, not a crash
        raise Unreadable(f"The notebook could not be read: {type(e).__name__}: "
                         f"{str(e)[:200]}") from None
    for cell in nb.cells:
        if not isinstance(cell, dict) or not isinstance(cell.get("source", ""), str):
            raise Unreadable("A cell of the notebook is malformed (no text source).")
    return nb


def sanitise(submitted: NotebookNode, source: NotebookNode) -> list[Cell]:
    """The cells to run, in order: the student's cells with locked ones restored from source."""
    known = {_nbgrader(c)["grade_id"]: c for c in source.cells if _nbgrader(c).get("grade_id")}
    cells = [dict(cell_type=c.get("cell_type"), source=c.get("source", ""),
                  grade_id=_nbgrader(c).get("grade_id"), grade=is_grade(c)) for c in submitted.cells]
    _deduplicate(cells)
    for c in cells:
        ref = known.get(c["grade_id"])
        if ref is None:
            c["grade_id"] = None  # unknown to the source: an ordinary cell
            continue
        c["cell_type"] = ref.cell_type
        if is_locked(ref):
            c["source"] = ref.source
        c["grade"] = is_grade(ref)
    _add_missing(cells, source)
    from .. import registry

    exercises = set(registry.ids())
    return [Cell(kind=str(c["cell_type"]), source=str(c["source"]), grade_id=c["grade_id"],
                 exercise=c["grade_id"] if c["grade"] and c["grade_id"] in exercises else None)
            for c in cells]


def _deduplicate(cells: list[dict]) -> None:
    # like DeduplicateIds: the LAST cell with an id keeps it, earlier copies become plain cells
    seen: set[str] = set()
    for c in reversed(cells):
        gid = c["grade_id"]
        if gid is None:
            continue
        if gid in seen:
            c["grade_id"], c["grade"] = None, False
        seen.add(gid)


def _add_missing(cells: list[dict], source: NotebookNode) -> None:
    # like add_missing_cells: a deleted grade cell goes back after the cell before it in source
    order = [_nbgrader(c).get("grade_id") for c in source.cells]
    for i, ref in enumerate(source.cells):
        gid = _nbgrader(ref).get("grade_id")
        if not is_grade(ref) or any(c["grade_id"] == gid and c["grade"] for c in cells):
            continue
        for c in cells:  # a cell that kept the id but lost grade=True is replaced
            if c["grade_id"] == gid:
                c["grade_id"] = None
        before = {g for g in order[:i] if g}
        at = max((k + 1 for k, c in enumerate(cells) if c["grade_id"] in before), default=len(cells))
        cells.insert(at, dict(cell_type=ref.cell_type, source=ref.source, grade_id=gid, grade=True))
