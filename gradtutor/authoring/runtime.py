"""Trusted side: the student runtime wheel, and the runtime tree the grading sandbox runs.

``gradtutor runtime OUT_DIR`` stages the student package (``autograder/``, every file of it is
student side) with ``_data/checks.json``: each exercise's check at the shown and the practice
values (reference, listed wrong answers with misconception, explanation and hint; the setup code
and call for function answers). No exercise unit, no solution, no grading variant, no reference
or wrong-answer code. The wheel is built from ``autograder/pyproject.toml`` by its standard
build backend (setuptools). The grader's zygote runs from the same package, copied without the
data (``write_tree``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path

import autograder
from autograder import checkdata
from gradtutor.key import answer_key, registry

PACKAGE = Path(autograder.__file__).parent
NAME = "gradtutor_runtime"  # the wheel's file name prefix (the distribution is gradtutor-runtime)
_NOT_SHIPPED = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build", "_data")


@cache
def check_data() -> dict:
    """Every exercise's check at the shown and the practice values, in lesson order."""
    return {"format": checkdata.FORMAT,
            "exercises": {ex.id: checkdata.to_json(answer_key.practice_check(ex.id))
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
