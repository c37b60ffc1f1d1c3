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
from hostile.corpus import CASES, TOKEN, Case, Context

from autograder.sandbox.limits import uid_block
from gradtutor.course import Course
from gradtutor.records import gradebook
from gradtutor.records.results import SubmissionResult, read_result

pytestmark = pytest.mark.slow
WORKERS = 2
# the wall-clock limit per cell well above what a loaded machine needs for the memory bombs
# (CPU time, not wall time, is what stops a computing cell: see the CPU-limit cases)
LIMITS = "Limits(cell_seconds=8, notebook_seconds=30, memory_mib=1024)"
CLASSMATE = "zz_classmate"
EARLY_CLASSMATE = "aa_classmate"  # graded first: writes TOKEN into every answer cell


def gradebook_scores(course: Path) -> dict:
    return gradebook.scores(Course.at(course))


def results_path(course: Path, assignment: str, student: str) -> Path:
    return Course.at(course).results_path(assignment, student)


def grade(course: Path, *extra: str, limits: str = LIMITS) -> subprocess.Popen:
    """`gradtutor grade` with short limits, as its own process (the batch forks)."""
    code = ("import sys; from pathlib import Path\n"
            "from gradtutor.grading.batch import grade_cli\nfrom autograder.sandbox.limits import Limits\n"
            f"sys.exit(grade_cli(course_dir=Path({str(course)!r}), assignment=None, workers={WORKERS}, "
            f"csv=None, force={'--force' in extra}, limits={limits}))")
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def run(course: Path, *extra: str, limits: str = LIMITS) -> tuple[str, int]:
    """Grade to the end; the log, and the batch's pid (its workers' uids derive from it)."""
    proc = grade(course, *extra, limits=limits)
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
    token = "".join(TOKEN)
    kit.submit(course, EARLY_CLASSMATE, chapter,
               kit.answered(released, lambda ex: f"# {token}\n{kit.solution(ex)}"))
    for case in CASES:
        path = kit.submit(course, case.name, chapter, case.make(ctx))
        if case.plant is not None:
            case.plant(path, ctx)
    scratch = {d: set(os.listdir(d)) for d in ("/tmp", "/dev/shm", "/var/tmp")}
    log, pid = run(course)
    yield {"course": course, "chapter": chapter, "exercises": ctx.exercises, "log": log, "pid": pid,
           "scratch": scratch, "count": len(CASES) + 2}
    shutil.rmtree(course.parent, ignore_errors=True)


def written(corpus: dict, student: str) -> str:
    return results_path(corpus["course"], corpus["chapter"].slug, student).read_text()


def result_of(corpus: dict, student: str) -> SubmissionResult:
    result = read_result(json.loads(written(corpus, student)))
    assert result is not None
    return result


def test_corpus_is_big_enough() -> None:
    assert len(CASES) >= 30
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_honest_score(corpus: dict, case: Case) -> None:
    result = result_of(corpus, case.name)
    exs = corpus["exercises"]
    got = [e.points for e in result.exercises]
    assert [e.id for e in result.exercises] == [ex.id for ex in exs]
    assert result.status == case.status, result.reason
    assert got == case.points(exs), _explain(result)
    assert result.score == sum(case.points(exs))
    words = result.reason + " " + " ".join(e.message for e in result.exercises)
    assert case.reason in words, _explain(result)
    assert case.message in result.exercises[0].message, _explain(result)
    if case.never:
        assert case.never not in json.dumps(json.loads(written(corpus, case.name)))
    for e in result.exercises:  # every lost point comes with a reason
        if e.points < e.max_points:
            assert e.message.strip(), _explain(result)


def _explain(result: SubmissionResult) -> str:
    lines = [f"status={result.status} reason={result.reason!r}"]
    lines += [f"  {e.id}: {e.points}/{e.max_points} {e.verdict}: {e.message}"
              for e in result.exercises]
    return "\n".join(lines)


@pytest.mark.parametrize("student", [CLASSMATE, EARLY_CLASSMATE])
def test_the_honest_classmates_are_unharmed(corpus: dict, student: str) -> None:
    result = result_of(corpus, student)
    assert result.score == result.max_score > 0
    assert result.reason == ""


