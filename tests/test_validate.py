"""nbgrader's Validate agrees with the self-check: the real `nbgrader validate` names each
exercise the self-check calls wrong and never says "passes all the tests" on wrong work."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from hostile import kit

pytestmark = pytest.mark.slow
NBGRADER = str(Path(sys.executable).parent / "nbgrader")
SUCCESS = "Success! Your notebook passes all the tests."


def test_validate_names_the_wrong_exercise_and_passes_right_work(tmp_path: Path) -> None:
    chapter = kit.first_chapter()
    released = kit.make_course(tmp_path / "course", chapter)
    exs = kit.exercises_of(released)
    wrong = next(ex for ex in exs if kit.wrong(ex, 0) is not None)
    notebooks = {
        "one_wrong": kit.answered(released, lambda ex: kit.wrong(ex, 0) if ex is wrong else kit.solution(ex)),
        "right": kit.answered(released, kit.solution),
    }
    runs = {}
    for name, nb in notebooks.items():  # both at once: each runs a whole chapter in a kernel
        nbformat.write(nb, tmp_path / f"{name}.ipynb")
        runs[name] = subprocess.Popen([NBGRADER, "validate", f"{name}.ipynb"], cwd=tmp_path,
                                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    said = {name: run.communicate(timeout=600)[0] for name, run in runs.items()}

    assert SUCCESS not in said["one_wrong"]
    assert "VALIDATION FAILED ON 1 CELL(S)" in said["one_wrong"], said["one_wrong"]
    assert f'check("{wrong.id}"' in said["one_wrong"] and f"[{wrong.id}]" in said["one_wrong"]
    assert "Not yet right" in said["one_wrong"]
    others = [ex.id for ex in exs if ex is not wrong]
    assert not [i for i in others if f"[{i}]" in said["one_wrong"]]
    assert SUCCESS in said["right"], said["right"]
