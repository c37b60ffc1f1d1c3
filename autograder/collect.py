"""Read a student's answer as plain data, at the shown values or at other parameter values.

Runs on the student's side (the notebook kernel, or the isolated grading worker): it executes
the exercise's setup code and the student's answer cell in a copy of the namespace, then turns
the answer into plain data. Nothing here decides whether an answer is right.
"""

from __future__ import annotations

import ast
import contextlib
import io
import re
import warnings
from typing import Any

from .exercise import Exercise, Params
from .plain import Plain, to_plain


def _error(e: BaseException) -> Plain:
    return {"t": "error", "v": type(e).__name__, "text": str(e)[:300]}


def read_answer(ex: Exercise, ns: dict[str, Any], value: Any = None, *, from_ns: bool = True) -> Plain:
    """The answer as plain data: the variable's value, or the function's result on the inputs."""
    if from_ns:
        if ex.answer not in ns:
            return {"t": "missing", "reason": f"There is no variable {ex.answer!r}: was the answer "
                                               "cell deleted, renamed or not run?"}
        value = ns[ex.answer]
    if value is Ellipsis:
        return {"t": "ellipsis"}
    if ex.is_function:
        if not callable(value):
            return {"t": "missing", "reason": f"{ex.answer!r} should be a function (def {ex.answer}(...))."}
        local = dict(ns)
        local[ex.answer] = value
        try:
            with quiet():
                value = eval(ex.call, local)  # noqa: S307 - this is the student's side
        except Exception as e:  # the student's function failed: a reason, not a crash
            return _error(e)
        if value is Ellipsis:
            return {"t": "ellipsis"}
    return to_plain(value)


def at_params(ex: Exercise, ns: dict[str, Any], answer_source: str, params: Params) -> Plain:
    """Re-run setup + the answer cell with other parameter values in a copy of ``ns``."""
    local = dict(ns)
    try:
        with quiet():
            exec(ex.setup_code(params), local)  # noqa: S102
            exec(compile(answer_source, f"<answer {ex.id}>", "exec"), local)  # noqa: S102
    except Exception as e:
        return _error(e)
    return read_answer(ex, local)


@contextlib.contextmanager
def quiet():
    with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()), \
            contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        yield


def assigns(source: str, name: str) -> bool:
    """Does this cell bind ``name`` at top level (assignment, def, import, for, with)?"""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name == name:
            return True
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and sub.id == name and isinstance(sub.ctx, ast.Store):
                return True
    return False


_SELF_CHECK = re.compile(r"(?<!\w)check\(")


def answer_cell_from_history(ex: Exercise, history: list[str]) -> str | None:
    """The last executed cell (before the current one) that binds the answer name."""
    for source in reversed(history[:-1]):
        # the self-check cell calls check(...); an answer calling gradcheck(...) is still an answer
        if assigns(source, ex.answer) and not _SELF_CHECK.search(source):
            return source
    return None
