"""The code inside exercise units (setup and solution strings) is linted like the rest."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from gradtutor.key import registry

RUFF = Path(sys.executable).parent / "ruff"
# setups import names for the student (F401); answer cells are notebook cells (E402, E702)
RULES = ["--select", "E,F,W", "--ignore", "E501,E702,E731,E741,E402,F401"]


def test_setup_and_solution_code_pass_the_linter(tmp_path: Path) -> None:
    for ex in registry.all_exercises():
        # as the notebook runs it: the first cell's import, the setup, then the answer cell
        (tmp_path / f"{ex.id}.py").write_text(
            "import torch  # noqa: F401\n\n" + ex.setup_code(ex.params) + "\n\n" + ex.solution + "\n")
    run = subprocess.run([str(RUFF), "check", "--no-cache", "--isolated", *RULES,
                          "--output-format", "concise", str(tmp_path)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout


def test_the_linter_check_can_fail(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text("x = undefined_name + 1\n")
    run = subprocess.run([str(RUFF), "check", "--no-cache", "--isolated", *RULES, str(tmp_path)],
                         capture_output=True, text=True)
    assert run.returncode == 1 and "F821" in run.stdout


def test_a_call_never_runs_a_helper_the_answer_cell_could_redefine() -> None:
    """What the grader runs on a function answer is the answer itself or a helper reached
    through its module (``autograder.harness.call``), never a function the setup defines: an
    answer cell could define one of the same name (a ``without_cos`` that lets cos through)."""
    import re

    for ex in registry.all_exercises():
        if ex.call is None or "__import__(" in ex.call:
            continue
        called = set(re.findall(r"\b([A-Za-z_]\w*)\s*\(", ex.call)) - {ex.answer}
        in_setup = {name for name in called if re.search(rf"\bdef {name}\b", ex.setup)}
        assert not in_setup, (ex.id, in_setup)
