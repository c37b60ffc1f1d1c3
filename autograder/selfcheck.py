"""In the notebook: ``check`` gives instant feedback, ``grade`` scores a cell for nbgrader.

Both pass the answer explicitly and never raise: whatever the student hands over, the result
is a ``Feedback`` (or a float for nbgrader) with a reason. They run in the student's kernel, so
a determined student can fool them; that only fools the student. Real grading goes through
``gradtutor grade``, which judges plain data in a separate, trusted process.
"""

from __future__ import annotations

import difflib
from typing import Any

from . import registry
from .collect import answer_cell_from_history, at_params, quiet, read_answer
from .feedback import Feedback
from .judge import judge


def _unknown(exercise_id: Any) -> Feedback:
    known = registry.ids()
    guess = difflib.get_close_matches(str(exercise_id), known, n=1)
    tip = f" Did you mean {guess[0]!r}?" if guess else ""
    return Feedback(exercise=str(exercise_id)[:60], title="unknown exercise", verdict="invalid",
                    score=0.0, message=f"There is no exercise called {str(exercise_id)[:60]!r}.{tip}")


def _crash(exercise_id: str, e: BaseException) -> Feedback:
    return Feedback(exercise=exercise_id, title=exercise_id, verdict="error", score=0.0,
                    message=f"The checker could not read this answer ({type(e).__name__}). "
                            "Give a plain number, list, tensor, True/False or None.")


def _public_answer(exercise_id: str, answer: Any) -> list[dict]:
    ex = registry.get(exercise_id)
    ns: dict[str, Any] = {}
    if ex.is_function:
        exec("import torch", ns)  # noqa: S102
        with quiet():
            exec(ex.setup_code(ex.params), ns)  # noqa: S102 - our own setup code
    return [read_answer(ex, ns, answer, from_ns=False)]


def check(exercise_id: str, answer: Any = Ellipsis) -> Feedback:
    """Judge ``answer`` at the values shown in the notebook; returns a displayable Feedback."""
    if not isinstance(exercise_id, str) or exercise_id not in registry.ids():
        return _unknown(exercise_id)
    try:
        return judge(exercise_id, _public_answer(exercise_id, answer))
    except Exception as e:  # never let a strange answer stop "Run all"
        return _crash(exercise_id, e)


def _history() -> list[str]:
    try:
        from IPython import get_ipython
    except ImportError:
        return []
    ip = get_ipython()
    return list(ip.user_ns.get("In", [])) if ip is not None else []


def grade_feedback(exercise_id: str, answer: Any, *, variants: str = "all",
                   namespace: dict[str, Any] | None = None,
                   history: list[str] | None = None) -> Feedback:
    """Judge at the shown values and, with ``variants="all"``, at the hidden ones too."""
    if not isinstance(exercise_id, str) or exercise_id not in registry.ids():
        return _unknown(exercise_id)
    try:
        answers = _public_answer(exercise_id, answer)
        ex = registry.get(exercise_id)
        if variants == "all" and ex.hidden:
            ns = namespace if namespace is not None else _user_namespace()
            source = answer_cell_from_history(ex, history if history is not None else _history())
            for params in ex.hidden:
                if source is None:
                    answers.append({"t": "missing", "reason": "the answer cell was not found"})
                else:
                    answers.append(at_params(ex, ns, source, params))
        return judge(exercise_id, answers)
    except Exception as e:
        return _crash(exercise_id, e)


def _user_namespace() -> dict[str, Any]:
    from IPython import get_ipython

    ip = get_ipython()
    return ip.user_ns if ip is not None else {}


def grade(exercise_id: str, answer: Any = Ellipsis, *, variants: str = "all") -> float:
    """nbgrader grade cell: print the feedback, return points earned as a builtin float."""
    fb = grade_feedback(exercise_id, answer, variants=variants)
    print(fb)  # stdout only: nbgrader counts anything on stderr as a failed test
    points = registry.get(exercise_id).points if fb.exercise in registry.ids() else 0.0
    return float(round(points * fb.score, 6))


class Review(list):
    """A chapter's self-checks as one table (a list of Feedback that renders as HTML)."""

    def __str__(self) -> str:
        done = sum(fb.correct for fb in self)
        lines = [f"{done} of {len(self)} exercises right"]
        lines += [f"  {fb.verdict:>12}  {fb.exercise}: {fb.title}" for fb in self]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        import html

        from .feedback import VERDICTS

        done = sum(fb.correct for fb in self)
        rows = []
        for fb in self:
            label, ink, paper, mark = VERDICTS[fb.verdict]
            why = html.escape(fb.misconception_name or "")
            rows.append(f'<tr style="background:{paper}"><td style="color:{ink}">{mark} {label}</td>'
                        f"<td>{html.escape(fb.title)}</td><td>{why}</td></tr>")
        return (f'<div class="gradtutor-review"><b>{done} of {len(self)} exercises right.</b>'
                '<table><tr><th>verdict</th><th>exercise</th><th>likely misconception</th></tr>'
                + "".join(rows) + "</table></div>")


def review(chapter: int, answers: dict[str, Any]) -> Review:
    """Check every exercise of a chapter at once: ``review(1, globals())``.

    ``answers`` maps answer names to values (a notebook's ``globals()`` does); exercises whose
    answer name is missing count as not answered."""
    out = Review()
    for ex in registry.all_exercises():
        if ex.chapter == chapter:
            out.append(check(ex.id, answers.get(ex.answer, Ellipsis)))
    return out
