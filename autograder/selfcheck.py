"""Student side: ``check`` gives instant feedback, ``grade`` scores a cell for nbgrader.

Both pass the answer explicitly and never raise: whatever the student hands over, the result
is a ``Feedback`` (or a float for nbgrader) with a reason. They run in the student's kernel, so
a determined student can fool them; that only fools the student. Real grading goes through
``gradtutor grade``, which judges plain data in a separate, trusted process. The
check data comes from ``checkdata`` (the runtime's, or the full package's): ``check`` uses the
shown and practice values, ``grade`` every variant the installation has.
"""

from __future__ import annotations

import contextlib
import difflib
import html
import json
import os
import re
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from autograder import answer_cells, byhand, checkdata
from autograder.answers import (
    FROM_NAMESPACE,
    HISTORY_CELLS,
    answer_cell_from_history,
    assigns,
    names_read,
    read_all,
)
from autograder.feedback import VERDICTS, Feedback, as_html, misconception_line
from autograder.judge import describe_difference, judge


def _unknown(exercise_id: Any) -> Feedback:
    known = checkdata.ids()
    if not known:
        message = "No check data is installed here, so answers are not checked in this place."
    else:
        guess = difflib.get_close_matches(str(exercise_id), known, n=1)
        tip = f" Did you mean {guess[0]!r}?" if guess else ""
        message = f"There is no exercise called {str(exercise_id)[:60]!r}.{tip}"
    return Feedback(exercise=str(exercise_id)[:60], title="unknown exercise", verdict="invalid",
                    score=0.0, message=message)


def _crash(exercise_id: str, e: BaseException) -> Feedback:
    return Feedback(exercise=exercise_id, title=exercise_id, verdict="error", score=0.0,
                    message=f"The checker could not read this answer ({type(e).__name__}). "
                            "Give a plain number, list, tensor, True/False or None.")


def _check_of(exercise_id: Any) -> checkdata.Check | None:
    if not isinstance(exercise_id, str):
        return None
    try:
        return checkdata.get(exercise_id)
    except KeyError:
        return None


def check(exercise_id: str, answer: Any = Ellipsis, *, namespace: dict[str, Any] | None = None,
          history: list[str] | None = None) -> Feedback:
    """Judge ``answer`` at the values shown in the notebook and, in a kernel, re-run the answer
    cell (found in the kernel's history, as grading does) at the practice values too; returns
    a displayable Feedback that says where an answer right only at the shown values fails.
    Under nbgrader's Validate, a verdict other than right is also told to the validator."""
    fb = _self_check(exercise_id, answer, namespace, history)
    _tell_validate(fb)
    return fb


def _tell_validate(fb: Feedback) -> None:
    """nbgrader's Validate (the button and ``nbgrader validate``, which run the notebook with
    NBGRADER_VALIDATING=1) fails a grade cell only on an error or on text on stderr; a check
    cell never raises, so without this it would call wrong work "passes all the tests".
    The verdict goes to stderr, where the validator shows it under the cell; grading never
    sets the variable, so scores do not change."""
    if os.environ.get("NBGRADER_VALIDATING") == "1" and not fb.correct:
        print(f"The self-check says:\n{fb}", file=sys.stderr)


def _self_check(exercise_id: str, answer: Any, namespace: dict[str, Any] | None,
                history: list[str] | None) -> Feedback:
    try:
        found = checkdata.practice(exercise_id) if isinstance(exercise_id, str) else None
    except KeyError:
        found = None
    if found is None:
        return _unknown(exercise_id)
    try:
        ns, history = _kernel(namespace, history)
        answer, history = _own(exercise_id, found.spec.answer, answer, history)
        answers = read_all(found.spec, ns, history, value=answer)
        source = answer_cell_from_history(found.spec.answer, history)
        if source is None:
            answers = answers[:1]  # no answer cell to re-run (not in a kernel): the shown values
        fb = _where(judge(found, answers), found, answers)
        if source is not None:
            _LAST[exercise_id] = Checked(source, answer, len(history), _reads(source, ns), fb)
        return fb
    except Exception as e:  # never let a strange answer stop "Run all"
        return _crash(exercise_id, e)


