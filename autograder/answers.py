"""Student side: read a student's answer as plain data, at the shown and at other values.

It runs in the notebook kernel (``grade()``, ``check()``) and in the grading
sandbox, with the same loop (``read_all``). It executes an exercise's setup code and the
student's answer cell in a copy of the namespace, then turns the answer into plain data.
Nothing here decides whether an answer is right, and nothing here knows a reference.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import io
import re
import warnings
from collections.abc import Callable
from typing import Any

from autograder.byhand import AUTOGRAD, TORCH, ByHand, autograd_off, guarded, tripped, trips
from autograder.contract import AnswerSpec
from autograder.plain import Plain, to_plain

FROM_NAMESPACE = object()  # read the answer from the namespace, not from an explicit value


# why a guarded answer is missing, by what its exercise refuses (contract.MISSING_CODES)
REFUSED = {"": "by_hand", AUTOGRAD: "by_hand_code", TORCH: "no_torch"}


def _refused(spec: AnswerSpec | None) -> Plain:
    return {"t": "missing", "why": REFUSED.get(spec.refuse, "by_hand") if spec else "by_hand"}


def _error(e: BaseException, spec: AnswerSpec | None = None) -> Plain:
    if isinstance(e, ByHand):
        return _refused(spec)
    why = getattr(e, "why", None)  # the sandbox's per-cell timers say which budget ran out
    if isinstance(why, str):
        return {"t": "limit", "why": why}
    if isinstance(e, MemoryError):
        return {"t": "limit", "why": "memory"}
    if isinstance(e, RecursionError):
        return {"t": "limit", "why": "recursion"}
    return {"t": "error", "v": type(e).__name__, "text": str(e)[:300]}


def read_answer(spec: AnswerSpec, ns: dict[str, Any], value: Any = FROM_NAMESPACE) -> Plain:
    """The answer as plain data: the variable's value, or the function's result on the inputs
    (``spec.call`` evaluated in ``ns``, which holds the setup's inputs), with the codes of the
    prompt's requirements it does not meet (``unmet``)."""
    if value is FROM_NAMESPACE:
        if spec.answer not in ns:
            return {"t": "missing", "why": "no_variable"}
        value = ns[spec.answer]
    if value is Ellipsis:
        return {"t": "ellipsis"}
    local = ns
    if spec.is_function:
        if not callable(value):
            return {"t": "missing", "why": "not_callable"}
        local = dict(ns)
        before = trips()
        try:
            # the student's function or class runs under its exercise's refusal, wherever the
            # call reaches it (the harness's own code around it runs as usual)
            with quiet(), guarded(value, spec.refuse) as bound, autograd_off(spec.by_hand):
                local[spec.answer] = bound
                value = eval(spec.call, local)
        except Exception as e:  # the student's function failed: a reason, not a crash
            return _error(e, spec)
        if (spec.by_hand or spec.refuse) and trips() != before:  # refused, and the error swallowed
            return _refused(spec)
        if value is Ellipsis:
            return {"t": "ellipsis"}
    plain = to_plain(value)
    unmet = unmet_requirements(spec, local, value)
    if unmet:
        plain["unmet"] = unmet
    return plain


def unmet_requirements(spec: AnswerSpec, ns: dict[str, Any], value: Any) -> list[str]:
    """The codes of the requirements whose expression is not True where the answer ran (the
    answer itself is bound to ``answer`` for them); an expression that raises is not met."""
    unmet = []
    for code, expression in spec.requires:
        local = dict(ns)
        local.update(answer=value, float64=is_float64)
        try:
            with quiet():
                met = eval(expression, local)
        except Exception:
            met = False
        if met is not True:
            unmet.append(code)
    return unmet


def read_shown(spec: AnswerSpec, ns: dict[str, Any], value: Any = FROM_NAMESPACE) -> Plain:
    """The answer at the shown values. A function answer is called on the shown setup's inputs,
    made afresh, so whatever the notebook did to its own copies does not matter."""
    if value is FROM_NAMESPACE:
        if spec.answer not in ns:
            return {"t": "missing", "why": "no_variable"}
        value = ns[spec.answer]
    if not spec.is_function or value is Ellipsis:
        return read_answer(spec, ns, value)
    local: dict[str, Any] = {}
    try:
        with quiet():
            exec("import torch", local)
            exec(spec.setups[0], local)
    except Exception as e:
        return _error(e, spec)
    return read_answer(spec, local, value)


def at_params(spec: AnswerSpec, ns: dict[str, Any], answer_source: str, setup: str) -> Plain:
    """Re-run a variant's setup + the answer cell in a copy of ``ns``, then read the answer. A
    by-hand exercise's answer cell runs with autograd off (its setup does not)."""
    local = dict(ns)
    try:
        with quiet():
            exec(setup, local)
            with autograd_off(spec.by_hand):
                exec(compile(answer_source, "<answer>", "exec"), local)
    except Exception as e:
        return _error(e, spec)
    if spec.by_hand and tripped():
        return {"t": "missing", "why": "by_hand"}
    return read_answer(spec, local)


def read_all(spec: AnswerSpec, ns: dict[str, Any], history: list[str], *,
             value: Any = FROM_NAMESPACE,
             around: Callable[[], contextlib.AbstractContextManager] = contextlib.nullcontext,
             cell_errors: dict[str, str] | None = None) -> list[Plain]:
    """One plain answer per setup in ``spec``: the shown answer, then the answer cell (found in
    ``history``) re-run at each other variant. ``around`` wraps each read (the sandbox's
    per-cell timers); ``cell_errors`` maps a cell's source to the exception it raised."""
    answers: list[Plain] = []
    source = answer_cell_from_history(spec.answer, history) if len(spec.setups) > 1 or \
        cell_errors or spec.by_hand else None
    try:
        with around():
            if spec.by_hand and source is not None:  # the shown values too, with autograd off
                answers.append(at_params(spec, ns, source, spec.setups[0]))
            else:
                answers.append(read_shown(spec, ns, value))
        if answers[0].get("why") == "no_variable" and cell_errors and source in cell_errors:
            answers[0] = {"t": "missing", "why": "answer_cell_raised", "error": cell_errors[source]}
        for setup in spec.setups[1:]:
            if source is None:
                answers.append({"t": "missing", "why": "no_answer_cell"})
                continue
            with around():
                answers.append(at_params(spec, ns, source, setup))
    except BaseException as e:
        answers.append(_error(e, spec))
    answers += [{"t": "missing", "why": "not_reached"}] * (len(spec.setups) - len(answers))
    return answers


def is_float64(value: Any, _depth: int = 0) -> bool:
    """Are all the numbers in ``value`` float64 (Python floats and ints are; float32 tensors and
    arrays are not)? For requirements; reads dtypes only, never calls the student's methods."""
    import numpy as np
    import torch

    if _depth > 6:
        return False
    if isinstance(value, torch.Tensor):
        with torch._C.DisableTorchFunction():
            return not value.is_floating_point() or value.dtype == torch.float64
    if isinstance(value, np.ndarray | np.generic):
        return np.asarray(value).dtype.kind != "f" or np.asarray(value).dtype == np.float64
    if type(value) in (list, tuple):
        return all(is_float64(v, _depth + 1) for v in value)
    return True


@contextlib.contextmanager
def quiet():
    with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()), \
            contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        yield


@functools.lru_cache(maxsize=4096)
def assigns(source: str, name: str) -> bool:
    """Does this cell bind ``name`` at top level (assignment, def, import, for, with)?
    Cached: a self-check walks back through the kernel's history at every call."""
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
HISTORY_CELLS = 1000  # how far back the answer cell is looked for


def answer_cell_from_history(name: str, history: list[str]) -> str | None:
    """The last executed cell (before the current one) that binds the answer name."""
    for source in reversed(history[-HISTORY_CELLS:-1]):
        # the self-check cell calls check(...); an answer calling gradcheck(...) is still an answer
        if assigns(source, name) and not _SELF_CHECK.search(source):
            return source
    return None
