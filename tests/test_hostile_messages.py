"""What the parent accepts from a child, through the real ``gradtutor grade``: a submission that
forges malformed messages onto its answer pipe, and one with a 5 MB cell of hidden-test marker
lines, graded in one batch between honest classmates. The forger gets the fixed reason and 0,
the marker notebook and every classmate their normal score, the batch exits 0, and so does a
re-run.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hostile import kit
from hostile.corpus import _PIPES, blank, early, solved
from hostile.corpus import Context as CorpusContext

from autograder.contract import MALFORMED
from gradtutor.course import Course

pytestmark = pytest.mark.slow
LIMITS = "Limits(cell_seconds=8, notebook_seconds=60, memory_mib=1024)"
HONEST = ("aa_honest", "mm_honest", "zz_honest")


def forged_lines(ctx: CorpusContext) -> str:
    """Python that writes, onto every pipe it holds, the lines that used to stop the batch."""
    first = ctx.exercises[0]
    n = len(first.variants())
    forged = [
        {"type": "answers", "exercise": [first.id], "cell": 0, "answers": [{"t": "none"}] * n},
        {"type": "answers", "exercise": {first.id: 1}, "cell": 0, "answers": []},
        {"type": "cell", "cell": 1, "why": "error", "error": {"name": "ValueError"}},
        {"type": "cell", "cell": 1, "why": ["cpu"]},
        {"type": "answers", "exercise": first.id, "cell": 0,
         "answers": [{"t": "array", "shape": [], "dtype": {"x": 1}, "v": 10**400}] * n},
        {"type": "answers", "exercise": first.id, "cell": 0,
         "answers": [{"t": "array", "shape": [100_000, 0, 0, 0, 0, 0, 0, 0], "dtype": "float",
                      "v": []}] * n},
    ]
    code = _PIPES + "".join(f"forge({m!r})\n" for m in forged)
    # beyond what the JSON reader takes: a 5000-digit integer, deep nesting, bytes that are not text
    return code + ("for fd in pipes:\n    try:\n"
                   "        os.write(fd, b'{\"type\": \"answers\", \"v\": ' + b'9' * 5000 + b'}\\n')\n"
                   "        os.write(fd, b'[' * 100000 + b'\\n' + b'\\xff\\xfe\\n')\n"
                   "    except OSError:\n        pass\n")


def markers(ctx: CorpusContext) -> object:
    """A solved notebook with one more cell: 5 MB of BEGIN HIDDEN TESTS lines and no END."""
    return early(solved(ctx), "### BEGIN HIDDEN TESTS\n" * (5 * 2**20 // 23))


def grade(course: Path, *, force: bool) -> subprocess.CompletedProcess:
    code = ("import sys; from pathlib import Path\n"
            "from gradtutor.grading.batch import grade_cli\nfrom autograder.sandbox.limits import Limits\n"
            f"sys.exit(grade_cli(course_dir=Path({str(course)!r}), assignment=None, workers=2, "
            f"csv=None, force={force}, limits={LIMITS}))")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def batch() -> dict:
    chapter = kit.first_chapter()
    root = Path(tempfile.mkdtemp(prefix="gradtutor-messages-"))
    course = root / "course"
    released = kit.make_course(course, chapter)
    ctx = CorpusContext(released, kit.exercises_of(released), course.resolve(), HONEST[0])
    for student in HONEST:
        kit.submit(course, student, chapter, kit.answered(released, kit.solution))
    kit.submit(course, "ff_forger", chapter, early(blank(ctx), forged_lines(ctx)))
    kit.submit(course, "pp_markers", chapter, markers(ctx))
    first = grade(course, force=False)
    again = grade(course, force=True)
    yield {"course": course, "chapter": chapter, "exercises": ctx.exercises, "runs": (first, again)}
    shutil.rmtree(root, ignore_errors=True)


def result_of(batch: dict, student: str) -> dict:
    path = Course.at(batch["course"]).results_path(batch["chapter"].slug, student)
    return json.loads(path.read_text())


def test_the_batch_and_its_rerun_end_with_exit_0(batch: dict) -> None:
    for run in batch["runs"]:
        assert run.returncode == 0, run.stderr[-3000:]
        assert "NOT graded" not in run.stderr and "Traceback" not in run.stderr


def test_the_forger_gets_the_fixed_reason_and_0(batch: dict) -> None:
    result = result_of(batch, "ff_forger")
    assert result["status"] == "graded" and MALFORMED in result["reason"]
    assert result["score"] == 0 and all(e["points"] == 0 for e in result["exercises"])
    assert "9999" not in json.dumps(result) and "ValueError" not in json.dumps(result)


@pytest.mark.parametrize("student", [*HONEST, "pp_markers"])
def test_every_classmate_gets_the_normal_score(batch: dict, student: str) -> None:
    result = result_of(batch, student)
    assert [e["points"] for e in result["exercises"]] == [ex.points for ex in batch["exercises"]]
    assert result["score"] == result["max_score"] > 0 and result["reason"] == ""
