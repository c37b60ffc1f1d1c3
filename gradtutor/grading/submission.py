"""Trusted side: submissions as data: where they are, how to read them safely, what a grader runs.

``sanitise`` does what nbgrader's DeduplicateIds + OverwriteCells(add_missing_cells=True) do,
from the SOURCE notebook instead of the gradebook: locked cells (setup, grade) get their
source back by ``grade_id``, deleted grade cells come back, duplicated ids keep the last copy.
Nothing here runs student code. Every file under submitted/ is hostile: it is opened once,
beneath the course folder without following a symbolic link at any step, checked to be a
regular file after opening, and read with a cap; its JSON is parsed once, and only the fields
a grader needs are kept, so no nesting or size inside it reaches the rest of the grader.
``load`` turns one submission into the job its sandbox child runs.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
from nbformat import NotebookNode

from autograder.byhand import ANSWER_CELL_SUFFIX
from autograder.contract import Job, JobCell
from gradtutor.course import Course
from gradtutor.key import registry
from gradtutor.key.answer_key import is_by_hand, spec
from gradtutor.nbcells import grade_id, is_grade, is_locked, is_solution, nbgrader_meta
from gradtutor.records.files import MAX_NOTEBOOK_BYTES, Unreadable, read_beneath
from gradtutor.records.submissions import Cell, Submission

__all__ = ["Cell", "Submission", "Unreadable", "find", "first_imports", "lesson_imports", "load",
           "parse", "read", "sanitise"]


def find(course: Course, assignments: list[str] | None = None) -> list[Submission]:
    """Every ``submitted/<student>/<assignment>/<notebook>.ipynb`` whose assignment has a source.

    Nothing is followed: a student or assignment folder that is a symbolic link, or a notebook
    that is not a regular file, is still listed, with the reason it will not be read.
    """
    found = []
    sources = course.source_assignments()
    for student in _entries(course.submitted):
        for assignment in _entries(Path(student.path)) if _is_dir(student) else []:
            if assignment.name not in sources or (assignments and assignment.name not in assignments):
                continue
            folder = Path(assignment.path)
            if not _is_dir(assignment) or not _is_dir(student):
                why = _not_a_folder(student if not _is_dir(student) else assignment)
                found += [Submission(student.name, assignment.name, nb, folder / f"{nb}.ipynb", why)
                          for nb in sources[assignment.name]]
                continue
            for entry in _entries(folder):
                if entry.name.endswith(".ipynb") and entry.name[:-6] in sources[assignment.name]:
                    found.append(Submission(student.name, assignment.name, entry.name[:-6],
                                            Path(entry.path), _not_a_file(entry)))
        if not _is_dir(student) and student.is_symlink():
            for name, nbs in sources.items():
                if not assignments or name in assignments:
                    found += [Submission(student.name, name, nb, Path(student.path) / name / f"{nb}.ipynb",
                                         _not_a_folder(student)) for nb in nbs]
    return found


def _entries(folder: Path) -> list[os.DirEntry]:
    try:
        return sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return []


def _is_dir(entry: os.DirEntry) -> bool:
    return entry.is_dir(follow_symlinks=False)


def _not_a_folder(entry: os.DirEntry) -> str:
    return (f"submitted/.../{entry.name} is a symbolic link, not a folder: the grader does not follow "
            "links. Submit the notebook itself." if entry.is_symlink() else f"{entry.name} is not a folder.")


def _not_a_file(entry: os.DirEntry) -> str:
    if entry.is_symlink():
        return ("The submitted notebook is a symbolic link, not a file: the grader does not follow links. "
                "Submit the notebook itself.")
    if not entry.is_file(follow_symlinks=False):
        return ("The submitted notebook is not a regular file (a pipe, device or folder); submit the "
                "notebook itself.")
    return ""


def read(sub: Submission, course: Course, parts: tuple[str, ...] | None = None) -> list[dict]:
    """The submitted notebook's cells, as small dicts of the fields a grader reads, or
    ``Unreadable`` with a reason for the student. The file is ``parts`` beneath the course
    folder (default: submitted/<student>/<assignment>/<notebook>.ipynb)."""
    if sub.problem:
        raise Unreadable(sub.problem)
    parts = parts or course.submitted_parts(sub.student, sub.assignment, sub.path.name)
    raw = read_beneath(course.root, parts, MAX_NOTEBOOK_BYTES)
    return parse(raw)


def parse(raw: bytes) -> list[dict]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Unreadable(f"The notebook file is not UTF-8 text (bad byte at position {e.start}); "
                         "it may be corrupted. Download it again from Jupyter.") from None
    try:
        data = json.loads(text)
    except RecursionError:  # the C parser's own depth bound (the interpreter's recursion limit)
        raise Unreadable("The notebook file is nested too deeply to be a notebook.") from None
    except json.JSONDecodeError as e:
        if not text.rstrip().endswith("}"):  # every notebook ends with its closing brace
            raise Unreadable("The notebook file is not valid JSON: it ends too early (truncated "
                             "upload or disk full?). Download it again from Jupyter.") from None
        raise Unreadable(f"The notebook file is not valid JSON: {e.msg} (line {e.lineno}, "
                         f"column {e.colno}).") from None
    if not isinstance(data, dict) or not isinstance(data.get("cells", []), list):
        raise Unreadable("The file is JSON but not a notebook (no list of cells).")
    version = data.get("nbformat")
    if version == 3 and isinstance(data.get("worksheets"), list):
        data = _from_v3(text)
    elif version != 4:
        raise Unreadable(f"The notebook has format version {version!r}; only version 4 (what "
                         "Jupyter writes today) can be graded.")
    return [_cell(c) for c in data.get("cells", [])]


def _from_v3(text: str) -> dict:
    try:
        nb = nbformat.reads(text, as_version=4)
    except (Exception, RecursionError) as e:  # nbformat's own checks: a clear reason, not a crash
        raise Unreadable(f"The version-3 notebook could not be converted ({type(e).__name__}).") from None
    return {"cells": [dict(c) for c in nb.cells]}


def _cell(c: Any) -> dict:
    """Only what the grader reads: type, source, nbgrader's grade_id / grade flag."""
    if not isinstance(c, dict):
        raise Unreadable("A cell of the notebook is malformed (not an object).")
    source = c.get("source", "")
    if isinstance(source, list):
        with contextlib.suppress(TypeError):  # a list of lines: str.join checks each is a string
            source = "".join(source)
    if not isinstance(source, str):
        raise Unreadable("A cell of the notebook is malformed (no text source).")
    return {"cell_type": c.get("cell_type") if isinstance(c.get("cell_type"), str) else "raw",
            "source": source, "metadata": {"nbgrader": {
                "grade_id": grade_id(c), "grade": nbgrader_meta(c).get("grade") is True}}}