def test_the_batch_says_nothing_was_left_ungraded(corpus: dict) -> None:
    assert "NOT graded" not in corpus["log"]


def test_scratch_space_is_private_and_gone(corpus: dict) -> None:
    """Files students wrote in /tmp, /dev/shm and /var/tmp (the disk filler, the leak writer)
    lived in each child's own size-limited tmpfs: nothing is left on the machine."""
    for folder, before in corpus["scratch"].items():
        new = {n for n in set(os.listdir(folder)) - before if n.startswith("gradtutor-")}
        assert not {n for n in new if "leak" in n or "fill" in n}, (folder, new)


def test_no_special_file_is_copied(corpus: dict) -> None:
    """A timestamp.txt linking to /etc/shadow or /dev/zero is not read: what autograded/ holds
    is a time the grader wrote, or nothing."""
    slug = corpus["chapter"].slug
    for student in ("shadow_timestamp", "devzero_timestamp", "fifo_timestamp"):
        stamp = corpus["course"] / "autograded" / student / slug / "timestamp.txt"
        assert not stamp.exists() or len(stamp.read_bytes()) < 64
        assert not stamp.exists() or b"root:" not in stamp.read_bytes()


def test_every_submission_is_in_the_gradebook(corpus: dict) -> None:
    scores = gradebook_scores(corpus["course"])
    slug = corpus["chapter"].slug
    for case in [*CASES]:
        got = [scores[(case.name, slug, ex.id)] for ex in corpus["exercises"]]
        assert got == case.points(corpus["exercises"])


def test_no_worker_process_survives(corpus: dict) -> None:
    time.sleep(1.5)  # the outliver's grandchild would wake after 1 s
    first = uid_block(corpus["pid"])
    assert kit.processes_of_uids(range(first, first + corpus["count"])) == []


def test_course_folder_keeps_its_mode(corpus: dict) -> None:
    """Nothing is protected by making the course private (teaching assistants need to read it):
    the sandbox never sees it. The snoop and key_in_modules cases show it cannot."""
    assert corpus["course"].stat().st_mode & 0o777 == 0o755