_CHECK_CALL = re.compile(r"""(?<![\w.])check\(\s*["'](\w+)["']""")


def _foreign(exercise_id: str, name: str, history: list[str]) -> set[str]:
    """The cells binding ``name`` that are another exercise's answer: known by their cell ids
    (``answer_cells``, in JupyterLab), or, where no id arrives, followed by that exercise's
    ``check("...")`` before the name is bound again."""
    out = {r.source for r in answer_cells.others(exercise_id)}
    owner = None
    for cell in reversed(history[-HISTORY_CELLS:]):
        called = _CHECK_CALL.search(cell)
        if called:
            owner = called.group(1)
        elif assigns(cell, name):
            if owner not in (None, exercise_id):
                out.add(cell)
            owner = None
    return out


def _own(exercise_id: str, name: str, answer: Any, history: list[str]) -> tuple[Any, list[str]]:
    """The exercise's own answer and history: another exercise's answer cell is not this one's,
    even where it binds the same name (chapter 10 asks for ``grads`` twice). Where one bound the
    name last, the value this exercise's own cell bound stands instead (kept by ``answer_cells``,
    or by this exercise's last self-check)."""
    foreign = _foreign(exercise_id, name, history)
    if not foreign:
        return answer, history
    own_history = [cell for cell in history if cell not in foreign]
    own, last = answer_cells.ran(exercise_id), _LAST.get(exercise_id)
    if answer_cell_from_history(name, history) in foreign or \
            any(answer is r.value for r in answer_cells.others(exercise_id)):
        if own is not None:
            answer = own.value
        elif last is not None and last.source == answer_cell_from_history(name, own_history):
            answer = last.answer
    return answer, own_history


@dataclass(frozen=True)
class Checked:
    """The last self-check of an exercise in this kernel: what review() may show again."""

    source: str  # the answer cell it re-ran
    answer: Any  # the answer object it judged (held, so its identity stays its own)
    cells: int  # how many cells the history held then
    reads: dict[str, Any]  # what the names the answer cell reads were bound to then
    feedback: Feedback


_LAST: dict[str, Checked] = {}
_PLAIN = (int, float, complex, str, bytes, bool, type(None))


def _reads(source: str, ns: dict[str, Any]) -> dict[str, Any]:
    return {name: ns[name] for name in names_read(source) if name in ns}


def _unchanged(then: Any, now: Any) -> bool:
    """The same binding: the same object, or (for a number or a string, which re-running an
    assignment makes anew) an equal one of the same type."""
    return then is now or (type(then) is type(now) and isinstance(then, _PLAIN) and then == now)


def _still(exercise_id: str, answer: Any, history: list[str], ns: dict[str, Any]) -> Feedback | None:
    """The last check's feedback, where nothing it judged has changed since: the same answer
    cell and answer object, every name the answer cell reads still bound as it was, and no cell
    run since that binds one of them but the exercises' setups (a later setup that binds ``x0``
    anew changes the earlier answer only if its value differs; each setup runs again before its
    own answer cell, ``answer_cells``)."""
    last = _LAST.get(exercise_id)
    found = _check_of_practice(exercise_id)
    if last is None or found is None or last.answer is not answer or len(history) < last.cells:
        return None
    if answer_cell_from_history(found.spec.answer, history) != last.source:
        return None
    missing = object()
    if any(not _unchanged(then, ns.get(name, missing)) for name, then in last.reads.items()):
        return None
    since = [cell for cell in history[last.cells - 1:-1] if not cell.startswith(answer_cells.SETUP_HEADER)]
    if any(assigns(cell, name) for cell in since for name in names_read(last.source)):
        return None
    return last.feedback


