"""Trusted side: judge and store finished submissions in a process of their own, while the
children of the next ones run.

The grading loop hands each finished student's assignment (its children's outcomes and the
sanitised cells ``load`` read) to ``Recorder.put`` and goes straight back to forking and
reading children. ``put`` encodes it as one JSON line (typed records, never a pickle: the
outcomes carry strings the students wrote) for the recorder's process. That process is forked
from the grading process when the batch starts, before any thread of this module runs, so it
inherits the imports (torch for the judge) instead of paying for them again; it keeps only
its two pipes open, and has its own interpreter: its work never waits for the grading loop's
lock, nor the loop for it.

The recorder's process judges the answers, writes the autograded notebooks, then stores what
is waiting in one gradebook transaction (``gradebook.one_transaction``) and only after its
commit the results files: a results file is what makes a submission count as graded, so a
SIGKILL at any moment (of the parent, which takes the recorder with it, or of the recorder)
leaves every submission either stored whole or graded again by the next run. When a batch's
transaction fails, each of its submissions is stored alone, so one failure costs one
submission. For each submission it answers one line (stored, or not graded with the reason);
a submission put but never answered (the recorder's process failed) is reported not graded,
with the reason, by ``close``.

The references are the judge's alone (a child never needs one), so they are kept there too
(``keep_checks``: read from the course's private cache, computed where missing): those of a
student's assignment before it is judged, the others while nothing waits to be judged once
the first child is forked. On a course never graded, the children run while the references
are computed.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import os
import queue
import resource
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from autograder.contract import Answers, CellFailed, CellStopped, Done, Message, Ready, message_from_json
from autograder.sandbox.limits import Limits
from gradtutor.course import Course, grade_ids
from gradtutor.grading import scoring
from gradtutor.grading.outcome import Outcome
from gradtutor.grading.profile import OFF, Profile
from gradtutor.key.answer_key import grader_fingerprint, keep_checks
from gradtutor.records import gradebook, store
from gradtutor.records.results import SubmissionResult
from gradtutor.records.submissions import Cell, Submission

Group = tuple[str, str]  # (student, assignment)
MAX_BATCH = gradebook.MAX_BATCH  # submissions in one gradebook transaction, at most
GATHER_SECONDS = 0.25  # how long the recorder waits for more submissions to store with the first
PIPE_BYTES = 2**20  # what the loop may write ahead of the recorder before its writer waits
_STOP = object()


# --- the records that cross the process boundary: JSON, one per line --------------------------

@dataclass(frozen=True)
class Finished:
    """One notebook of a student's assignment, as the recorder judges it."""

    sub: Submission
    outcome: Outcome | None  # None: unreadable, nothing ran
    cells: list[Cell] | None  # the sanitised cells ``load`` read (None: unreadable)
    unreadable: str


def message_to_json(m: Message) -> dict:
    """A child's message in the child's own wire format (``autograder.contract``), so the
    recorder reads it with the same checks the parent did; the profile figures stay behind."""
    if isinstance(m, Ready):
        return {"type": "ready"}
    if isinstance(m, Done):
        return {"type": "done"}
    if isinstance(m, CellStopped):
        return {"type": "cell", "cell": m.cell, "why": m.why}
    if isinstance(m, CellFailed):
        return {"type": "cell", "cell": m.cell, "why": "error", "error": m.error}
    if isinstance(m, Answers):
        return {"type": "answers", "cell": m.cell, "exercise": m.exercise, "answers": list(m.answers)}
    raise TypeError(f"not a message: {type(m).__name__}")


def encode_finished(group: Group, done: Iterable[Finished]) -> bytes:
    notebooks = []
    for f in done:
        o = f.outcome
        notebooks.append({
            "notebook": f.sub.notebook, "path": str(f.sub.path), "problem": f.sub.problem,
            "cells": None if f.cells is None else [[c.kind, c.source, c.grade_id, c.exercise]
                                                   for c in f.cells],
            "unreadable": f.unreadable,
            "outcome": None if o is None else {
                "messages": [message_to_json(m) for m in o.messages], "ended": o.ended,
                "not_graded": o.not_graded, "duration_s": o.duration_s}})
    return _line({"type": "finished", "student": group[0], "assignment": group[1],
                  "notebooks": notebooks})


