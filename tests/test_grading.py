"""Fast tests of the grading pieces: reading, sanitising, the trusted scoring, storage, CLI.

The end-to-end runs (real nbgrader, forked workers, hostile notebooks) are in
test_nbgrader_flow.py and test_hostile.py.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
import torch
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from autograder.contract import Ready, parse_message
from autograder.plain import to_plain
from autograder.sandbox import seal
from autograder.sandbox.limits import Limits, uid_block
from autograder.sandbox.zygote import Snapshot
from autograder.selfcheck import grade
from gradtutor.authoring import cells
from gradtutor.course import Course
from gradtutor.grading import scoring, submission
from gradtutor.grading.outcome import Outcome
from gradtutor.grading.submission import Submission, Unreadable
from gradtutor.key import registry
from gradtutor.nbcells import grade_id, is_grade
from gradtutor.records import files, store
from gradtutor.records.results import ExerciseResult, SubmissionResult
from gradtutor.reports import feedback_pages as feedback

EX = registry.all_exercises()[0]
GRADTUTOR = str(Path(sys.executable).parent / "gradtutor")


def source_nb() -> nbformat.NotebookNode:
    nb = new_notebook()
    nb.cells = [new_markdown_cell("# A chapter"), new_code_cell("import torch"),
                *cells.exercise_cells(EX, "1.1")]
    return nb


def ids(cs: list[submission.Cell]) -> list[str | None]:
    return [c.grade_id for c in cs]


# --- reading untrusted files ---------------------------------------------------------------------

@pytest.mark.parametrize(("data", "reason"), [
    (b'{"cells": [,]}', "not valid JSON"),
    (b'{"cells": [{"cell_type": "code", "sou', "truncated"),
    (b'{"cells": [], "nbformat": 5, "nbformat_minor": 0, "metadata": {}}', "format version 5"),
    (b'{"cells": [], "nbformat": 4, "nbformat_minor": 5, "metadata": {"x": "\xff"}}', "not UTF-8"),
    (b'[1, 2, 3]', "not a notebook"),
])
def test_unreadable_files_get_a_reason(data: bytes, reason: str) -> None:
    with pytest.raises(Unreadable, match=reason):
        submission.parse(data)


def test_enormous_file_is_refused_while_reading(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(submission, "MAX_NOTEBOOK_BYTES", 1000)
    (tmp_path / "submitted" / "ann" / "ch").mkdir(parents=True)
    path = tmp_path / "submitted" / "ann" / "ch" / "nb.ipynb"
    path.write_text(nbformat.writes(source_nb()) + " " * 2000)
    with pytest.raises(Unreadable, match="the limit"):
        submission.read(Submission("ann", "ch", "nb", path), Course.at(tmp_path))


# --- sanitising: what nbgrader's OverwriteCells/DeduplicateIds/add_missing_cells do ------------

def test_locked_cells_are_restored_and_answers_kept() -> None:
    src = source_nb()
    sub = json.loads(nbformat.writes(src))
    for c in sub["cells"]:
        gid = grade_id(c)
        if gid == EX.id:
            c["source"] = "1.0  # forged"
        if gid == f"{EX.id}-answer":
            c["source"] = "my answer"
    out = submission.sanitise(nbformat.from_dict(sub).cells, src)
    by_id = {c.grade_id: c for c in out if c.grade_id}
    assert by_id[EX.id].source == next(c.source for c in src.cells
                                       if grade_id(c) == EX.id)
    assert by_id[f"{EX.id}-answer"].source == "my answer"
    assert by_id[EX.id].exercise == EX.id


def test_deleted_grade_cell_comes_back_after_its_answer() -> None:
    src = source_nb()
    sub = nbformat.from_dict(json.loads(nbformat.writes(src)))
    sub.cells = [c for c in sub.cells if grade_id(c) != EX.id]
    out = submission.sanitise(sub.cells, src)
    assert ids(out).index(EX.id) == ids(out).index(f"{EX.id}-answer") + 1


def test_duplicates_keep_the_last_and_retyped_cells_are_restored() -> None:
    src = source_nb()
    sub = nbformat.from_dict(json.loads(nbformat.writes(src)))
    at = next(i for i, c in enumerate(sub.cells) if grade_id(c) == EX.id)
    grade_cell = sub.cells[at]
    copy = nbformat.from_dict(json.loads(json.dumps(grade_cell)))
    sub.cells.insert(1, copy)  # an early forged copy
    grade_cell.cell_type = "markdown"
    out = submission.sanitise(sub.cells, src)
    assert ids(out).count(EX.id) == 1
    assert out[1].grade_id is None and out[1].exercise is None  # the early copy: ordinary cell
    restored = next(c for c in out if c.grade_id == EX.id)
    assert restored.kind == "code" and restored.exercise == EX.id


def test_unknown_grade_ids_are_ordinary_cells() -> None:
    src = source_nb()
    sub = nbformat.from_dict(json.loads(nbformat.writes(src)))
    sub.cells.append(new_code_cell("x = 1", metadata={"nbgrader": {"grade": True, "grade_id": "zzz",
                                                                   "points": 99}}))
    out = submission.sanitise(sub.cells, src)
    assert out[-1].grade_id is None and out[-1].exercise is None


# --- the trusted side ---------------------------------------------------------------------------

def outcome(*messages: dict, ended: str = "") -> Outcome:
    """What the parent keeps of these lines from a child: only messages of the contract."""
    expected = {EX.id: len(EX.variants())}
    typed = [parse_message(json.dumps(m).encode(), expected) for m in messages]
    return Outcome(Submission("s", "a", "nb", Path("nb.ipynb")),
                   [Ready(), *(m for m in typed if m is not None)], ended, duration_s=0.1)


def reference_answers() -> list[dict]:
    from gradtutor.key.answer_key import reference

    del reference  # the plain form of the references: what an honest worker sends
    return [to_plain(EX.reference(**params)) for params in EX.variants()]


def test_right_plain_answers_score_full_as_builtin_floats() -> None:
    msg = {"type": "answers", "exercise": EX.id, "cell": 3, "answers": reference_answers()}
    result = scoring.result(outcome(msg, {"type": "done"}), source_nb(), Limits())
    (entry,) = result.exercises
    assert entry.points == EX.points and type(entry.points) is float
    assert entry.verdict == "correct" and result.status == "graded"


@pytest.mark.parametrize("forged", [
    {"type": "answers", "exercise": EX.id, "cell": 3, "answers": "all right"},
    {"type": "answers", "exercise": EX.id, "cell": 3, "answers": [{"t": "ellipsis"}]},  # too few
    {"type": "answers", "exercise": "other", "cell": 3, "answers": []},
    {"type": "answers", "exercise": EX.id, "answers": [{"t": "none"}] * (1 + len(EX.hidden))},
    {"type": "score", "exercise": EX.id, "points": 100},
])
def test_malformed_messages_are_ignored_with_a_reason(forged: dict) -> None:
    result = scoring.result(outcome(forged, ended="the notebook's process was killed by SIGKILL"),
                            source_nb(), Limits())
    (entry,) = result.exercises
    assert entry.points == 0 and "No answer reached the grader" in entry.message
    assert "SIGKILL" in result.reason


@pytest.mark.parametrize("weird", [
    {"t": "array", "shape": [10**9], "dtype": "float", "v": "x"},
    {"t": "array", "shape": [2], "dtype": "float", "v": [1.0]},
    {"t": "array", "shape": [], "dtype": "<script>", "v": True},
    {"t": "dict", "v": {"x": {"t": "dict", "v": {"grad": {"t": "array"}}}}},
    {"t": "eval", "v": "__import__('os')"},
    "a string", 7, None,
])
def test_weird_plain_data_is_invalid_not_a_crash(weird: object) -> None:
    answers = [weird] * (1 + len(EX.hidden))
    result = scoring.result(outcome({"type": "answers", "exercise": EX.id, "cell": 3, "answers": answers}),
                            source_nb(), Limits())
    (entry,) = result.exercises
    assert entry.points == 0 and entry.verdict == "invalid"


def test_free_text_from_the_child_never_reaches_the_result() -> None:
    secret = "ROSTER: ann bob eve"
    lines = [{"type": "cell", "cell": 1, "error": secret},
             {"type": "cell", "cell": 2, "why": secret},
             {"type": "answers", "exercise": EX.id, "cell": 3,
              "answers": [{"t": "error", "v": secret, "text": secret}] * (1 + len(EX.hidden))},
             {"type": "crash", "error": secret}]
    result = scoring.result(outcome(*lines), source_nb(), Limits())
    assert secret not in json.dumps(result.to_json())
    assert "Your code raised Exception." in result.exercises[0].message


def test_unreadable_notebook_fails_with_its_reason() -> None:
    result = scoring.result(None, source_nb(), Limits(), unreadable="not valid JSON")
    assert result.status == "failed" and result.reason == "not valid JSON"
    assert result.score == 0 and result.max_score == EX.points


@pytest.mark.parametrize("line", [b"not json", b"[1, 2]", b"\xff\xfe", b"[" * 100_000,
                                  b'{"type": "answers", "exercise": "x", "cell": -1, "answers": []}'])
def test_parent_accepts_only_messages_of_the_contract(line: bytes) -> None:
    assert parse_message(line, {"x": 0}) is None


# --- in the notebook: grade() for nbgrader -------------------------------------------------------

def test_grade_returns_a_builtin_float_and_writes_nothing_on_stderr(capsys) -> None:
    right = EX.reference(**EX.params)
    points = grade(EX.id, right)  # no kernel: the hidden variants cannot be re-run, so partial
    assert type(points) is float and 0 <= points <= EX.points
    for strange in (None, "nonsense", torch.ones(3, requires_grad=True) * 2, {"a": object()}):
        assert type(grade(EX.id, strange)) is float
    assert grade("no_such_exercise", 1) == 0.0
    assert capsys.readouterr().err == ""


# --- the worker's own tools are put back -----------------------------------------------------------

def test_snapshot_undoes_monkeypatching() -> None:
    import autograder.plain

    snap = Snapshot()
    allclose, to_plain_fn, eq = torch.allclose, autograder.plain.to_plain, torch.Tensor.__eq__
    try:
        torch.allclose = lambda *a, **k: True
        autograder.plain.to_plain = lambda *a, **k: {"t": "ellipsis"}
        torch.Tensor.__eq__ = lambda self, other: True
        snap.restore()
        assert torch.allclose is allclose and autograder.plain.to_plain is to_plain_fn
        assert torch.Tensor.__eq__ is eq
    finally:
        torch.allclose, autograder.plain.to_plain, torch.Tensor.__eq__ = allclose, to_plain_fn, eq


def test_snapshot_puts_back_the_grader_s_classes_and_objects() -> None:
    """Not only module namespaces: a class defined in ``autograder`` (entries changed or added)
    and an object a module of it holds (the by-hand guard: its depth, an added attribute)."""
    from autograder import byhand, judge

    snap = Snapshot()
    watch = byhand.guard_classes()[0]
    dispatch, run_backward = vars(watch)["__torch_dispatch__"], byhand._Engine.run_backward
    try:
        byhand._GUARD.depth, byhand._GUARD.planted = 3, True
        watch.__torch_dispatch__ = lambda *a, **k: None
        byhand._Engine.run_backward = lambda *a, **k: None
        judge.Judgement.planted = True
        snap.restore()
        assert byhand._GUARD.depth == 0 and not hasattr(byhand._GUARD, "planted")
        assert vars(watch)["__torch_dispatch__"] is dispatch and byhand._Engine.run_backward is run_backward
        assert not hasattr(judge.Judgement, "planted")
    finally:
        snap.restore()


def test_snapshot_found_intact_still_sees_every_kind_of_write() -> None:
    """Once a namespace is found intact, only its dict's version tag is read: every route of
    writing to it must still show (item, attribute, ``del``, ``update``, a new class attribute)."""
    import autograder.plain

    snap = Snapshot()
    assert all(s.version is not None for s in snap.saved)  # CPython 3.11: the fast path is used
    allclose, to_plain_fn, eq = torch.allclose, autograder.plain.to_plain, torch.Tensor.__eq__
    writes = [lambda: setattr(torch, "allclose", lambda *a, **k: True),
              lambda: vars(autograder.plain).update(to_plain=lambda *a, **k: None),
              lambda: delattr(torch, "allclose"),
              lambda: setattr(torch.Tensor, "__eq__", lambda self, other: True),
              lambda: setattr(torch.Tensor, "grader_sees_this", 1)]
    try:
        for write in writes:
            snap.restore()
            snap.restore()  # found intact: the next check reads the version tags alone
            write()
            snap.restore()
            assert torch.allclose is allclose and autograder.plain.to_plain is to_plain_fn
            assert torch.Tensor.__eq__ is eq and not hasattr(torch.Tensor, "grader_sees_this")
    finally:
        torch.allclose, autograder.plain.to_plain, torch.Tensor.__eq__ = allclose, to_plain_fn, eq
        vars(torch.Tensor).get("grader_sees_this") is None or delattr(torch.Tensor, "grader_sees_this")


@pytest.mark.skipif(os.geteuid() != 0, reason="PID namespaces need root")
def test_one_sigkill_to_a_namespace_init_ends_every_process_in_it() -> None:
    """The parent's kill needs nothing of the submission: a grandchild that stopped itself,
    blocks every signal and sleeps as the worker uid dies with the init the zygote forked."""
    uid = uid_block(os.getpid()) + 65_535  # a submission uid no batch of this process reaches
    ready_r, ready_w = os.pipe()
    own = os.open("/proc/self/ns/pid", os.O_RDONLY)
    init = seal.fork_as_init(own)
    if init == 0:  # pid 1 of its namespace, as a child of the zygote is
        try:
            if os.fork() == 0:
                os.setgid(uid)
                os.setuid(uid)
                # /proc is still the host's here: its pid as the parent sees it
                os.write(ready_w, os.readlink("/proc/self").encode().ljust(16))
                signal.pthread_sigmask(signal.SIG_BLOCK, set(range(1, signal.NSIG)) - {9, 19})
                os.kill(os.getpid(), signal.SIGSTOP)
            time.sleep(60)
        finally:
            os._exit(0)
    grandchild = int(os.read(ready_r, 16))
    again = seal.fork_as_init(own)  # the caller's own namespace came back: a second one works
    if again == 0:
        os._exit(0)
    os.waitpid(again, 0)
    os.close(own)
    os.kill(init, signal.SIGKILL)
    _, status = os.waitpid(init, 0)  # returns once the kernel has ended the whole namespace
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    assert not Path(f"/proc/{grandchild}").exists() or \
        f"Uid:\t{uid}" not in Path(f"/proc/{grandchild}/status").read_text()


def test_the_seccomp_filter_refuses_user_namespaces_only() -> None:
    """Under ``lock_down`` a new user namespace fails with EPERM (unshare and clone, as the
    util-linux tool does it); threads, fork and programs still work."""
    code = ("import os, subprocess, threading\nfrom autograder.sandbox import seal\n"
            "seal.lock_down()\n"
            "try:\n    seal.unshare(seal.CLONE_NEWUSER)\n    print('created')\n"
            "except OSError as e:\n    print(e.errno)\n"
            "t = threading.Thread(target=print, args=('thread',))\nt.start()\nt.join()\n"
            "print(subprocess.run(['unshare', '-U', 'true']).returncode != 0)\n"
            "print(open('/proc/self/status').read().count('NoNewPrivs:\\t1'))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["1", "thread", "True", "1"], done.stderr


# --- storage -------------------------------------------------------------------------------------

def test_atomic_writes_leave_no_temporary_files(tmp_path: Path) -> None:
    path = tmp_path / "r" / "x.json"
    files.write_atomic(path, b"one")
    files.write_atomic(path, b"two")
    assert path.read_bytes() == b"two"
    assert [p.name for p in path.parent.iterdir()] == ["x.json"]



def test_autograded_notebook_is_valid_nbformat_with_the_verdict(tmp_path: Path) -> None:
    # built as plain dicts (no per-cell validation in the parent), so the schema is checked here
    source = source_nb()
    msg = {"type": "answers", "exercise": EX.id, "cell": 3, "answers": reference_answers()}
    result = scoring.result(outcome(msg, {"type": "done"}), source, Limits())
    sub = Submission("ann", "ch", "nb", tmp_path / "nb.ipynb")
    nb = store.autograded_notebook(submission.sanitise(source.cells, source), source, result)
    store.write_autograded(Course.at(tmp_path), sub, nb)
    written = nbformat.read(tmp_path / "autograded" / "ann" / "ch" / "nb.ipynb", as_version=4)
    nbformat.validate(written)
    graded = [c for c in written.cells if is_grade(c)]
    assert [c.metadata.nbgrader.grade_id for c in graded] == [EX.id]
    (stream, points) = graded[0].outputs
    assert stream.text.startswith("correct: ") and points.data["text/plain"] == f"{EX.points:g}"
    assert len({c.id for c in written.cells}) == len(written.cells)

def test_csv_has_one_row_per_exercise(tmp_path: Path) -> None:
    result = SubmissionResult("ann", "ch", exercises=[
        ExerciseResult(EX.id, 0.5, 1.0, verdict="partial", misconception=None)])
    store.write_csv(tmp_path / "s.csv", [result])
    assert (tmp_path / "s.csv").read_text().splitlines() == [
        ",".join(store.CSV_COLUMNS), f"ann,ch,{EX.id},0.5,1,partial,,auto"]


def test_feedback_page_escapes_and_gives_the_hint() -> None:
    wrong = EX.wrong[0]
    result = SubmissionResult(
        "<b>eve</b>", "ch", status="graded", reason="<script>", score=0.0, max_score=1.0,
        graded_at="now", exercises=[
            ExerciseResult(EX.id, 0.0, 1.0, verdict="wrong", score=0.0,
                           misconception=wrong.misconception, message="<img src=x onerror=alert(1)>")])
    page = feedback.page(result)
    assert "<script>" not in page and "<img" not in page and "<b>eve" not in page
    import html

    assert html.escape(wrong.hint) in page and EX.title in page


# --- the command line ----------------------------------------------------------------------------

def test_grade_help_lists_every_option() -> None:
    out = subprocess.run([GRADTUTOR, "grade", "--help"], capture_output=True, text=True).stdout
    for option in ("COURSE_DIR" if "COURSE_DIR" in out else "course_dir", "--assignment",
                   "--workers", "--csv", "--force"):
        assert option in out


def test_grade_explains_a_folder_that_is_not_a_course(tmp_path: Path) -> None:
    done = subprocess.run([GRADTUTOR, "grade", str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 2 and "no submitted/ folder" in done.stderr
    (tmp_path / "submitted").mkdir()
    done = subprocess.run([GRADTUTOR, "grade", str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 2 and "generate_assignment" in done.stderr


def test_feedback_without_results_says_what_to_do(tmp_path: Path) -> None:
    done = subprocess.run([GRADTUTOR, "feedback", str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 1 and "gradtutor grade" in done.stderr


def test_nbgrader_reads_the_grade_cell_output_as_the_points(capsys) -> None:
    """What nbgrader's determine_grade makes of the output grade() leaves in a grade cell:
    the exact partial credit, and zero (not the default full marks) for a wrong answer."""
    from nbformat.v4 import new_output
    from nbgrader.utils import determine_grade

    def scored(answer: object) -> float:
        points = grade(EX.id, answer)
        printed = capsys.readouterr()
        cell = new_code_cell("grade(...)", metadata={"nbgrader": {
            "grade": True, "grade_id": EX.id, "points": EX.points, "solution": False}})
        cell.outputs = [new_output("stream", name="stdout", text=printed.out),
                        new_output("execute_result", data={"text/plain": repr(points)})]
        if printed.err:
            cell.outputs.append(new_output("stream", name="stderr", text=printed.err))
        auto, _ = determine_grade(cell)
        assert auto == points
        return auto

    assert scored(None) == 0.0
    assert scored("nonsense") == 0.0
    assert 0 < scored(EX.reference(**EX.params)) < EX.points  # hidden variants not re-run here