def test_without_root_the_grader_refuses_in_one_line(tmp_path: Path) -> None:
    """In a user namespace (uid 0 outside, 65534 inside: no uid switch, no mounts) the grader
    does not run student code with weaker guarantees: it says how to run it, and stops."""
    if shutil.which("unshare") is None:
        pytest.skip("util-linux unshare is not installed")
    done = subprocess.run(["unshare", "-U", str(Path(sys.executable).parent / "gradtutor"), "grade",
                           str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "needs root" in lines[0] and "container" in lines[0]


# --- nothing lost: SIGKILL the batch grader at random moments, then finish ----------------------

def _class(course: Path, plain: int = 0) -> list[str]:
    """Eight students, hostile ones among them, and ``plain`` more who answer right or wrong."""
    chapter = kit.first_chapter()
    released = kit.make_course(course, chapter)
    ctx = Context(released, kit.exercises_of(released), course.resolve(), CLASSMATE)
    picks = {c.name: c for c in CASES if c.name in (
        "invalid_json", "os_exit", "segfault", "deleted_grade_cells")}
    subs = {"solution": kit.answered(released, kit.solution), "blank": released,
            "hardcoded": kit.answered(released, kit.hardcoded),
            "wrong0": kit.answered(released, lambda ex: kit.wrong(ex, 0) or kit.solution(ex)),
            **{name: case.make(ctx) for name, case in picks.items()}}
    for i in range(plain):
        subs[f"plain{i:02d}"] = subs["solution" if i % 2 else "wrong0"]
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
    # enough students for several gradebook batches (the recorder gathers what lands within
    # GATHER_SECONDS into one transaction), so the kills fall between batches
    students = _class(calm, plain=24)
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


# --- the probes can fail: run where the secrets are, each finds them ----------------------------

PROBE_HOST = '''
import json, sys
import nbformat
cells = json.loads(sys.argv[1])
secret_text = "".join(("### BEGIN SOL", "UTION"))  # what a source notebook holds
def grader_frame(source):  # a frame up the stack holding the source notebook, as run_child had
    ns = {}
    for code in cells:
        exec(code, ns)
    return ns["stole"], ns["probe_done"]
print(json.dumps(grader_frame(nbformat.from_dict({"cells": [], "metadata": {}, "nbformat": 4,
                                                  "nbformat_minor": 5, "text": secret_text}))))
'''


@pytest.mark.parametrize("name", ["frames_and_objects", "raw_memory", "key_in_modules"])
def test_each_probe_finds_the_secrets_where_they_are(name: str, tmp_path: Path) -> None:
    """The attack cases earn only their first point in the sandbox; run in a process that holds
    a source notebook (or the answer key), the same probe cells find it."""
    case = next(c for c in CASES if c.name == name)
    chapter = kit.first_chapter()
    released = kit.make_course(tmp_path / "course", chapter)
    nb = case.make(Context(released, kit.exercises_of(released), tmp_path / "course", CLASSMATE))
    sources = [c.source for c in nb.cells if c.cell_type == "code"]
    start = next(i for i, s in enumerate(sources) if s.startswith("NEEDLES = "))
    end = sources.index("probe_done = True")
    host = PROBE_HOST if name != "key_in_modules" else "import exercises\n" + PROBE_HOST
    done = subprocess.run([sys.executable, "-c", host, json.dumps(sources[start:end + 1])],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == [True, True]


# --- the grader's own failures: not graded, nothing stored, retried ---------------------------

def _grade_with(course: Path, prelude: str, limits: str = LIMITS) -> subprocess.CompletedProcess:
    code = (prelude + "\nimport sys; from pathlib import Path\n"
            "from gradtutor.grading.batch import grade_cli\nfrom autograder.sandbox.limits import Limits\n"
            f"sys.exit(grade_cli(course_dir=Path({str(course)!r}), assignment=None, workers=2, "
            f"csv=None, force=False, limits={limits}))")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)


def test_grader_failures_are_not_graded_and_retried() -> None:
    """A full disk outside the student's space (the results file cannot be written) and a
    sandbox that cannot set a child up are the grader's failures: those submissions get no
    result and no gradebook row of 0, the run says so and exits 1, and the next run grades them."""
    course = public_course("not-graded")
    chapter = kit.first_chapter()
    released = kit.make_course(course, chapter)
    for student in ("ann", "bob", "cid"):
        kit.submit(course, student, chapter, kit.answered(released, kit.solution))
    full_disk = ("import errno\nfrom gradtutor.records import store\n_write = store.write_result\n"
                 "def write_result(course_dir, result):\n"
                 "    if result.student == 'bob':\n"
                 "        raise OSError(errno.ENOSPC, 'No space left on device')\n"
                 "    return _write(course_dir, result)\n"
                 "store.write_result = write_result")
    done = _grade_with(course, full_disk)
    assert done.returncode == 1 and "1 submission(s) were NOT graded" in done.stderr, done.stderr
    assert "bob" in done.stderr and "No space left" in done.stderr
    slug = chapter.slug
    assert results_path(course, slug, "ann").exists() and not results_path(course, slug, "bob").exists()

    broken = "Limits(cell_seconds=3, notebook_seconds=20, memory_mib=1024, scratch_mib=-1)"
    for p in (course / "gradtutor" / "results").glob("*/*.json"):
        p.unlink()
    done = _grade_with(course, "", broken)  # the child's private /tmp cannot be mounted
    assert done.returncode == 1 and "3 submission(s) were NOT graded" in done.stderr, done.stderr
    assert "before it was set up" in done.stderr
    assert not list((course / "gradtutor" / "results").glob("*/*.json"))

    done = _grade_with(course, "")
    assert done.returncode == 0, done.stderr
    for student in ("ann", "bob", "cid"):
        result = read_result(json.loads(results_path(course, slug, student).read_text()))
        assert result.score == result.max_score > 0
    shutil.rmtree(course.parent, ignore_errors=True)