def decode_finished(raw: dict) -> tuple[Group, list[Finished]]:
    """Raises (ValueError, TypeError, KeyError) on anything not as ``encode_finished`` wrote."""
    student, assignment = _text(raw["student"]), _text(raw["assignment"])
    done = []
    for nb in raw["notebooks"]:
        sub = Submission(student, assignment, _text(nb["notebook"]), Path(_text(nb["path"])),
                         _text(nb["problem"]))
        cells = None if nb["cells"] is None else [
            Cell(_text(k), _text(s), _maybe_text(g), _maybe_text(e)) for k, s, g, e in nb["cells"]]
        outcome = None
        if nb["outcome"] is not None:
            o = nb["outcome"]
            expected = {m["exercise"]: len(m["answers"]) for m in o["messages"]
                        if m.get("type") == "answers"}
            messages = [message_from_json(m, expected) for m in o["messages"]]
            if any(m is None for m in messages):
                raise ValueError("a child's message did not survive the trip to the recorder")
            outcome = Outcome(sub, messages, _text(o["ended"]), _text(o["not_graded"]),
                              float(o["duration_s"]))
        done.append(Finished(sub, outcome, cells, _text(nb["unreadable"])))
    return (student, assignment), done


def _text(value: Any) -> str:
    if type(value) is not str:
        raise TypeError(f"expected a string, not {type(value).__name__}")
    return value


def _maybe_text(value: Any) -> str | None:
    return None if value is None else _text(value)


def _line(record: dict) -> bytes:
    return (json.dumps(record, allow_nan=False, separators=(",", ":")) + "\n").encode()


# --- the parent's side ----------------------------------------------------------------------------

class Recorder:
    """The recorder's process, seen from the grading loop; ``close`` waits for everything put
    before it."""

    def __init__(self, course: Course, sources: dict[str, dict[str, Any]], loaded: dict,
                 limits: Limits, *, to_gradebook: bool, profile: Profile = OFF,
                 on_stored: Callable[[Group], None] = lambda group: None,
                 references: Sequence[str] = ()) -> None:
        """``references``: the exercises whose references the judge will need, the first
        needed first; ``loaded`` fills in while the recorder runs (notebooks are read as their
        children are forked); the recorder reads ``sources`` (the course's own notebooks)
        itself."""
        self.loaded, self.profile, self.on_stored = loaded, profile, on_stored
        self.not_graded: dict[Group, str] = {}
        self._waiting: set[Group] = set()  # put, not answered yet
        self._lock = threading.Lock()
        self._proc = _Forked()
        self._out: queue.SimpleQueue = queue.SimpleQueue()
        self._put(_line({"type": "start", "course": str(course.root), "limits": limits.to_json(),
                         "to_gradebook": to_gradebook, "profile": profile.enabled,
                         "assignments": sorted(sources), "references": list(references)}))
        self._writer = threading.Thread(target=self._write, name="gradtutor-recorder-in", daemon=True)
        self._reader = threading.Thread(target=self._read, name="gradtutor-recorder-out", daemon=True)
        self._writer.start()
        self._reader.start()

    def put(self, group: Group, done: list[tuple[Submission, Any]]) -> None:
        finished = [Finished(sub, outcome, *self._loaded(sub)) for sub, outcome in done]
        with self.profile.step("recorder: encode"):
            line = encode_finished(group, finished)
        with self._lock:
            self._waiting.add(group)
        self._put(line)

    def _loaded(self, sub: Submission) -> tuple[list[Cell] | None, str]:
        cells, _, unreadable = self.loaded[sub]
        return cells, unreadable

    def first_read(self) -> None:
        """The first job is read: the recorder may open the gradebook (nbgrader: about 1 s of
        CPU to import and open) while the zygote warms up, not before."""
        self._put(_line({"type": "first_read"}))

    def children_started(self) -> None:
        """The first child is forked: references may now be kept while nothing waits (before,
        the zygote's warm-up and the parent's start-up have the cores)."""
        self._put(_line({"type": "started"}))

    def close(self) -> dict[Group, str]:
        """Wait until every submission put is stored; the ones not graded, with the reason."""
        self._put(None)
        self._writer.join()
        self._reader.join()
        code = self._proc.wait()
        with self._lock:
            lost = sorted(self._waiting)
            self._waiting.clear()
        for group in lost:  # the recorder's process failed before it answered for these
            self.not_graded[group] = (f"the grader's recorder process stopped (exit code {code}) "
                                      "before storing it")
            self.on_stored(group)
        return self.not_graded

    def _put(self, line: bytes | None) -> None:
        self._out.put(line)

    def _write(self) -> None:
        """Its own thread: a full pipe makes this thread wait, never the grading loop."""
        stream: BinaryIO = self._proc.stdin
        try:
            while (line := self._out.get()) is not None:
                stream.write(line)
                if self._out.empty():
                    stream.flush()
        except (BrokenPipeError, ValueError, OSError):
            pass  # the recorder is gone: close() reports what it did not store
        finally:
            with contextlib.suppress(OSError, ValueError):
                stream.close()

    def _read(self) -> None:
        """Its own thread: the recorder's answers, one line per submission, then its profile."""
        for line in self._proc.stdout:
            try:
                answer = json.loads(line)
                kind = answer["type"]
            except (ValueError, TypeError, KeyError):
                continue
            if kind == "profile":
                self.profile.merge_recorder(answer)
                continue
            group = (str(answer["student"]), str(answer["assignment"]))
            with self._lock:
                if group not in self._waiting:
                    continue
                self._waiting.discard(group)
            if answer.get("not_graded"):
                self.not_graded[group] = str(answer["not_graded"])
            self.on_stored(group)
        self._proc.stdout.close()


