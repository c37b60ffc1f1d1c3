"""Hostile and broken submissions get honest scores; no grade is ever lost.

The whole corpus (tests/hostile/corpus.py) is graded in ONE batch, next to an honest classmate,
so a case that stopped, slowed or corrupted the batch would show in the other cases' results.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from hostile import kit
from hostile.corpus import CASES, Case, Context

from autograder.grading.store import gradebook_scores, results_path
from autograder.grading.worker import uid_block

pytestmark = pytest.mark.slow
WORKERS = 2
LIMITS = "Limits(cell_seconds=3, notebook_seconds=20, memory_mib=1024)"
CLASSMATE = "zz_classmate"


def grade(course: Path, *extra: str) -> subprocess.CompletedProcess:
    """`gradtutor grade` with short limits, as its own process (the batch forks)."""
    code = ("import sys; from pathlib import Path\n"
            "from autograder.grading.batch import grade_cli\nfrom autograder.grading.worker import Limits\n"
            f"sys.exit(grade_cli(course_dir=Path({str(course)!r}), assignment=None, workers={WORKERS}, "
            f"csv=None, force={'--force' in extra}, limits={LIMITS}))")
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def run(course: Path, *extra: str) -> tuple[str, int]:
    """Grade to the end; the log, and the batch's pid (its workers' uids derive from it)."""
    proc = grade(course, *extra)
    _, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err
    return err, proc.pid


def public_course(name: str) -> Path:
    """A course folder that any user could read, so only the grader's own care protects it."""
    root = Path(tempfile.mkdtemp(prefix=f"gradtutor-{name}-"))
    root.chmod(0o755)
    return root / "course"


@pytest.fixture(scope="module")
def corpus() -> dict:
    chapter = kit.first_chapter()
    course = public_course("hostile")
    released = kit.make_course(course, chapter)
    course.chmod(0o755)
    ctx = Context(released, kit.exercises_of(released), course.resolve(), CLASSMATE)
    kit.submit(course, CLASSMATE, chapter, kit.answered(released, kit.solution))
    for case in CASES:
        kit.submit(course, case.name, chapter, case.make(ctx))
    log, pid = run(course)
    yield {"course": course, "chapter": chapter, "exercises": ctx.exercises, "log": log, "pid": pid}
    shutil.rmtree(course.parent, ignore_errors=True)


def result_of(corpus: dict, student: str) -> dict:
    return json.loads(results_path(corpus["course"], corpus["chapter"].slug, student).read_text())


def test_corpus_is_big_enough() -> None:
    assert len(CASES) >= 30
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_honest_score(corpus: dict, case: Case) -> None:
    result = result_of(corpus, case.name)
    exs = corpus["exercises"]
    got = [e["points"] for e in result["exercises"]]
    assert [e["id"] for e in result["exercises"]] == [ex.id for ex in exs]
    assert result["status"] == case.status, result["reason"]
    assert got == case.points(exs), _explain(result)
    assert result["score"] == sum(case.points(exs))
    words = result["reason"] + " " + " ".join(e["message"] for e in result["exercises"])
    assert case.reason in words, _explain(result)
    assert case.message in result["exercises"][0]["message"], _explain(result)
    for e in result["exercises"]:  # every lost point comes with a reason
        if e["points"] < e["max_points"]:
            assert e["message"].strip(), _explain(result)


def _explain(result: dict) -> str:
    lines = [f"status={result['status']} reason={result['reason']!r}"]
    lines += [f"  {e['id']}: {e['points']}/{e['max_points']} {e['verdict']}: {e['message']}"
              for e in result["exercises"]]
    return "\n".join(lines)


def test_the_honest_classmate_is_unharmed(corpus: dict) -> None:
    result = result_of(corpus, CLASSMATE)
    assert result["score"] == result["max_score"] > 0
    assert result["reason"] == ""


def test_every_submission_is_in_the_gradebook(corpus: dict) -> None:
    scores = gradebook_scores(corpus["course"])
    slug = corpus["chapter"].slug
    for case in [*CASES]:
        got = [scores[(case.name, slug, ex.id)] for ex in corpus["exercises"]]
        assert got == case.points(corpus["exercises"])


def test_no_worker_process_survives(corpus: dict) -> None:
    uids = {str(uid_block(corpus["pid"]) + k) for k in range(WORKERS)}
    left = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            lines = status.read_text().splitlines()
        except OSError:
            continue
        uid = next((line.split()[1] for line in lines if line.startswith("Uid:")), None)
        if uid in uids:
            left.append(status.parent.name)
    assert left == []


@pytest.mark.skipif(os.geteuid() != 0, reason="uid switching needs root")
def test_course_folder_made_private(corpus: dict) -> None:
    assert corpus["course"].stat().st_mode & 0o077 == 0
    assert "Made" in corpus["log"] and "private" in corpus["log"]


# --- nothing lost: SIGKILL the batch grader at random moments, then finish ----------------------

def _class(course: Path) -> list[str]:
    chapter = kit.first_chapter()
    released = kit.make_course(course, chapter)
    ctx = Context(released, kit.exercises_of(released), course.resolve(), CLASSMATE)
    picks = {c.name: c for c in CASES if c.name in (
        "invalid_json", "os_exit", "segfault", "deleted_grade_cells")}
    subs = {"solution": kit.answered(released, kit.solution), "blank": released,
            "hardcoded": kit.answered(released, kit.hardcoded),
            "wrong0": kit.answered(released, lambda ex: kit.wrong(ex, 0) or kit.solution(ex)),
            **{name: case.make(ctx) for name, case in picks.items()}}
    for student, nb in subs.items():
        kit.submit(course, student, chapter, nb)
    return list(subs)


def _stable(course: Path) -> dict:
    """Every results file without its timing fields."""
    out = {}
    for p in sorted((course / "gradtutor" / "results").glob("*/*.json")):
        r = json.loads(p.read_text())
        r.pop("graded_at")
        r.pop("duration_s")
        out[p.name] = r
    return out


def test_sigkill_at_random_moments_loses_nothing() -> None:
    calm = public_course("calm")
    students = _class(calm)
    killed = calm.parent.parent / (calm.parent.name + "-killed") / "course"
    shutil.copytree(calm, killed)
    run(calm)

    rng = random.Random(7)
    results = killed / "gradtutor" / "results"
    graded_at_kill = []
    for after in (1, 3, 5):  # kill just after the n-th result lands, plus a random delay
        proc = grade(killed)
        while proc.poll() is None and len(list(results.glob("*/*.json"))) < after:
            time.sleep(0.02)
        time.sleep(rng.uniform(0, 0.4))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            graded_at_kill.append(len(list(results.glob("*/*.json"))))
        proc.communicate()
    # killed at least three times in the middle of the batch, with work still to do
    assert len([n for n in graded_at_kill if 0 < n < len(students)]) >= 2, graded_at_kill
    run(killed)

    assert gradebook_scores(killed) == gradebook_scores(calm)
    assert _stable(killed) == _stable(calm)
    assert len(_stable(killed)) == len(students)
    with sqlite3.connect(killed / "gradebook.db") as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = db.execute("SELECT COUNT(*) FROM grade").fetchone()[0]
        subs = db.execute("SELECT COUNT(*) FROM submitted_assignment").fetchone()[0]
    assert subs == len(students)
    assert rows == len(students) * len(kit.exercises_of(kit.released(calm, kit.first_chapter())))
    shutil.rmtree(calm.parent, ignore_errors=True)
    shutil.rmtree(killed.parent, ignore_errors=True)
