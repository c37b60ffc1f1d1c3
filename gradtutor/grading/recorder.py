"""Trusted side: judge and store finished submissions on a thread of their own, while the
children of the next ones run.

The grading loop hands each finished student's assignment (its children's outcomes) to
``Recorder.put`` and goes straight back to forking and reading children. The recorder's thread
judges the answers, writes the autograded notebooks, then stores what is waiting in one
gradebook transaction (``gradebook.one_transaction``) and only after its commit the results
files: a results file is what makes a submission count as graded, so a SIGKILL at any moment
leaves every submission either stored whole or graded again by the next run. When a batch's
transaction fails, each of its submissions is stored alone, so one failure costs one
submission. The thread spends most of its time where the main loop waits (in ``select``, for
the zygote's fork, on the disk), so on two cores its work hides behind the children's.

The references are the judge's alone (a child never needs one), so they are kept here too
(``keep_checks``: read from the course's private cache, computed where missing): those of a
student's assignment before it is judged, the others while nothing waits to be judged once
the first child is forked. On a course never graded, the children run while the references
are computed.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from autograder.contract import CellFailed
from autograder.sandbox.limits import Limits
from gradtutor.course import Course, grade_ids
from gradtutor.grading import scoring
from gradtutor.grading.profile import OFF, Profile
from gradtutor.key.answer_key import grader_fingerprint, keep_checks
from gradtutor.records import gradebook, store
from gradtutor.records.results import SubmissionResult
from gradtutor.records.submissions import Submission

Group = tuple[str, str]  # (student, assignment)
MAX_BATCH = 64  # submissions in one gradebook transaction, at most
_STOP = object()


@dataclass
class _Judged:
    group: Group
    result: SubmissionResult
    notebooks: dict[str, list[str]]  # notebook -> its grade cells, for the gradebook


class Recorder:
    """Judges and stores on its own thread; ``close`` waits for everything put before it."""

    def __init__(self, course: Course, sources: dict[str, dict[str, Any]], loaded: dict,
                 limits: Limits, *, to_gradebook: bool, profile: Profile = OFF,
                 on_stored: Callable[[Group], None] = lambda group: None,
                 references: Sequence[str] = ()) -> None:
        """``references``: the exercises whose references the judge will need, the first
        needed first; ``loaded`` fills in while the recorder runs (notebooks are read as their
        children are forked)."""
        self.course, self.sources, self.loaded, self.limits = course, sources, loaded, limits
        self.to_gradebook, self.profile, self.on_stored = to_gradebook, profile, on_stored
        self.not_graded: dict[Group, str] = {}
        self._missing = list(dict.fromkeys(references))  # references not kept yet, in order
        self._started = threading.Event()
        self._may_open = threading.Event()
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="gradtutor-recorder", daemon=True)
        self._thread.start()  # opens the gradebook once the first job is read (``first_read``)

    def put(self, group: Group, done: list[tuple[Submission, Any]]) -> None:
        self._queue.put((group, done))

    def close(self) -> dict[Group, str]:
        """Wait until every submission put is stored; the ones not graded, with the reason."""
        self._queue.put(_STOP)
        self._thread.join()
        return self.not_graded

    # --- the thread ---

    def _run(self) -> None:
        # the gradebook (nbgrader: ~1 s of CPU to import and open) waits until the first job
        # is read (it would hold the GIL meanwhile); then it opens while the zygote warms up
        while not self._may_open.wait(0.05) and self._queue.empty():
            pass
        try:
            with self.profile.step("start: gradebook open"):
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
                while len(items) < MAX_BATCH:
                    try:
                        items.append(self._queue.get_nowait())
                    except queue.Empty:
                        break
                stop = _STOP in items
                batch = [i for i in items if i is not _STOP]
                try:
                    self._store(batch, book, late)
                except Exception as e:  # a bug here: those submissions are graded again next run
                    for group, _ in batch:
                        self.not_graded.setdefault(group, _failed("storing", e))
        finally:
            if book is not None:
                book.close()

    def first_read(self) -> None:
        """The first job is read: the gradebook may be opened while the zygote warms up."""
        self._may_open.set()

    def children_started(self) -> None:
        """The first child is forked: references may now be kept while nothing waits (before,
        the zygote's warm-up and the parent's start-up have the cores)."""
        self._may_open.set()
        self._started.set()

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
            self.not_graded[item[0]] = why
            self.on_stored(item[0])

    def _store(self, items: list[tuple[Group, list]], book: Any, late: Any) -> None:
        judged = []
        for group, done in items:
            try:
                outcome = self._judge(group, done)
            except Exception as e:  # the grader's failure, not the student's: retry next run
                outcome = _failed("scoring", e)
            if isinstance(outcome, str):
                self.not_graded[group] = outcome
                self.on_stored(group)
            else:
                judged.append(outcome)
        stored = self._save(judged, book, late) if book is not None else judged
        for j in stored:
            try:
                with self.profile.step("results file"):
                    store.write_result(self.course, j.result)
            except Exception as e:
                self.not_graded[j.group] = _failed("storing", e)
            self.on_stored(j.group)

    def _save(self, judged: list[_Judged], book: Any, late: Any) -> list[_Judged]:
        """Into the gradebook: the batch in one transaction, or, when that fails, each alone."""
        if not judged:
            return []
        try:
            with self.profile.step("gradebook"), gradebook.one_transaction(book):
                for j in judged:
                    store.save_grades(book, self.course, j.result, j.notebooks, late)
            return judged
        except Exception:
            pass
        saved = []
        for j in judged:
            try:
                with self.profile.step("gradebook"), gradebook.one_transaction(book):
                    store.save_grades(book, self.course, j.result, j.notebooks, late)
                saved.append(j)
            except Exception as e:
                self.not_graded[j.group] = _failed("storing", e)
                self.on_stored(j.group)
        return saved

    def _judge(self, group: Group, done: list[tuple[Submission, Any]]) -> _Judged | str:
        """Score one student's assignment and write its autograded notebooks; the reason it is
        not graded instead, when a child failed for the grader's reasons."""
        ungraded = [o.not_graded for _, o in done if o is not None and o.not_graded]
        if ungraded:
            return ungraded[0]
        self._keep([e for sub, _ in done if self.loaded[sub][1] is not None
                    for e in self.loaded[sub][1].specs])
        sources = self.sources[group[1]]
        parts = []
        for sub, outcome in sorted(done, key=lambda d: d[0].notebook):
            source = sources[sub.notebook]
            cells, _, unreadable = self.loaded[sub]
            with self.profile.step("judge"):
                part = scoring.result(outcome, source, self.limits, unreadable=unreadable)
            parts.append(part)
            if cells is not None:
                errors = {m.cell: m.error for m in outcome.messages if isinstance(m, CellFailed)} \
                    if outcome is not None else {}
                with self.profile.step("autograded notebook"):
                    store.write_autograded(self.course, sub,
                                           store.autograded_notebook(cells, source, part, errors))
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
        return _Judged(group, result, grade_ids(sources, {s.notebook for s, _ in done}))


def _failed(doing: str, e: Exception) -> str:
    return f"the grader failed while {doing} it ({type(e).__name__}: {str(e)[:200]})"
