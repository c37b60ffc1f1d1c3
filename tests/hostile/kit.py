"""A throwaway nbgrader course with synthetic submissions, for grading tests.

Answers are typed into the released notebook's answer cells, as a student would: the solution,
a known wrong answer written as a literal, or a typed-in copy of the correct value at the shown
parameters (which the hidden variants must catch).
"""

from __future__ import annotations

import contextlib
import copy
import fcntl
import math
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat
import torch
from nbformat import NotebookNode

from gradtutor.authoring import build
from gradtutor.key import registry
from gradtutor.key.exercise import Exercise
from gradtutor.key.registry import Chapter


def first_chapter() -> Chapter:
    return registry.chapters()[0]


# where make_course keeps the one build of each chapter's course that it copies (tests/conftest.py
# sets it for the run: a folder every pytest worker of the run shares, no other run)
TEMPLATES: Path | None = None


def make_course(root: Path, chapter: Chapter) -> NotebookNode:
    """Source + gradebook + release for one chapter; returns the released notebook. A copy of
    the run's one build of the chapter (source notebook, then nbgrader generate_assignment: the
    same files wherever the course is), built by whichever worker asks first."""
    shutil.rmtree(root, ignore_errors=True)
    if TEMPLATES is None:
        _build_course(root, chapter)
    else:
        shutil.copytree(_template(TEMPLATES, chapter), root, symlinks=True)
    return released(root, chapter)


def _build_course(root: Path, chapter: Chapter) -> None:
    build.write_source(chapter, root)
    build.release(chapter, root)


def _template(folder: Path, chapter: Chapter) -> Path:
    """The chapter's course, built once under a lock the workers share."""
    done = folder / chapter.slug
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / f"{chapter.slug}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not done.exists():
                building = folder / f".{chapter.slug}-building"
                shutil.rmtree(building, ignore_errors=True)
                _build_course(building, chapter)
                building.rename(done)  # whole or not at all: a failed build leaves no template
        finally:
            with contextlib.suppress(OSError):
                fcntl.flock(lock, fcntl.LOCK_UN)
    return done


def exercises_of(nb: NotebookNode) -> list[Exercise]:
    ids = registry.ids()
    return [registry.get(c.metadata["nbgrader"]["grade_id"]) for c in nb.cells
            if c.metadata.get("nbgrader", {}).get("grade") and c.metadata["nbgrader"]["grade_id"] in ids]


def source_literal(value: Any) -> str:
    """Python source a student could type for a reference-like value."""
    if isinstance(value, torch.Tensor):
        return f"torch.tensor({source_literal(value.detach().double().tolist())}, dtype=torch.float64)"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {source_literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(source_literal(v) for v in value) + "]"
    if isinstance(value, float) and not math.isfinite(value):
        return f'float("{value}")'
    return repr(value)


def typed(ex: Exercise, value: Any) -> str:
    """An answer cell that types ``value`` in (a function answer returns it)."""
    text = source_literal(value)
    if ex.is_function:
        return f"def {ex.answer}(*args, **kwargs):\n    return {text}"
    return f"{ex.answer} = {text}"


def solution(ex: Exercise) -> str:
    return ex.solution.strip()


def wrong(ex: Exercise, k: int) -> str | None:
    if k >= len(ex.wrong):
        return None
    return typed(ex, ex.wrong[k].value(**ex.params))


def hardcoded(ex: Exercise) -> str:
    return typed(ex, ex.reference(**ex.params))


def index(nb: NotebookNode, grade_id: str) -> int | None:
    for i, c in enumerate(nb.cells):
        if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id:
            return i
    return None


def answered(released: NotebookNode, answer: Callable[[Exercise], str | None]) -> NotebookNode:
    """A copy of the released notebook with each answer cell replaced by ``answer(ex)``."""
    nb = copy.deepcopy(released)
    for ex in exercises_of(nb):
        code = answer(ex)
        at = index(nb, f"{ex.id}-answer")
        if code is not None and at is not None:
            nb.cells[at].source = code
    return nb


def submit(root: Path, student: str, chapter: Chapter, nb: NotebookNode | str | bytes) -> Path:
    path = root / "submitted" / student / chapter.slug / f"{chapter.slug}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(nb, bytes):
        path.write_bytes(nb)
    elif isinstance(nb, str):
        path.write_text(nb)
    else:
        nbformat.write(nb, path)
    return path


def released(root: Path, chapter: Chapter) -> NotebookNode:
    return nbformat.read(root / "release" / chapter.slug / f"{chapter.slug}.ipynb", as_version=4)


def processes_of_uids(uids: range) -> list[tuple[str, int]]:
    """(pid, uid) of every live process whose real uid is in ``uids``: what a batch left behind."""
    left = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            lines = status.read_text().splitlines()
        except OSError:  # gone while we looked
            continue
        uid = next((int(line.split()[1]) for line in lines if line.startswith("Uid:")), -1)
        if uid in uids:
            left.append((status.parent.name, uid))
    return left
