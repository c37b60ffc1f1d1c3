"""Students keep their work: a new release never overwrites a notebook a student has edited.

One rule, used in two places:

* ``make lab`` (``python hub/keepwork.py notebooks work``): the student's working copy ``work/``
  (untracked) is filled from the built ``notebooks/`` (tracked) only where a notebook is missing.
* JupyterHub (``hub/exchange.py``: nbgrader's fetch with this rule): fetching an assignment the
  student already has copies what is missing, as nbgrader's ``replace_missing_files`` does.

For every file the release copy the student started from is kept aside (the *base*). When the
release changes:

* a file the student never changed (equal to its base) is replaced by the new release;
  a notebook is compared by its content (``same_work``): cell types and sources, markdown
  attachments and the outputs of answer cells. Opening and saving it in JupyterLab without
  touching it (new metadata, execution counts, kernelspec, JSON layout) is not a change;
* a file the student changed is kept; the new release is written to an ``updates`` folder,
  with ``WHAT-CHANGED.txt`` naming the cells that the release changed.

This file has no import from the course package: it is copied into the student's server
environment on the hub, which holds the student runtime and nothing of the answer key.
"""

from __future__ import annotations

import filecmp
import json
import os
import shutil
import sys
from pathlib import Path

NOTE = "WHAT-CHANGED.txt"


def _cells(path: Path) -> dict[str, tuple[str, str]]:
    """A notebook's cells by nbgrader grade id (else the cell id): (type, source)."""
    try:
        nb = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    out = {}
    for i, cell in enumerate(nb.get("cells", [])):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        key = meta.get("grade_id") or cell.get("id") or f"cell {i + 1}"
        source = cell.get("source", "")
        out[key] = (cell.get("cell_type", ""), "".join(source) if isinstance(source, list) else source)
    return out


def _text(value: object) -> object:
    """nbformat stores multi-line strings as a list of lines or as one string: the same text."""
    return "".join(value) if isinstance(value, list) and all(isinstance(v, str) for v in value) else value


def _output(out: dict) -> tuple:
    """An output without what a rerun or a save rewrites (execution count, metadata, traceback)."""
    kind = out.get("output_type")
    if kind == "stream":
        return (kind, out.get("name"), _text(out.get("text", "")))
    if kind == "error":
        return (kind, out.get("ename"), out.get("evalue"))
    data = out.get("data", {})
    return (kind, sorted((k, _text(v)) for k, v in data.items()) if isinstance(data, dict) else data)


def _cell_work(cell: dict) -> tuple:
    """What of a cell is the student's: its type and source, a markdown cell's attachments, and
    the outputs of an answer cell (nbgrader ``solution``). Not its metadata or id, which
    JupyterLab rewrites, nor a lesson cell's outputs, which running it remakes."""
    answer = cell.get("metadata", {}).get("nbgrader", {}).get("solution", False) is True
    outputs = [_output(o) for o in cell.get("outputs", []) if isinstance(o, dict)] if answer else []
    return (cell.get("cell_type"), _text(cell.get("source", "")), cell.get("attachments") or {}, outputs)


def _notebook_work(path: Path) -> list[tuple] | None:
    """A notebook's cells as the student's work, or None if it is not a readable notebook."""
    try:
        nb = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(cells, list) or not all(isinstance(c, dict) for c in cells):
        return None
    return [_cell_work(c) for c in cells]


def same_work(a: Path, b: Path) -> bool:
    """Two copies hold the same work: equal notebook content (see ``_cell_work``) for notebooks,
    equal bytes for every other file (and for a notebook that does not parse)."""
    if filecmp.cmp(a, b, shallow=False):
        return True
    if a.suffix != ".ipynb" or b.suffix != ".ipynb":
        return False
    work_a, work_b = _notebook_work(a), _notebook_work(b)
    return work_a is not None and work_a == work_b


def changed_cells(old: Path, new: Path) -> list[str]:
    """What a release changed between two versions of a notebook, one line per cell."""
    before, after = _cells(old), _cells(new)
    lines = [f"added {k}" for k in after if k not in before]
    lines += [f"removed {k}" for k in before if k not in after]
    lines += [f"changed {k}" for k in after if k in before and after[k] != before[k]]
    return lines


def refresh(release: Path, mine: Path, base: Path, *, updates: Path | None = None) -> list[str]:
    """Bring ``mine`` up to ``release`` without touching the student's edits; ``base`` holds the
    release files each of ``mine`` was copied from. Returns what it did, one line a file."""
    updates = updates if updates is not None else mine / "updates"
    said: list[str] = []
    notes: list[str] = []
    for src in sorted(p for p in release.rglob("*") if p.is_file() and ".ipynb_checkpoints" not in p.parts):
        rel = src.relative_to(release)
        dest, kept = mine / rel, base / rel
        if not dest.exists():
            _copy(src, dest)
            _copy(src, kept)
            said.append(f"new: {rel}")
        elif filecmp.cmp(src, dest, shallow=False):
            _copy(src, kept)
        elif kept.exists() and filecmp.cmp(kept, src, shallow=False):
            continue  # the release has not changed since the student's copy
        elif same_work(src, dest) or (kept.exists() and same_work(kept, dest)):
            _copy(src, dest)  # the student had not changed it: take the new release
            _copy(src, kept)
            said.append(f"updated: {rel} (you had not changed it)")
        else:
            _copy(src, updates / rel)
            cells = changed_cells(kept, src) if kept.exists() else ["(no earlier release on record)"]
            notes.append(
                f"{rel}: the release changed {len(cells)} cell(s):\n" + "".join(f"  - {c}\n" for c in cells)
            )
            said.append(
                f"kept your {rel}: the new release is {updates.name}/{rel}, see {updates.name}/{NOTE}"
            )
    if notes:
        updates.mkdir(parents=True, exist_ok=True)
        (updates / NOTE).write_text(
            "Your edited files were kept. The new release of each is beside this file.\n\n" + "\n".join(notes)
        )
    return said


def _copy(src: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest)


def main(argv: list[str]) -> int:
    """``keepwork.py RELEASE WORK``: the working copy for ``make lab``."""
    release, work = Path(argv[0]), Path(argv[1])
    work.mkdir(exist_ok=True)
    for line in refresh(release, work, work / ".base"):
        print(line, file=sys.stderr)
    os.utime(work)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
