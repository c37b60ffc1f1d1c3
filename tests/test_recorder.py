"""The recorder's process (issue #28, item 2): what crosses to it, and what its failures leave.

The grading loop sends each finished submission to the recorder's process as JSON (never a
pickle: the outcomes carry strings the students wrote); the recorder reads the child's
messages with the same checks the parent did. A recorder that fails, or dies, leaves each
submission it did not store "not graded" with the reason, never lost. The whole path (stored,
resumed after SIGKILL, the gradebook) is tested end to end in tests/test_hostile.py and
tests/test_grade_start.py.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from autograder.contract import Answers, CellFailed, CellStopped, Done, Ready
from autograder.sandbox.limits import Limits
from gradtutor.course import Course
from gradtutor.grading import recorder
from gradtutor.grading.outcome import Outcome
from gradtutor.grading.profile import Profile
from gradtutor.grading.recorder import Finished, Recorder, decode_finished, encode_finished
from gradtutor.records.submissions import Cell, Submission

HOSTILE = 'x"\n\\u0000\u2028</script>{"type": "stored"}\udcff'.encode("utf-8", "surrogatepass") \
    .decode("utf-8", "replace")


def _finished(student: str = "ann") -> Finished:
    sub = Submission(student, "ch01", "nb", Path(f"/course/submitted/{student}/ch01/nb.ipynb"))
    answers = ({"t": "str", "v": HOSTILE}, {"t": "array", "shape": [2], "dtype": "float32",
                                            "v": [1.5, "nan"]}, {"t": "missing", "why": "no_variable"})
    outcome = Outcome(sub, [Ready((("child: mounts", 0.1),)), CellFailed(2, "ValueError"),
                            CellStopped(3, "cpu"), Answers("ex1", 4, answers), Done()],
                      ended=HOSTILE, not_graded="", duration_s=0.25)
    cells = [Cell("code", HOSTILE, None, None), Cell("code", "y = 1", "ex1", "ex1"),
             Cell("markdown", "# " + HOSTILE, "intro", None)]
    return Finished(sub, outcome, cells, "")


def test_a_finished_submission_crosses_as_one_line_of_json_and_comes_back_the_same() -> None:
    sent = _finished()
    line = encode_finished(("ann", "ch01"), [sent])
    assert line.endswith(b"\n") and line.count(b"\n") == 1  # one record, whatever the students wrote
    group, (got,) = decode_finished(json.loads(line))
    assert group == ("ann", "ch01")
    assert got.sub == sent.sub and got.cells == sent.cells and got.unreadable == ""
    # the messages are the child's, read again with the contract's checks; the profile stays behind
    assert got.outcome.messages == [Ready(()), *sent.outcome.messages[1:]]
    assert (got.outcome.ended, got.outcome.duration_s) == (HOSTILE, 0.25)


def test_an_unreadable_submission_crosses_without_cells_or_outcome() -> None:
    sub = Submission("bob", "ch01", "nb", Path("/x"), problem="a link")
    line = encode_finished(("bob", "ch01"), [Finished(sub, None, None, "not JSON")])
    _, (got,) = decode_finished(json.loads(line))
    assert got == Finished(sub, None, None, "not JSON")


@pytest.mark.parametrize("damage", [
    lambda r: r["notebooks"][0]["cells"][0].__setitem__(1, 7),  # a cell's source not a string
    lambda r: r["notebooks"][0]["outcome"]["messages"].append({"type": "cell", "cell": -1, "why": "cpu"}),
    lambda r: r["notebooks"][0]["outcome"]["messages"].append({"type": "answers", "cell": 1,
                                                               "exercise": "ex1", "answers": "no"}),
    lambda r: r.__setitem__("student", ["ann"]),
])
def test_a_record_not_as_the_loop_writes_it_is_refused(damage) -> None:
    raw = json.loads(encode_finished(("ann", "ch01"), [_finished()]))
    damage(raw)
    with pytest.raises((ValueError, TypeError, KeyError)):
        decode_finished(raw)


def _recorder(tmp_path: Path, subs: list[Submission], stored: list) -> Recorder:
    loaded = {sub: (None, None, "unreadable") for sub in subs}
    return Recorder(Course.at(tmp_path), {}, loaded, Limits(), to_gradebook=False,
                    profile=Profile(enabled=True), on_stored=stored.append)


def test_a_recorder_that_dies_leaves_what_it_did_not_store_not_graded_with_the_reason(
        tmp_path: Path, monkeypatch) -> None:
    def dies(self, group, done):  # in the recorder's process (forked with this patch)
        os._exit(3)

    monkeypatch.setattr(recorder.Storing, "_judge", dies)
    subs = [Submission(s, "ch01", "nb", tmp_path / s) for s in ("ann", "bob")]
    stored: list = []
    rec = _recorder(tmp_path, subs, stored)
    for sub in subs:
        rec.put((sub.student, "ch01"), [(sub, None)])
    not_graded = rec.close()
    assert set(not_graded) == {("ann", "ch01"), ("bob", "ch01")}
    assert all("recorder process stopped (exit code 3)" in why for why in not_graded.values())
    assert sorted(stored) == [("ann", "ch01"), ("bob", "ch01")]  # the progress bar still ends
    assert not (tmp_path / "gradtutor").exists()  # nothing stored for them


def test_a_judging_failure_costs_one_submission_and_says_why(tmp_path: Path, monkeypatch) -> None:
    def fails(self, group, done):
        if group[0] == "ann":
            raise RuntimeError("a bug of the grader's")
        return "the sandbox failed"  # the child's not_graded reason, passed on

    monkeypatch.setattr(recorder.Storing, "_judge", fails)
    subs = [Submission(s, "ch01", "nb", tmp_path / s) for s in ("ann", "bob")]
    stored: list = []
    rec = _recorder(tmp_path, subs, stored)
    rec.children_started()
    for sub in subs:
        rec.put((sub.student, "ch01"), [(sub, None)])
    not_graded = rec.close()
    assert not_graded[("ann", "ch01")] == ("the grader failed while scoring it "
                                           "(RuntimeError: a bug of the grader's)")
    assert not_graded[("bob", "ch01")] == "the sandbox failed"
    assert sorted(stored) == [("ann", "ch01"), ("bob", "ch01")]


_HOLDER = """
import sys, time
from pathlib import Path
from autograder.sandbox.limits import Limits
from gradtutor.course import Course
from gradtutor.grading.recorder import Recorder
kept = open("/dev/null")  # a file of the grading process the recorder must not keep
rec = Recorder(Course.at(sys.argv[1]), {}, {}, Limits(), to_gradebook=False)
print(rec._proc.pid, flush=True)
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_the_recorder_keeps_only_its_pipes_and_dies_with_the_grading_process(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys
    import time

    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(tmp_path)], stdout=subprocess.PIPE,
                              text=True, env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])})
    try:
        pid = int(holder.stdout.readline())
        time.sleep(0.5)
        fds = {int(n): os.readlink(f"/proc/{pid}/fd/{n}") for n in os.listdir(f"/proc/{pid}/fd")}
        assert fds[0].startswith("pipe:") and fds[1] == fds[2]  # its stdout goes to stderr
        pipes = {fd: link for fd, link in fds.items() if fd > 2 or fd == 0}
        assert all(link.startswith("pipe:") for link in pipes.values()), fds
        assert len(pipes) == 2, fds  # its input, and its answers (the stdout it was given)
        assert not any("/dev/null" in link for fd, link in fds.items() if fd > 2), fds
        assert _alive(pid)
        holder.send_signal(signal.SIGKILL)
        holder.wait()
        for _ in range(100):
            if not _alive(pid):
                break
            time.sleep(0.1)
        assert not _alive(pid)
    finally:
        holder.kill()