class _Forked:
    """The recorder's process, forked from this one with a pipe each way: in, the records
    (its stdin), out, one answer per submission (its stdout)."""

    def __init__(self) -> None:
        into_r, into_w = os.pipe()
        back_r, back_w = os.pipe()
        with contextlib.suppress(OSError):  # room for the loop to write ahead
            fcntl.fcntl(into_w, 1031, PIPE_BYTES)  # F_SETPIPE_SZ
        parent = os.getpid()
        sys.stderr.flush()
        self.pid = os.fork()
        if self.pid == 0:  # the recorder: never returns into the caller's code
            code = 1
            try:
                os.dup2(into_r, 0)
                os.dup2(back_w, 1)
                os.closerange(3, os.sysconf("SC_OPEN_MAX"))  # the zygote's pipes, the parent's files
                code = _recorder(parent)
            except BaseException:
                with contextlib.suppress(BaseException):
                    traceback.print_exc()
            finally:
                os._exit(code)
        os.close(into_r)
        os.close(back_w)
        self.stdin: BinaryIO = os.fdopen(into_w, "wb")
        self.stdout: BinaryIO = os.fdopen(back_r, "rb")

    def wait(self) -> int:
        _, status = os.waitpid(self.pid, 0)
        return os.waitstatus_to_exitcode(status)


