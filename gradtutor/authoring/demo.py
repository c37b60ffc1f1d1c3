"""Trusted side: a synthetic class, a real nbgrader course whose submissions come from profiles.

    gradtutor demo-class DIR --students N --seed S

writes ``DIR/source`` (the lessons), runs the real ``nbgrader generate_assignment`` into
``DIR/release``, and fills ``DIR/submitted/<student>/<chapter>/<chapter>.ipynb`` starting from the
released notebook, as a student would. Every planted answer comes from the exercise units: the
solution code, a known wrong answer computed from the shown parameters and typed in as a literal,
or the reference typed in (right at the shown values, wrong at the hidden ones). What each
student was given is recorded in ``DIR/gradtutor/demo_profiles.json`` so tests and the
benchmark can tell what a grader should find.
"""

from __future__ import annotations

import json
import math
import random
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any

import nbformat
from nbformat import NotebookNode
from nbformat.v4 import nbjson

from autograder.judge import judge, same
from autograder.plain import Plain, plain_source, to_plain
from gradtutor import nbcells
from gradtutor.authoring import build
from gradtutor.key import registry
from gradtutor.key.answer_key import reference, run_at, wrong_values
from gradtutor.key.exercise import Exercise
from gradtutor.key.registry import Chapter

REPO_CONFIG = build.REPO / "nbgrader_config.py"
PROFILES_FILE = Path("gradtutor") / "demo_profiles.json"
SUBMITTED_AT = datetime(2026, 1, 15, 9, 0, tzinfo=UTC)

# What one exercise of one student holds. "wrong:<i>" is the i-th Wrong of the exercise.
CORRECT, BLANK, HARDCODED, LOOP = "correct", "blank", "hardcoded", "infinite_loop"
DELETED_ANSWER, DELETED_GRADE = "deleted_answer_cell", "deleted_grade_cell"


# ---------------------------------------------------------------- answers as Python source


def _value_of(source: str) -> Any:
    return eval(source, {"__builtins__": {"float": float}})


def _answer_code(ex: Exercise, value_source: str) -> str:
    if ex.is_function:  # the grader calls the function; a typed-in student returns a constant
        return f"def {ex.answer}(*args, **kwargs):\n    return {value_source}"
    return f"{ex.answer} = {value_source}"


@dataclass(frozen=True)
class Planted:
    """The answer cell for one choice, and the misconception a grader should report."""

    code: str | None  # None: leave the released cell untouched
    misconception: str | None = None


def planted(ex: Exercise, choice: str) -> Planted:
    return _planted(ex.id, choice)


@cache
def _planted(exercise_id: str, choice: str) -> Planted:
    ex = registry.get(exercise_id)
    if choice == CORRECT:
        return Planted(ex.solution.strip())
    if choice == HARDCODED:
        return Planted(_answer_code(ex, plain_source(to_plain(reference(ex.id, 0)))))
    if choice == LOOP:
        return Planted("while True:  # a stuck cell: the grader must stop it\n    pass")
    if choice.startswith("wrong:"):
        i = int(choice.split(":")[1])
        canonical = dict(wrong_values(ex.id, 0))[i]
        return Planted(_answer_code(ex, plain_source(to_plain(canonical))), ex.wrong[i].misconception)
    return Planted(None)  # blank, deleted cells


def usable_wrongs(ex: Exercise) -> list[int]:
    """Wrong answers that, typed in as literals, are diagnosed as themselves at the shown values."""
    return list(_usable_wrongs(ex.id))


@cache
def _usable_wrongs(exercise_id: str) -> tuple[int, ...]:
    # checked the way a grader sees it: setup, then the planted cell, then the answer read back
    # (a function answer that returns a constant cannot always show a wrong value, e.g. when
    # the grader reads a tensor the function should have updated in place)
    ex = registry.get(exercise_id)
    out = []
    for i, w in enumerate(ex.wrong):
        try:
            code = planted(ex, f"wrong:{i}").code
        except ValueError:
            continue
        if judge(ex.id, [run_answer(ex, code, ex.params)]).misconception == w.misconception:
            out.append(i)
    return tuple(out)


def run_answer(ex: Exercise, code: str, params: dict[str, Any]) -> Plain:
    """The setup and an answer cell at these parameters; the answer as plain data."""
    ns: dict[str, Any] = {}
    exec("import torch\nimport torch.nn.functional as F", ns)
    return run_at(ex, ns, code, params)


# ---------------------------------------------------------------- student profiles


Profile = Callable[[list[Exercise], random.Random], dict[str, str]]


def _all(choice: str) -> Profile:
    return lambda exs, rng: {ex.id: choice for ex in exs}