def _check_of_practice(exercise_id: str) -> checkdata.Check | None:
    try:
        return checkdata.practice(exercise_id)
    except KeyError:
        return None


def _kernel(namespace: dict[str, Any] | None, history: list[str] | None) -> tuple[dict, list[str]]:
    shell = _shell()
    ns = namespace if namespace is not None else (shell.user_ns if shell is not None else {})
    if history is None:
        history = list(ns.get("In", [])) if shell is not None else []
    return ns, history


def _where(fb: Feedback, found: checkdata.Check, answers: list[dict] = ()) -> Feedback:
    """Name the practice values where the answer fails (they are public: only the grading
    variants are kept back): the lines of their setup that differ from the shown one, and
    there, what the answer gives and what is right."""
    failed = [i for i, v in enumerate(fb.variants) if i and v.status != "correct"]
    if fb.variants and fb.variants[0].status == "correct" and failed:
        shown = "; ".join(f"`{line}`" for i in failed for line in _changed(found.spec.setups[0],
                                                                           found.spec.setups[i]))
        if shown:
            fb.message += f" The self-check re-ran your answer cell with {shown}."
        first = _changed(found.spec.setups[0], found.spec.setups[failed[0]])
        if len(answers) > failed[0] and first:
            fb.message += describe_difference(found, failed[0], answers[failed[0]],
                                              at=f"At `{'; '.join(first)}`")
    return fb


def _changed(shown: str, other: str) -> list[str]:
    """The lines of ``other`` (a practice setup) that are not in the shown setup: its values."""
    before = set(shown.splitlines())
    return [line.strip() for line in other.splitlines() if line.strip() and line not in before][:4]


def _shell() -> Any:
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return get_ipython()


def grade_feedback(exercise_id: str, answer: Any = FROM_NAMESPACE, *,
                   namespace: dict[str, Any] | None = None,
                   history: list[str] | None = None) -> Feedback:
    """Judge at the shown values and at every other variant this installation has (the
    hidden ones in the instructor's package; none in the student runtime), re-running the
    answer cell found in the kernel's history."""
    found = _check_of(exercise_id)
    if found is None:
        return _unknown(exercise_id)
    try:
        ns, history = _kernel(namespace, history)
        return judge(found, read_all(found.spec, ns, history, value=answer))
    except Exception as e:
        return _crash(exercise_id, e)


def grade(exercise_id: str, answer: Any = Ellipsis) -> float:
    """nbgrader grade cell: print the feedback, return points earned as a builtin float."""
    fb = grade_feedback(exercise_id, answer)
    print(fb)  # stdout only: nbgrader counts anything on stderr as a failed test
    found = _check_of(exercise_id)
    points = found.points if found is not None else 0.0
    return float(round(points * fb.score, 6))


def _install_by_hand_hook() -> None:
    # in a kernel (JupyterLab sends each cell's id), an answer cell runs after its own setup and
    # its answer is kept as its exercise's; a by-hand answer cell runs with autograd off
    shell = _shell()
    if shell is not None and hasattr(shell, "events"):
        with contextlib.suppress(Exception):  # never let the self-check's import stop a lesson
            answer_cells.install(shell, checkdata.shown)
            byhand.install(shell, checkdata.is_by_hand)


_install_by_hand_hook()


MAX_NOTEBOOK_BYTES = 20 * 2**20  # a notebook this big is not one of the course's


def due_passed(session: Any, now: datetime | None = None) -> datetime | None:
    """The due date the notebook's own metadata holds (``metadata.gradtutor.due``, written when
    the instructor released it), when it has passed; else None. ``session``: the notebook's path,
    which Jupyter gives the kernel as ``__session__``; anything else (no notebook, no date, a
    grading run) is None."""
    if not isinstance(session, str) or not session.endswith(".ipynb"):
        return None
    try:
        with open(session, "rb") as f:
            raw = f.read(MAX_NOTEBOOK_BYTES + 1)
        due = datetime.fromisoformat(json.loads(raw)["metadata"]["gradtutor"]["due"])
    except Exception:  # not readable, not a notebook, no due date: no warning, never a crash
        return None
    if len(raw) > MAX_NOTEBOOK_BYTES or due.tzinfo is None:
        return None
    return due if (now or datetime.now(UTC)) > due else None