def _recorder(parent: int) -> int:
    """The forked process's life: it dies with the grading process, however that ends
    (``PR_SET_PDEATHSIG``: nothing is stored for a run that is gone); Ctrl-C is the grading
    loop's to handle, which then closes the recorder's input."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the grading process ended before the line above
        return 1
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    inbox = os.fdopen(0, "rb", closefd=False)
    first = inbox.readline()
    return serve(first, inbox) if first else 0


# --- the recorder's process ------------------------------------------------------------------------

def serve(first: bytes, inbox: BinaryIO) -> int:
    """The recorder's work: ``first`` is the start record; then records in on ``inbox``, one
    answer per submission out on the channel that was stdout (stdout itself goes to stderr, so
    nothing a library prints can be taken for an answer)."""
    channel = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    where = os.environ.get(CPROFILE_ENV, "")
    if where:  # stats of the two threads, saved apart: PATH (storing) and PATH.inbox (reading)
        import cProfile

        sys.setprofile(None)  # a profiler inherited from the grading process (python -m cProfile)
        storing, reading = cProfile.Profile(), cProfile.Profile()
        storing.enable()
    start = json.loads(first)
    work = Storing(Course.at(start["course"]), start["assignments"],
                   Limits.from_json(start["limits"]), to_gradebook=start["to_gradebook"] is True,
                   profile=Profile(enabled=start["profile"] is True), channel=channel,
                   references=[str(r) for r in start["references"]])
    receive = work.receive if not where else lambda inbox: reading.runcall(work.receive, inbox)
    inbox_thread = threading.Thread(target=receive, args=(inbox,), name="gradtutor-recorder-inbox",
                                    daemon=True)
    inbox_thread.start()
    work.run()
    if where:
        storing.disable()
        inbox_thread.join(timeout=5)
        storing.dump_stats(where)
        reading.dump_stats(where + ".inbox")
    work.send_profile()
    return 0


CPROFILE_ENV = "GRADTUTOR_RECORDER_CPROFILE"  # a path: the recorder's cProfile stats (a benchmark's)


class Storing:
    """Judges and stores what the grading loop sends; ``run`` until it says stop."""

    def __init__(self, course: Course, assignments: list[str], limits: Limits, *,
                 to_gradebook: bool, profile: Profile, channel: BinaryIO,
                 references: Sequence[str] = ()) -> None:
        self.course, self.limits, self.to_gradebook, self.profile = course, limits, to_gradebook, profile
        self.sources = {a: course.source_notebooks(a) for a in assignments}
        self.channel = channel
        self._missing = list(dict.fromkeys(references))  # references not kept yet, in order
        self._started = threading.Event()
        self._may_open = threading.Event()  # the gradebook waits for the first job read
        self._queue: queue.SimpleQueue = queue.SimpleQueue()

    def receive(self, inbox: BinaryIO) -> None:
        """Its own thread: each line decoded and queued; the end of the input is the stop."""
        try:
            for line in inbox:
                raw = json.loads(line)
                self._may_open.set()
                if raw.get("type") == "first_read":
                    continue
                if raw.get("type") == "started":
                    self._started.set()
                    continue
                try:
                    self._queue.put(decode_finished(raw))
                except (ValueError, TypeError, KeyError) as e:  # a bug of ours: say which
                    group = (str(raw.get("student")), str(raw.get("assignment")))
                    self._queue.put((group, _failed("reading it", e)))
        finally:
            self._may_open.set()
            self._queue.put(_STOP)

    def answer(self, group: Group, not_graded: str = "") -> None:
        self.channel.write(_line({"type": "stored", "student": group[0], "assignment": group[1],
                                  "not_graded": not_graded}))

    def send_profile(self) -> None:
        if not self.profile.enabled:
            return
        usage = resource.getrusage(resource.RUSAGE_SELF)
        origin = time.perf_counter() - self.profile.since_start()
        self.channel.write(_line({
            "type": "profile", "cpu_s": usage.ru_utime + usage.ru_stime,
            "steps": {k: [s.count, s.wall_s, s.cpu_s] for k, s in self.profile.parent.items()},
            "counts": self.profile.counts,
            "marks": {k: origin + v for k, v in self.profile.marks.items()}}))  # perf_counter's clock

    def run(self) -> None:
        self._may_open.wait()
        try:
            with self.profile.step("start: gradebook open"):
                if self.to_gradebook:  # this process never serves Jupyter
                    gradebook.without_server_extensions()
                book = gradebook.open_gradebook(self.course) if self.to_gradebook else None
                late = gradebook.LatePenalties(self.course) if self.to_gradebook else None
            self.profile.mark("gradebook opened")
        except Exception as e:  # the grader's failure: every submission is retried next run
            self._fail_all(f"the gradebook could not be opened ({type(e).__name__}: {str(e)[:200]})")
            return
        try:
            stop = False
            while not stop:
                items = [self._wait()]
                until = time.monotonic() + GATHER_SECONDS
                while len(items) < MAX_BATCH and items[-1] is not _STOP:
                    try:  # a batch's gradebook rows cost little more than one submission's
                        items.append(self._queue.get(timeout=max(0.0, until - time.monotonic())))
                    except queue.Empty:
                        break
                stop = _STOP in items
                batch = [i for i in items if i is not _STOP]
                try:
                    self._store(batch, book, late)
                except Exception as e:  # a bug here: those submissions are graded again next run
                    for group, _ in batch:
                        self.answer(group, _failed("storing", e))
        finally:
            if book is not None:
                book.close()

    def _wait(self) -> Any:
        """The next item put; while none is waiting (and children run), the next reference is
        kept meanwhile."""
        while self._missing:
            try:
                if not self._started.is_set():
                    return self._queue.get(timeout=0.05)
                return self._queue.get_nowait()
            except queue.Empty:
                if self._started.is_set():
                    with contextlib.suppress(Exception):  # its submissions say why when judged
                        self._keep(self._missing[:1])
        return self._queue.get()

    def _keep(self, exercise_ids: list[str]) -> None:
        """These exercises' references read back or computed (``keep_checks``), once."""
        wanted = [e for e in exercise_ids if e in self._missing]
        if not wanted:
            return
        try:
            with self.profile.step("references"):
                self.profile.count("references computed",
                                   len(keep_checks(self.course.checks_cache, wanted)))
        finally:  # a unit that fails is not tried again here: the judge says why
            self._missing = [e for e in self._missing if e not in wanted]
            if not self._missing:
                self.profile.mark("references ready")

    def _fail_all(self, why: str) -> None:
        while (item := self._queue.get()) is not _STOP:
            self.answer(item[0], why)

    def _store(self, items: list[tuple[Group, list[Finished] | str]], book: Any, late: Any) -> None:
        judged = []
        for group, done in items:
            try:
                outcome = done if isinstance(done, str) else self._judge(group, done)
            except Exception as e:  # the grader's failure, not the student's: retry next run
                outcome = _failed("scoring", e)
            if isinstance(outcome, str):
                self.answer(group, outcome)
            else:
                judged.append(outcome)
        stored = self._save(judged, book, late) if book is not None else judged
        for j in stored:
            try:
                with self.profile.step("results file"):
                    store.write_result(self.course, j.result)
            except Exception as e:
                self.answer(j.group, _failed("storing", e))
                continue
            self.answer(j.group)

    def _save(self, judged: list[_Judged], book: Any, late: Any) -> list[_Judged]:
        """Into the gradebook: the batch in one transaction, or, when that fails, each alone."""
        with self.profile.step("gradebook"):
            failed = store.save_batch(book, self.course, [(j.result, j.notebooks) for j in judged],
                                      late)
        for index, e in failed.items():
            self.answer(judged[index].group, _failed("storing", e))
        return [j for index, j in enumerate(judged) if index not in failed]

    def _judge(self, group: Group, done: list[Finished]) -> _Judged | str:
        """Score one student's assignment and write its autograded notebooks; the reason it is
        not graded instead, when a child failed for the grader's reasons."""
        ungraded = [f.outcome.not_graded for f in done if f.outcome is not None and f.outcome.not_graded]
        if ungraded:
            return ungraded[0]
        self._keep([c.exercise for f in done if f.cells is not None for c in f.cells
                    if c.exercise is not None])
        sources = self.sources[group[1]]
        parts = []
        for f in sorted(done, key=lambda f: f.sub.notebook):
            source = sources[f.sub.notebook]
            with self.profile.step("judge"):
                part = scoring.result(f.outcome, source, self.limits, unreadable=f.unreadable)
            parts.append(part)
            if f.cells is not None:
                errors = {m.cell: m.error for m in f.outcome.messages if isinstance(m, CellFailed)} \
                    if f.outcome is not None else {}
                with self.profile.step("autograded notebook"):
                    store.write_autograded(self.course, f.sub,
                                           store.autograded_notebook(f.cells, source, part, errors))
        result = SubmissionResult(
            student=group[0], assignment=group[1],
            status="failed" if any(p.status == "failed" for p in parts) else "graded",
            reason="; ".join(p.reason for p in parts if p.reason),
            score=round(sum(p.score for p in parts), 6),
            max_score=round(sum(p.max_score for p in parts), 6),
            graded_at=store.now_iso(),
            duration_s=round(sum(p.duration_s or 0.0 for p in parts), 3),
            exercises=[e for p in parts for e in p.exercises],
            grader=grader_fingerprint(),
        )
        return _Judged(group, result, grade_ids(sources, {f.sub.notebook for f in done}))


@dataclass
class _Judged:
    group: Group
    result: SubmissionResult
    notebooks: dict[str, list[str]]  # notebook -> its grade cells, for the gradebook


def _failed(doing: str, e: Exception) -> str:
    return f"the grader failed while {doing} it ({type(e).__name__}: {str(e)[:200]})"
