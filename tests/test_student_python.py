"""The grader's sandbox runs on the students' interpreter, never on one they cannot read.

On a class hub the staff's environment is readable by the staff group only; the grader's
children, each a user of its own, could not load torch's lazily imported modules from it, and
every answer that printed a tensor scored 0 (issue #25). ``gradtutor grade --student-python``
runs the zygote on the students' interpreter; as root, an interpreter other users cannot read
is refused before any notebook runs, with the reason and what to do.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest
from hostile import kit

from gradtutor.course import Course
from gradtutor.records import store

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(os.geteuid() != 0, reason="the grader's sandbox needs root")]

STUDENT = "sam"
# an answer cell that prints a tensor, draws a plot and imports modules torch loads lazily
LAZY = ("import sys, torch, torch.func, torch.autograd.forward_ad\n"
        "import matplotlib.pyplot as plt\n"
        "plt.plot([0, 1], [1, 0]); plt.close('all')\n"
        "print(torch.linspace(0, 1, 3, requires_grad=True))\n"
        # full marks only on the students' interpreter
        "assert sys.executable == STUDENT_PYTHON, sys.executable\n")


def students_env(root: Path) -> Path:
    """A venv of another prefix whose site-packages are the test's own (torch and the runtime):
    a second interpreter as a hub's student environment is, without installing torch again."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", root], check=True,
                   capture_output=True)
    site = next((root / "lib").glob("python3*/site-packages"))
    site.rmdir()
    site.symlink_to(sysconfig.get_paths()["purelib"])
    return root / "bin" / "python"


@pytest.fixture(scope="module")
def top() -> Path:
    top = Path(tempfile.mkdtemp(prefix="gradtutor-student-python-"))
    top.chmod(0o755)
    return top


@pytest.fixture(scope="module")
def course(top: Path) -> Path:
    course = top / "course"
    chapter = kit.first_chapter()
    released = kit.make_course(course, chapter)
    answer = f"STUDENT_PYTHON = {str(top / 'student-env' / 'bin' / 'python')!r}\n{LAZY}"
    kit.submit(course, STUDENT, chapter, kit.answered(released, lambda ex: answer + kit.solution(ex)))
    return course


def grade(course: Path, *extra: str, env: dict | None = None) -> subprocess.CompletedProcess:
    tool = Path(sys.executable).parent / "gradtutor"
    return subprocess.run([tool, "grade", course, "--workers", "1",
                           "--force", *extra], capture_output=True, text=True, timeout=900,
                          env={**os.environ, **(env or {})})


def test_grading_runs_on_the_students_interpreter_and_lazy_imports_score(course: Path, top: Path) -> None:
    python = students_env(top / "student-env")
    done = grade(course, "--student-python", str(python))
    assert done.returncode == 0, done.stderr[-3000:]
    (result,) = store.load_results(Course.at(course))
    assert result.score == result.max_score > 0, result.reason


def test_on_the_graders_own_interpreter_the_same_answers_score_nothing(course: Path) -> None:
    """The control: the answers' own check of ``sys.prefix`` can fail."""
    done = grade(course)
    assert done.returncode == 0, done.stderr[-3000:]
    (result,) = store.load_results(Course.at(course))
    assert result.score == 0 < result.max_score


def test_an_interpreter_other_users_cannot_read_is_refused(course: Path, tmp_path: Path) -> None:
    """Refused with the reason and what to do, before any notebook runs."""
    python = students_env(tmp_path / "staff-env")
    tmp_path.chmod(0o755)
    (tmp_path / "staff-env").chmod(0o750)  # as the hub's staff environment is
    done = grade(course, env={"GRADTUTOR_STUDENT_PYTHON": str(python)})
    assert done.returncode == 2
    assert f"cannot read {tmp_path / 'staff-env'} (mode drwxr-x---)" in done.stderr, done.stderr
    assert "--student-python" in done.stderr
    assert "submission(s) found" not in done.stderr  # refused before any notebook ran