class Review(list):
    """A chapter's self-checks as one table (a list of Feedback that renders as HTML), in the
    notebook's order, with a warning when the notebook's due date has passed; ``numbers`` holds
    each one's exercise number ("4.2")."""

    late: datetime | None = None

    def __init__(self, feedback: list[Feedback] = (), numbers: list[str] = ()) -> None:
        super().__init__(feedback)
        self.numbers = list(numbers) or [""] * len(self)

    def _warning(self) -> str:
        if self.late is None:
            return ""
        return (f"The due date ({self.late.astimezone(UTC):%Y-%m-%d %H:%M} UTC) has passed: work "
                "submitted now counts as late (the late policy is under the notebook's title).")

    def __str__(self) -> str:
        done = sum(fb.correct for fb in self)
        lines = [f"{done} of {len(self)} exercises right"]
        lines += [f"  {VERDICTS[fb.verdict].label:>16}  {number:>5}  {fb.title} [{fb.exercise}]"
                  for number, fb in zip(self.numbers, self, strict=True)]
        lines += [self._warning()] * bool(self.late)
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        done = sum(fb.correct for fb in self)
        rows = []
        for number, fb in zip(self.numbers, self, strict=True):
            label, ink, paper, mark = VERDICTS[fb.verdict]
            why = as_html(misconception_line(fb.misconception, fb.misconception_name or "")) \
                if fb.misconception_name else ""
            # the row's text colour is set with its pale background: readable in a dark theme
            rows.append(f'<tr style="background:{paper};color:#1f2328">'
                        f'<td style="color:{ink}">{mark} {label}</td>'
                        f"<td>{html.escape(number)}</td><td>{html.escape(fb.title)}</td><td>{why}</td></tr>")
        # with its own pale paper: 6.6:1 in any theme (#9a6700 alone was 3.9:1 on the dark one)
        late = (f'<p class="gradtutor-late" style="color:#7d4e00;background:#fff8c5;'
                f'padding:2px 6px"><b>{html.escape(self._warning())}</b></p>' if self.late else "")
        return (f'<div class="gradtutor-review">{late}<b>{done} of {len(self)} exercises right.</b>'
                '<table><tr><th>verdict</th><th>exercise</th><th>title</th><th>likely misconception</th></tr>'
                + "".join(rows) + "</table></div>")


def review(chapter: int, answers: dict[str, Any]) -> Review:
    """Check every exercise of a chapter at once, in the notebook's order: ``review(1, globals())``.

    ``answers`` maps answer names to values (a notebook's ``globals()`` does); exercises whose
    answer name is missing count as not answered. Each is checked as ``check`` does (the
    shown and the practice values), never at every grading variant. In Jupyter, ``globals()``
    holds the notebook's path (``__session__``): past the due date its metadata holds, the
    table says so."""
    ids = checkdata.chapter_ids(chapter) if isinstance(chapter, int) else []
    _, history = _kernel(None, None)
    out = Review()
    out.late = due_passed(answers.get("__session__")) if isinstance(answers, dict) else None
    ns = answers if isinstance(answers, dict) else {}
    for number, exercise_id in enumerate(ids, start=1):
        found = _check_of_practice(exercise_id)
        if found is None:
            continue
        name = found.spec.answer
        answer, own_history = _own(exercise_id, name, ns.get(name, Ellipsis), history)
        # the check under the answer cell, where nothing it judged changed since; else check again
        out.append(_still(exercise_id, answer, own_history, ns) or check(exercise_id, answer))
        out.numbers.append(f"{chapter}.{number}")
    return out