def sanitise(submitted: list[dict], source: NotebookNode) -> list[Cell]:
    """The cells to run, in order: the student's cells with locked ones restored from source."""
    known = {grade_id(c): c for c in source.cells if grade_id(c)}
    cells = [dict(cell_type=c.get("cell_type"), source=c.get("source", ""),
                  grade_id=grade_id(c), grade=is_grade(c)) for c in submitted]
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
    order = [grade_id(c) for c in source.cells]
    for i, ref in enumerate(source.cells):
        gid = grade_id(ref)
        if not is_grade(ref) or any(c["grade_id"] == gid and c["grade"] for c in cells):
            continue
        for c in cells:  # a cell that kept the id but lost grade=True is replaced
            if c["grade_id"] == gid:
                c["grade_id"] = None
        before = {g for g in order[:i] if g}
        at = max((k + 1 for k, c in enumerate(cells) if c["grade_id"] in before), default=len(cells))
        cells.insert(at, dict(cell_type=ref.cell_type, source=ref.source, grade_id=gid, grade=True))


def load(course: Course, sub: Submission, source: Any, parts: tuple[str, ...] | None = None
         ) -> tuple[list[Cell] | None, Job | None, str]:
    """(sanitised cells, the child's job, why it is unreadable): the file is read once, here,
    at ``submitted/<student>/<assignment>/<notebook>`` beneath the course (or at ``parts``)."""
    try:
        cells = sanitise(read(sub, course, parts), source)
    except Unreadable as e:
        return None, None, str(e)
    specs = {c.exercise: spec(registry.get(c.exercise)) for c in cells if c.exercise is not None}
    job = tuple(JobCell(c.kind, _job_source(c), c.exercise, _by_hand_answer(c)) for c in cells)
    return cells, Job(job, specs), ""


