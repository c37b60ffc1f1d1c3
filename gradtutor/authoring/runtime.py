"""Trusted side: the student runtime wheel, and the runtime tree the grading sandbox runs.

``gradtutor runtime OUT_DIR`` stages the student package (``autograder/``, every file of it is
student side) with ``_data/checks.json``: each exercise's check at the shown and the practice
values (reference, listed wrong answers with misconception, explanation and hint; the setup code
and call for function answers). No exercise unit, no solution, no grading variant, no reference
or wrong-answer code. An answer that is the same at every grading variant (and its listed wrong
answers) ships sealed, as a salted digest (``autograder/sealed.py``): its value would earn the
points of every variant if it could be copied; its texts are redacted of the answer's names.
The wheel is built from ``autograder/pyproject.toml`` by its standard build backend
(setuptools). The grader's zygote runs from the same package, copied without the data
(``write_tree``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path

import autograder
from autograder import checkdata, judge, sealed
from autograder.kinds import Table
from gradtutor.key import answer_key, registry

PACKAGE = Path(autograder.__file__).parent
NAME = "gradtutor_runtime"  # the wheel's file name prefix (the distribution is gradtutor-runtime)
_NOT_SHIPPED = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build", "_data")


def is_constant(exercise_id: str) -> bool:
    """Is the answer the same at every grading variant, as the judge compares (so a copy of the
    shown value would earn every variant)?"""
    check = answer_key.check_for(exercise_id)
    first = check.variants[0].reference
    return all(judge.same(check.kind, first, v.reference) for v in check.variants[1:])


def salt_of(exercise_id: str) -> str:
    return hashlib.sha256(f"gradtutor-seal:{exercise_id}".encode()).hexdigest()[:32]


def sealed_check(check: checkdata.Check) -> checkdata.Check:
    """``check`` with its references and wrong answers sealed, and its texts free of the names
    the right answer consists of (the self-check redacts with the reference, which it lacks)."""
    salt = salt_of(check.id)
    names = judge.answer_names(check.kind, check.variants[0].reference)

    def close(value: object) -> object:
        if isinstance(check.kind, Table) and isinstance(value, dict):
            return sealed.seal_table(salt, value)
        return sealed.seal(salt, value)

    variants = tuple(checkdata.Variant(close(v.reference), tuple((i, close(c)) for i, c in v.wrong))
                     for v in check.variants)
    wrong = tuple(dataclasses.replace(w, explanation=judge.redact(w.explanation, names),
                                      hint=judge.redact(w.hint, names)) for w in check.wrong)
    return dataclasses.replace(check, variants=variants, wrong=wrong)


def shipped_check(exercise_id: str) -> checkdata.Check:
    """The check the runtime ships: at the shown and practice values, sealed where constant."""
    check = answer_key.practice_check(exercise_id)
    return sealed_check(check) if is_constant(exercise_id) else check


@cache
def check_data() -> dict:
    """Every exercise's check at the shown and the practice values, in lesson order."""
    return {"format": checkdata.FORMAT,
            "exercises": {ex.id: checkdata.to_json(shipped_check(ex.id))
                          for ex in registry.all_exercises()}}


def write_tree(dest: Path, *, with_data: bool) -> Path:
    """The runtime's ``autograder`` package under ``dest`` (the zygote's copy has no data)."""
    target = dest / "autograder"
    shutil.copytree(PACKAGE, target, ignore=_NOT_SHIPPED)
    (target / "pyproject.toml").unlink()  # the sandbox imports the package; nothing builds it there
    if with_data:
        data = target / "_data" / "checks.json"
        data.parent.mkdir(parents=True, exist_ok=True)
        data.write_text(json.dumps(check_data(), separators=(",", ":")))
    return target


def build_wheel(out_dir: Path) -> Path:
    """Stage the package with its data and build it with its own ``pyproject.toml``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="gradtutor-runtime-build-") as tmp:
        stage = Path(tmp) / "autograder"
        shutil.copytree(PACKAGE, stage, ignore=_NOT_SHIPPED)
        data = stage / "_data" / "checks.json"
        data.parent.mkdir()
        data.write_text(json.dumps(check_data(), separators=(",", ":")))
        # the PEP 517 hook of the backend autograder/pyproject.toml names, in a process of its
        # own so that setuptools' build state stays out of this one
        hook = ("import sys, setuptools.build_meta as backend; "
                "print(backend.build_wheel(sys.argv[1]))")
        done = subprocess.run([sys.executable, "-c", hook, str(out_dir.resolve())], cwd=stage,
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"building the runtime wheel failed:\n{done.stderr[-3000:]}")
        return out_dir / done.stdout.strip().splitlines()[-1]


def runtime_cli(*, out_dir: Path) -> int:
    wheel = build_wheel(out_dir)
    count = len(check_data()["exercises"])
    print(f"Wrote {wheel} ({wheel.stat().st_size // 1024} KiB): the student runtime with the checks of "
          f"{count} exercises at their shown and practice values. Install it in a student's kernel with\n"
          f"  pip install {wheel}", file=sys.stderr)
    return 0
