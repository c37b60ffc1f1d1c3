"""Trusted side: find exercises and chapters by convention, ``exercises/chNN_slug/<id>.py``.

One module is one exercise, and its file name is the exercise id. Chapters are the folders,
each with a ``lesson.md``. Nothing is registered by hand; loading one exercise imports only
its own module, so the first self-check in a notebook stays fast.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

import exercises
from gradtutor.key.exercise import Exercise

ROOT = Path(exercises.__file__).parent
_CHAPTER_DIR = re.compile(r"ch(\d\d)_(\w+)")
_DIRECTIVE = re.compile(r"^```exercise\s*\n(\w+)\s*\n```", re.M)


@dataclass(frozen=True)
class Chapter:
    number: int
    slug: str  # folder name, also the nbgrader assignment and notebook name
    path: Path

    @property
    def lesson(self) -> Path:
        return self.path / "lesson.md"

    @property
    def title(self) -> str:
        for line in self.lesson.read_text().splitlines():
            if line.startswith("# "):
                return line[2:].strip()
        return self.slug

    def exercise_ids(self) -> list[str]:
        """Exercise ids in the order the lesson poses them (none while the lesson is unwritten)."""
        if not self.lesson.exists():  # a chapter folder still being written must not break the rest
            return []
        return _DIRECTIVE.findall(self.lesson.read_text())


@cache
def chapters() -> list[Chapter]:
    found = []
    for d in sorted(ROOT.iterdir()):
        m = _CHAPTER_DIR.fullmatch(d.name)
        if m and d.is_dir():
            found.append(Chapter(int(m.group(1)), d.name, d))
    return found


@cache
def _module_paths() -> dict[str, str]:
    ids: dict[str, str] = {}
    for ch in chapters():
        for f in sorted(ch.path.glob("*.py")):
            if f.stem.startswith("_"):
                continue
            if f.stem in ids:
                raise RuntimeError(f"exercise id {f.stem!r} is used twice: {ids[f.stem]} and {ch.slug}")
            ids[f.stem] = f"exercises.{ch.slug}.{f.stem}"
    return ids


def module_path(exercise_id: str) -> str:
    """The unit's module, ``exercises.chNN_slug.<id>``; ``KeyError`` (of the id) if there is none."""
    return _module_paths()[exercise_id]


@cache
def get(exercise_id: str) -> Exercise:
    """The exercise with this id; ``KeyError`` (of the id) if there is none."""
    paths = _module_paths()
    if exercise_id not in paths:
        raise KeyError(exercise_id)
    ex = importlib.import_module(paths[exercise_id]).EXERCISE
    if ex.id or ex.chapter:
        raise RuntimeError(f"{paths[exercise_id]} declares its id or chapter; both come from its "
                           "path (exercises/chNN_slug/<id>.py), so leave them out")
    number = int(_CHAPTER_DIR.fullmatch(paths[exercise_id].split(".")[1]).group(1))
    return replace(ex, id=exercise_id, chapter=number)


def ids() -> list[str]:
    return list(_module_paths())


def all_exercises() -> list[Exercise]:
    """Every exercise, chapter by chapter, in lesson order (then any not in a lesson)."""
    out: list[Exercise] = []
    for ch in chapters():
        listed = ch.exercise_ids()
        extra = sorted(f.stem for f in ch.path.glob("*.py") if not f.stem.startswith("_"))
        for eid in listed + [e for e in extra if e not in listed]:
            out.append(get(eid))
    return out