def _misconception(k: int) -> Profile:
    """The k-th known wrong answer of every exercise that has one; the rest correct."""

    def profile(exs: list[Exercise], rng: random.Random) -> dict[str, str]:
        out = {}
        for ex in exs:
            wrongs = usable_wrongs(ex)
            out[ex.id] = f"wrong:{wrongs[k]}" if k < len(wrongs) else CORRECT
        return out

    return profile


def _half_done(exs: list[Exercise], rng: random.Random) -> dict[str, str]:
    out: dict[str, str] = {}
    for chapter in _by_chapter(exs).values():
        done = math.ceil(len(chapter) / 2)
        out.update({ex.id: CORRECT if j < done else BLANK for j, ex in enumerate(chapter)})
    return out


def _stuck(exs: list[Exercise], rng: random.Random) -> dict[str, str]:
    out = {ex.id: CORRECT for ex in exs}
    for chapter in _by_chapter(exs).values():
        out[chapter[len(chapter) // 2].id] = LOOP
    return out


def _deleted_cells(exs: list[Exercise], rng: random.Random) -> dict[str, str]:
    """Deletes the first grade cell (nbgrader restores it) and the last answer cell."""
    out = {ex.id: CORRECT for ex in exs}
    for chapter in _by_chapter(exs).values():
        out[chapter[0].id] = DELETED_GRADE
        out[chapter[-1].id] = DELETED_ANSWER if len(chapter) > 1 else DELETED_GRADE
    return out


def _realistic(exs: list[Exercise], rng: random.Random) -> dict[str, str]:
    """About 60% correct, 30% a misconception, 10% blank, with a per-student ability; the
    first-listed wrong answers are the most common, as in a real class."""
    ability = rng.betavariate(3, 2)  # mean 0.6
    out = {}
    for ex in exs:
        r = rng.random()
        wrongs = usable_wrongs(ex)
        if r < ability:
            out[ex.id] = CORRECT
        elif r < ability + 0.75 * (1 - ability) and wrongs:
            weights = [1 / (j + 1) for j in range(len(wrongs))]
            out[ex.id] = f"wrong:{rng.choices(wrongs, weights)[0]}"
        elif r < ability + 0.8 * (1 - ability):
            out[ex.id] = HARDCODED
        else:
            out[ex.id] = BLANK
    return out


def profiles(exs: list[Exercise]) -> list[tuple[str, Profile]]:
    """Planted profiles first (so a small class still shows every case), then realistic ones."""
    most_wrongs = max((len(usable_wrongs(ex)) for ex in exs), default=0)
    planted_profiles: list[tuple[str, Profile]] = [("all_correct", _all(CORRECT))]
    planted_profiles += [(f"misconception_{k + 1}", _misconception(k)) for k in range(most_wrongs)]
    planted_profiles += [
        ("hardcoded_numbers", _all(HARDCODED)),
        ("blank", _all(BLANK)),
        ("infinite_loop", _stuck),
        ("deleted_cells", _deleted_cells),
        ("invalid_json", _all(CORRECT)),
        ("half_done", _half_done),
    ]
    return planted_profiles


def _by_chapter(exs: list[Exercise]) -> dict[int, list[Exercise]]:
    out: dict[int, list[Exercise]] = {}
    for ex in exs:
        out.setdefault(ex.chapter, []).append(ex)
    return out


def class_plan(exs: list[Exercise], students: int, seed: int) -> dict[str, dict]:
    """student id -> {"profile", "answers": {exercise id: choice}}; same seed, same class."""
    rng = random.Random(seed)
    plan: dict[str, dict] = {}
    fixed = profiles(exs)
    for n in range(students):
        name, profile = fixed[n] if n < len(fixed) else ("realistic", _realistic)
        plan[f"student{n + 1:03d}"] = {"profile": name, "answers": profile(exs, rng)}
    return plan


# ---------------------------------------------------------------- notebooks


def _cell_index(nb: NotebookNode, grade_id: str) -> int | None:
    for i, cell in enumerate(nb.cells):
        if nbcells.grade_id(cell) == grade_id:
            return i
    return None


def fill_notebook(released: NotebookNode, exs: list[Exercise], answers: dict[str, str]) -> NotebookNode:
    nb = nbformat.from_dict(json.loads(json.dumps(released)))  # a deep copy
    doomed: list[int] = []
    for ex in exs:
        choice = answers[ex.id]
        answer_at, grade_at = _cell_index(nb, f"{ex.id}-answer"), _cell_index(nb, ex.id)
        if choice == DELETED_ANSWER and answer_at is not None:
            doomed.append(answer_at)
        elif choice == DELETED_GRADE and grade_at is not None:
            nb.cells[answer_at].source = planted(ex, CORRECT).code if answer_at is not None else ""
            doomed.append(grade_at)
        elif answer_at is not None and (code := planted(ex, choice).code) is not None:
            nb.cells[answer_at].source = code
    nb.cells = [c for i, c in enumerate(nb.cells) if i not in doomed]
    return nb


def write_submission(path: Path, nb: NotebookNode, *, invalid_json: bool, minute: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # nbformat's own layout, without re-validating a notebook nbgrader just released
    text = nbjson.writes(nb)
    # a notebook cut off mid-upload: not JSON at all
    path.write_text(text[: len(text) // 2] if invalid_json else text)
    stamp = SUBMITTED_AT + timedelta(minutes=minute)
    (path.parent / "timestamp.txt").write_text(stamp.strftime("%Y-%m-%d %H:%M:%S.%f %Z"))


def write_config(course_dir: Path) -> None:
    """The repo's nbgrader_config.py, rooted at the course folder, so nbgrader runs there."""
    text = REPO_CONFIG.read_text()
    root = ("import os  # noqa: E402\n\n"
            "c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))")
    text, found = re.subn(r"^c\.CourseDirectory\.root\s*=.*$", root, text, flags=re.M)
    if not found:
        text += "\n" + root + "\n"
    (course_dir / "nbgrader_config.py").write_text(text)


def chosen_chapters(only: list[str] | None) -> list[Chapter]:
    found = [ch for ch in registry.chapters()
             if not only or ch.slug in only or str(ch.number) in only]
    if only and not found:
        known = ", ".join(ch.slug for ch in registry.chapters())
        raise SystemExit(f"No chapter matches {only}; the chapters are: {known}.")
    return found


def demo_class(course_dir: Path, students: int, seed: int, assignment: list[str] | None = None,
               log: Callable[[str], None] = print) -> dict[str, dict]:
    """Write the course and its submissions; returns the plan (also saved as JSON)."""
    chapters = chosen_chapters(assignment)
    exs = [registry.get(eid) for ch in chapters for eid in ch.exercise_ids()]
    plan = class_plan(exs, students, seed)
    course_dir.mkdir(parents=True, exist_ok=True)
    write_config(course_dir)
    for ch in chapters:
        build.write_source(ch, course_dir)
        log(f"nbgrader generate_assignment {ch.slug}")
        released = nbformat.read(build.release(ch, course_dir), as_version=4)
        ch_exs = [registry.get(eid) for eid in ch.exercise_ids()]
        for n, (student, entry) in enumerate(plan.items()):
            nb = fill_notebook(released, ch_exs, entry["answers"])
            path = course_dir / "submitted" / student / ch.slug / f"{ch.slug}.ipynb"
            write_submission(path, nb, invalid_json=entry["profile"] == "invalid_json", minute=n)
    manifest = {"seed": seed, "chapters": [ch.slug for ch in chapters], "students": {
        s: {**e, "misconceptions": _expected(exs, e["answers"])} for s, e in plan.items()}}
    (course_dir / PROFILES_FILE).parent.mkdir(parents=True, exist_ok=True)
    (course_dir / PROFILES_FILE).write_text(json.dumps(manifest, indent=1))
    return plan


def _expected(exs: list[Exercise], answers: dict[str, str]) -> dict[str, str]:
    """exercise id -> the misconception id a grader should report for it."""
    out = {}
    for ex in exs:
        if answers[ex.id].startswith("wrong:"):
            out[ex.id] = ex.wrong[int(answers[ex.id].split(":")[1])].misconception
        elif answers[ex.id] == HARDCODED and _varies(ex):
            out[ex.id] = "typed_in"  # the judge's generic diagnosis: the same value everywhere
    return out


def _varies(ex: Exercise) -> bool:
    """Does the reference change between the shown values and some hidden variant?"""
    shown = reference(ex.id, 0)
    return any(not same(ex.kind, reference(ex.id, v), shown) for v in range(1, len(ex.variants())))


def demo_class_cli(*, course_dir: Path, students: int, seed: int,
                   assignment: list[str] | None) -> int:
    if students < 1:
        print("--students must be at least 1.")
        return 2
    if course_dir.exists() and any(course_dir.iterdir()):
        print(f"{course_dir} already exists and is not empty: choose a new folder or delete it "
              "(a demo class is rebuilt from its seed, never merged).")
        return 2
    try:
        plan = demo_class(course_dir, students, seed, assignment)
    except BaseException:
        shutil.rmtree(course_dir, ignore_errors=True)  # no half-written class left behind
        raise
    counts: dict[str, int] = {}
    for entry in plan.values():
        counts[entry["profile"]] = counts.get(entry["profile"], 0) + 1
    summary = ", ".join(f"{k} {v}" for k, v in counts.items())
    print(f"Wrote {len(plan)} students to {course_dir}/submitted ({summary}).")
    print(f"What each student was given: {course_dir / PROFILES_FILE}")
    print(f"Next: gradtutor grade {course_dir}")
    return 0
