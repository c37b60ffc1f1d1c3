"""Trusted side: ``IsolatedExecute``: nbgrader's Execute step, replaced by gradtutor's isolated worker.

With it in ``Autograde.autograde_preprocessors`` (nbgrader_config.py does this when
``GRADTUTOR_ISOLATED=1``), ``nbgrader autograde`` never runs a student's cell in its own kernel.
The notebook nbgrader has already sanitised (locked cells restored, missing grade cells added)
goes to a fresh fork server in a subprocess; student code runs there under the same limits as
``gradtutor grade``; the trusted side judges the plain answers; and each grade cell gets one
output, the points, which nbgrader's ``SaveAutoGrades`` then stores as usual.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
from nbformat.v4 import new_output
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Int

from autograder.sandbox.limits import Limits
from gradtutor.course import Course
from gradtutor.grading import forkserver
from gradtutor.grading.forkserver import NEEDS_ROOT
from gradtutor.nbcells import grade_id, is_grade
from gradtutor.records.results import ExerciseResult, read_result

# nbgrader's own process loads this module for every ``nbgrader autograde``: the grading stack
# (torch, the answer key) is imported by ``main`` only, in the subprocess that grades


class IsolatedExecute(NbGraderPreprocessor):
    timeout = Int(600, help="Seconds for the whole notebook, warm-up included.").tag(config=True)

    def preprocess(self, nb, resources):
        if os.geteuid() != 0:
            raise RuntimeError(NEEDS_ROOT.replace("gradtutor grade", "GRADTUTOR_ISOLATED=1 nbgrader autograde"))
        course = _course_dir(resources)
        with tempfile.TemporaryDirectory(prefix="gradtutor-nbgrader-") as tmp:
            path = Path(tmp) / "submission.ipynb"
            nbformat.write(nb, path)
            path.chmod(0o644)
            done = subprocess.run([sys.executable, "-m", "gradtutor.grading.nbgrader_execute",
                                   str(path), str(course or "")], capture_output=True, text=True,
                                  timeout=self.timeout)
        if done.returncode != 0:
            raise RuntimeError(f"gradtutor's isolated grader failed:\n{done.stderr[-2000:]}")
        result = read_result(json.loads(done.stdout))
        if result is None:
            raise RuntimeError("gradtutor's isolated grader printed no result")
        by_id = {e.id: e for e in result.exercises}
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            cell.outputs, cell.execution_count = [], None
            if is_grade(cell):  # every grade cell gets its points: no output would be full marks
                cell.outputs = _grade_outputs(by_id.get(grade_id(cell)))
        if result.reason:
            self.log.warning("gradtutor: %s", result.reason)
        return nb, resources


def _grade_outputs(entry: ExerciseResult | None) -> list:
    """What nbgrader's ``determine_grade`` reads: the points as the cell's result."""
    if entry is None:
        text, points = "error: this grade cell got no result from the grader\n", 0.0
    else:
        text, points = f"{entry.verdict}: {entry.message}\n", entry.points
    return [new_output("stream", name="stdout", text=text),
            new_output("execute_result", data={"text/plain": repr(float(points))}, execution_count=None)]


def _course_dir(resources) -> Path | None:
    url = resources.get("nbgrader", {}).get("db_url", "")
    if url.startswith("sqlite:///"):
        return Path(url.removeprefix("sqlite:///")).parent
    return None


def main(path: str, course: str = "") -> int:
    """Grade one notebook against itself (nbgrader already restored its locked cells)."""
    # the grading stack (torch) loads here, in the subprocess, never in nbgrader's process
    from gradtutor.grading import scoring
    from gradtutor.grading.submission import Submission, lesson_imports, load  # the same: torch

    file = Path(path)
    nb = nbformat.read(file, as_version=4)
    sub = Submission("student", "assignment", file.stem, file)
    limits = Limits()
    # the notebook's folder stands for the course: the file is read beneath it, link-free
    cells, job, unreadable = load(Course(file.parent), sub, nb, parts=(file.name,))
    outcomes: list = [None]
    if job is not None:
        with forkserver.Sandbox(limits=limits, course_dir=Path(course) if course else None,
                                imports=lesson_imports({"a": {"nb": nb}}),
                                python=forkserver.interpreter(None)) as sandbox:
            sandbox.grade_all([(sub, job)], workers=1, on_done=lambda o: outcomes.__setitem__(0, o))
        if outcomes[0].not_graded:
            raise RuntimeError(outcomes[0].not_graded)
    print(json.dumps(scoring.result(outcomes[0], nb, limits, unreadable=unreadable).to_json()))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("MPLBACKEND", "Agg")
    sys.exit(main(*sys.argv[1:3]))