# --- the gradebook batch: a few queries for the whole batch, the same rows as nbgrader's calls ---

def test_a_batch_reads_the_gradebook_in_as_many_queries_for_one_submission_as_for_many(
        tmp_path: Path, monkeypatch) -> None:
    import sys

    from nbgrader.api import Gradebook
    from sqlalchemy import event

    from gradtutor.records import gradebook

    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")  # alembic
    course = Course.at(tmp_path)
    cells = ["c1", "c2", "c3"]
    students = [f"s{i}" for i in range(6)]
    with Gradebook(course.db_url) as gb:
        gb.update_or_create_assignment("a")
        gb.update_or_create_notebook("nb", "a")
        for cell in cells:
            gb.update_or_create_grade_cell(cell, "nb", "a", max_score=2, cell_type="code")
        # first grading: students and submissions created by nbgrader's own calls
        with gradebook.one_transaction(gb):
            gradebook.save_all(gb, course, [(s, "a", {"c1": ("correct", 2.0), "c2": ("wrong", 0.0)},
                                             {"nb": cells}) for s in students])
        statements: list[str] = []
        event.listen(gb.engine, "before_cursor_execute",
                     lambda conn, cursor, sql, *args: statements.append(sql))

        def regrade(who: list[str], points: float) -> int:
            statements.clear()
            with gradebook.one_transaction(gb):
                saved = gradebook.save_all(gb, course, [(s, "a", {"c1": ("partial", points)},
                                                         {"nb": cells}) for s in who])
            assert saved == [{"seconds_late": 0.0, "penalty": 0.0, "manual_grades": 0}] * len(who)
            return sum(sql.lstrip().upper().startswith("SELECT") for sql in statements)

        one, many = regrade(students[:1], 1.0), regrade(students, 1.5)
        assert one == many <= 6, statements
    with Gradebook(course.db_url) as gb:  # what nbgrader reads back
        for s in students:
            assert gb.find_grade("c1", "nb", "a", s).auto_score == 1.5
            assert gb.find_grade("c2", "nb", "a", s).auto_score is None  # no answer scored: manual
            assert gb.find_grade("c2", "nb", "a", s).needs_manual_grade


def test_the_recorders_nbgrader_writes_without_its_server_extensions(tmp_path: Path) -> None:
    """``gradebook.without_server_extensions`` (the recorder's process): nbgrader's api,
    utils and late-penalty step import and work; its Jupyter server extensions never load."""
    import subprocess
    import sys

    code = f"""
import sys
from gradtutor.course import Course
from gradtutor.records import gradebook
gradebook.without_server_extensions()
from nbgrader.api import Gradebook
course = Course.at({str(tmp_path)!r})
with Gradebook(course.db_url) as gb:
    gb.update_or_create_assignment("a")
step = gradebook.LatePenalties(course).step
assert step.plugin_inst.late_submission_penalty("ann", 4.0, 3600) is None  # default: none
import nbgrader
assert nbgrader.__version__ and "jupyter_server" not in sys.modules, sorted(sys.modules)
print("ok")
"""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                          env=env, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