def _by_hand_answer(cell: Cell) -> bool:
    """Is this the answer cell of a by-hand exercise? The kernel runs it with autograd off
    (``autograder.byhand.KernelHook``); so does the sandbox, or code the kernel refuses there
    (a dual level left open) would change the rest of the notebook."""
    gid = cell.grade_id or ""
    if not gid.endswith(ANSWER_CELL_SUFFIX):
        return False
    return is_by_hand(gid[: -len(ANSWER_CELL_SUFFIX)])


BEGIN_HIDDEN = "### BEGIN HIDDEN TESTS"
END_HIDDEN = "### END HIDDEN TESTS"


def _job_source(cell: Cell) -> str:
    """What the sandbox gets of a cell: a grade cell is not run there (its answers are read in
    its place), so it goes empty; no cell carries hidden tests."""
    return "" if cell.exercise is not None else strip_hidden_tests(cell.source)


def strip_hidden_tests(source: str) -> str:
    """``source`` without its hidden-test blocks, as nbgrader's ClearHiddenTests takes them out:
    from a line that begins (after spaces or tabs) with ``BEGIN_HIDDEN`` through the next line
    that begins with ``END_HIDDEN``, both whole; a BEGIN with no END after it stays.

    A linear scan of the student's text, never a regular expression: each line is looked at a
    bounded number of times, so tens of thousands of marker lines cost what their bytes cost
    (``hidden_test_steps`` counts it; tests/test_hostile_messages.py holds it to that).
    """
    return "".join(_kept_lines(source.split("\n")))


def hidden_test_steps(source: str) -> int:
    """How many line visits ``strip_hidden_tests`` makes on ``source``: at most twice its lines."""
    lines = source.split("\n")
    return len(lines) + sum(1 for _ in _kept_lines(lines, count_only=True))


def _kept_lines(parts: list[str], *, count_only: bool = False) -> Iterator[str]:
    """The lines of ``parts`` (``source.split("\\n")``, newlines given back) outside hidden-test
    blocks; with ``count_only``, one item per line visit instead."""
    last = len(parts) - 1
    next_end = [-1] * (last + 2)  # the first END line at or after each line: one pass from the end
    for k in range(last, -1, -1):
        next_end[k] = k if parts[k].lstrip(" \t").startswith(END_HIDDEN) else next_end[k + 1]
    i = 0
    while i <= last:
        line = parts[i] + ("\n" if i < last else "")
        end = next_end[i + 1] if parts[i].lstrip(" \t").startswith(BEGIN_HIDDEN) else -1
        if count_only:
            yield ""
        elif end < 0:
            yield line
        i = i + 1 if end < 0 else end + 1


def first_imports(sources: dict[str, dict[str, Any]], first: str) -> tuple[list[str], list[str]]:
    """``lesson_imports`` split for the zygote: (what it runs before its first fork, what it
    runs between forks). Before: the lines of ``first`` (the assignment whose children come
    first) and every line that imports the student runtime, so that each child's guard covers
    the runtime's modules whatever its chapter (the zygote preloads them anyway: no cost).
    After: the other chapters' own imports."""
    now = set(lesson_imports({first: sources[first]})) if first in sources else set()
    rest = set(lesson_imports(sources))
    now |= {line for line in rest if _imports_runtime(line)}
    return sorted(now), sorted(rest - now)


def _imports_runtime(line: str) -> bool:
    return any(name == "autograder" or name.startswith("autograder.")
               for node in ast.walk(ast.parse(line))
               for name in ([a.name for a in node.names] if isinstance(node, ast.Import) else
                            [node.module or ""] if isinstance(node, ast.ImportFrom) else []))


def lesson_imports(sources: dict[str, dict[str, Any]]) -> list[str]:
    """The import lines of the lessons' own cells (never a solution cell's): the zygote runs
    them once, so that children find the modules loaded."""
    lines = set()
    for nbs in sources.values():
        for nb in nbs.values():
            for cell in nb.cells:
                if cell.cell_type != "code" or is_solution(cell):
                    continue
                try:
                    tree = ast.parse(cell.source)
                except SyntaxError:
                    continue
                lines.update(ast.unparse(n) for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom))
    return sorted(lines)
