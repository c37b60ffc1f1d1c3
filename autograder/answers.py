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
import gc
import io
import re
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from autograder.byhand import AUTOGRAD, TORCH, ByHand, autograd_off, guarded, tripped, trips
from autograder.contract import EVIDENCE, AnswerSpec
from autograder.plain import Plain, to_plain

FROM_NAMESPACE = object()  # read the answer from the namespace, not from an explicit value

# The collector's thresholds while answers are read. An engine written in plain Python (chapter
# 10's Value, trained for 15 steps at three variants) makes ~460,000 objects in reference cycles
# (each node and its backward closure). With the default thresholds, and the warm objects frozen
# in the grader's zygote, the collector walks them in full collections again and again: 5 of them
# took 570 ms of train_engine's 770 ms of CPU. Young collections every 100,000 objects cut that
# to five passes, which still took 400 of a read's 570 ms; one pass every 1,000,000 objects frees
# the same garbage at about a third of that cost (train_engine's read: 315-335 -> 162-188 ms of
# CPU in bench/floor.py, alternated). The price is the garbage held between passes: at most a
# million objects (train_engine's read peaks 33 MiB higher, against 6 MiB at 100,000), far under
# the sandbox's memory limit, and a read cannot make many more within its CPU limit.
# Few objects can hold much memory, though: an engine on tensors (chapter 11's, trained on the
# digits) makes thousands of objects, not a million, each with an array in it. Held to the end of
# the read, three variants' garbage made a forked child fault in 100,000 fresh pages and peak
# 230 MB higher than with the default thresholds (41,000 faults). So the young objects are also
# collected after each variant, inside the guard (a finalizer is student code): a chapter 11
# child's answer reads then fault 27,100 pages rather than 71,100 and use 40-60 ms less CPU
# (of ~700); a chapter 10 child's 3,400 rather than 7,800, its CPU unchanged (same passes, split
# by variant). The young generation only: a variant's garbage stays young unless it made a
# million objects, and the older generations hold the notebook's own objects, costly to walk.
READ_GC_THRESHOLD = (1_000_000, 1000, 1000)
# bound at import: student code may replace the gc module's functions (the guard restores this
# module's names, not gc's)
_get_threshold, _set_threshold, _collect = gc.get_threshold, gc.set_threshold, gc.collect


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
    out = {"t": "error", "v": type(e).__name__, "text": str(e)[:300]}
    line = _student_line(e)
    if line is not None:
        out["line"] = line  # in the student's kernel only: the sandbox's contract drops it
    return out


def _student_line(e: BaseException) -> str | None:
    """The student's line the error came from: the last frame of the traceback in an answer
    cell (a notebook cell, or the cell re-run at other values), as "line N: code"."""
    import linecache
    import traceback

    frames = [f for f in traceback.extract_tb(e.__traceback__)
              if f.filename == "<answer>" or "ipykernel_" in f.filename or f.filename.startswith("<ipython")]
    if not frames:
        return None
    last = frames[-1]
    code = (last.line or linecache.getline(last.filename, last.lineno or 0)).strip()
    return f"line {last.lineno}" + (f": {code[:120]}" if code else "")


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
                exec(compile_answer(answer_source), local)
    except Exception as e:
        return _error(e, spec)
    if spec.by_hand and tripped():
        return {"t": "missing", "why": "by_hand"}
    return read_answer(spec, local)


def compile_answer(source: str) -> Any:
    """The answer cell, compiled as "<answer>" and its lines kept where tracebacks look, so an
    error names the student's line (``_student_line``)."""
    import linecache

    linecache.cache["<answer>"] = (len(source), None, source.splitlines(True), "<answer>")
    return _compiled_answer(source)


@functools.lru_cache(maxsize=8)
def _compiled_answer(source: str) -> Any:
    """One compilation of an answer cell for all its variants: a read re-runs the same cell at
    each grading variant (an engine's cell: 1-5 ms to compile each time). A code object cannot be
    changed from Python, and each ``exec`` of it still makes new functions and classes; a cell
    that does not compile raises each time (errors are not cached)."""
    return compile(source, "<answer>", "exec")


def read_all(spec: AnswerSpec, ns: dict[str, Any], history: list[str], *,
             value: Any = FROM_NAMESPACE,
             around: Callable[[], contextlib.AbstractContextManager] = contextlib.nullcontext,
             cell_errors: dict[str, str] | None = None) -> list[Plain]:
    """One plain answer per setup in ``spec``: the shown answer, then the answer cell (found in
    ``history``) re-run at each other variant. ``around`` wraps each read (the sandbox's
    per-cell timers); ``cell_errors`` maps a cell's source to the exception it raised."""
    with few_collections():
        return _read_all(spec, ns, history, value, around, cell_errors)


@contextlib.contextmanager
def few_collections() -> Iterator[None]:
    """The collector at ``READ_GC_THRESHOLD`` for the block, then as it was."""
    saved = _get_threshold()
    _set_threshold(*READ_GC_THRESHOLD)
    try:
        yield
    finally:
        _set_threshold(*saved)


def _read_all(spec: AnswerSpec, ns: dict[str, Any], history: list[str], value: Any,
              around: Callable[[], contextlib.AbstractContextManager],
              cell_errors: dict[str, str] | None) -> list[Plain]:
    answers: list[Plain] = []
    source = answer_cell_from_history(spec.answer, history) if len(spec.setups) > 1 or \
        cell_errors or spec.by_hand else None
    try:
        with around():
            if spec.by_hand and source is not None:  # the shown values too, with autograd off
                answers.append(at_params(spec, ns, source, spec.setups[0]))
            else:
                answers.append(read_shown(spec, ns, value))
            _collect(0)  # its garbage, before the next variant makes its own (READ_GC_THRESHOLD)
        if answers[0].get("why") == "no_variable" and cell_errors and source in cell_errors:
            answers[0] = {"t": "missing", "why": "answer_cell_raised", "error": cell_errors[source]}
        for setup in spec.setups[1:]:
            if source is None:
                answers.append({"t": "missing", "why": "no_answer_cell"})
                continue
            with around():
                answers.append(at_params(spec, ns, source, setup))
                _collect(0)
    except BaseException as e:
        answers.append(_error(e, spec))
    answers += [{"t": "missing", "why": "not_reached"}] * (len(spec.setups) - len(answers))
    if source is None:
        source = answer_cell_from_history(spec.answer, history)
    # evidence of a read answer only: a missing one or an error has nothing to diagnose
    if source is not None and answers and answers[0].get("t") not in ("missing", "error", "limit", "ellipsis"):
        answers[0] = {**answers[0], "evidence": evidence(source, spec.setups[0], ns)}
    return answers


def evidence(source: str, setup: str, ns: dict[str, Any]) -> list[str]:
    """What the answer cell shows (codes of ``contract.EVIDENCE``): a number of the shown setup
    typed into it ("literal"), float32 tensors among the values it binds or asked for in its code
    ("float32"), a seed passed to ``backward`` or ``grad_outputs`` to ``autograd.grad`` ("seed"),
    a call of either at all ("backward"), a call of ``where`` ("where")."""
    try:
        tree = syntax_tree(source)
    except SyntaxError:
        return []
    cell = _Walked(tree)  # one walk of the cell (an engine's cell is thousands of nodes)
    shown_numbers, shown_names = _setup_facts(setup)
    found = []
    if cell.numbers & shown_numbers or (cell.every and not cell.loads & shown_names):
        found.append("literal")  # a number of the setup, or numbers and no name of the setup
    if _float32(cell.float32_nodes, ns):
        found.append("float32")
    if any(_seeds(node) for node in cell.calls):
        found.append("seed")
    if any(_called(node) in ("backward", "grad") for node in cell.calls):
        found.append("backward")
    if any(_called(node) == "where" for node in cell.calls):
        found.append("where")
    return [e for e in EVIDENCE if e in found]


_FLOAT32_NAMES = ("float32", "float", "half", "float16", "bfloat16")


class _Walked:
    """What ``evidence`` reads of a syntax tree, gathered in one walk: the numbers written in it
    (``every``: all, signed; ``numbers``: except 0 and ±1, which every formula has), the names
    it reads and binds, its calls, and in walk order the nodes that may show float32 (an
    attribute like ``torch.float32`` or ``x.float()``, a name it binds)."""

    def __init__(self, tree: ast.AST) -> None:
        self.every: set[float] = set()
        self.numbers: set[float] = set()
        self.loads: set[str] = set()
        self.stores: set[str] = set()
        self.calls: list[ast.Call] = []
        self.float32_nodes: list[ast.AST] = []
        for node in ast.walk(tree):
            kind = type(node)
            if kind is ast.Constant:
                self._number(node.value)
            elif kind is ast.UnaryOp:
                if isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
                    value = node.operand.value
                    self._number(-value if isinstance(value, int | float) and not isinstance(value, bool)
                                 else None)
            elif kind is ast.Name:
                if isinstance(node.ctx, ast.Store):
                    self.stores.add(node.id)
                    self.float32_nodes.append(node)
                elif isinstance(node.ctx, ast.Load):
                    self.loads.add(node.id)
            elif kind is ast.Attribute:
                if node.attr in _FLOAT32_NAMES:
                    self.float32_nodes.append(node)
            elif kind is ast.Call:
                self.calls.append(node)

    def _number(self, value: Any) -> None:
        if isinstance(value, int | float) and not isinstance(value, bool):
            self.every.add(float(value))
            if abs(value) not in (0, 1):
                self.numbers.add(float(value))


@functools.lru_cache(maxsize=256)
def _setup_facts(setup: str) -> tuple[frozenset[float], frozenset[str]]:
    """A setup's numbers (not 0 or ±1) and the names it binds: the grader's own text, the same
    for every student, so walked once per process."""
    try:
        walked = _Walked(ast.parse(setup))
    except SyntaxError:
        return frozenset(), frozenset()
    return frozenset(walked.numbers), frozenset(walked.stores)


def _float32(nodes: list[ast.AST], ns: dict[str, Any]) -> bool:
    """float32 named in the code (``float32``, ``.float()``), or a float32 tensor bound by it
    (``nodes``: the attributes and bound names of the cell, in walk order)."""
    import torch

    for node in nodes:
        if isinstance(node, ast.Attribute):
            return True  # torch.float32, torch.float (the same dtype), x.float(), x.half()
        value = ns.get(node.id)
        if isinstance(value, torch.Tensor):
            with torch._C.DisableTorchFunction():
                if value.dtype in (torch.float32, torch.float16, torch.bfloat16):
                    return True
    return False


def _called(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _seeds(call: ast.Call) -> bool:
    name = _called(call)
    keywords = {k.arg for k in call.keywords}
    if name == "backward":
        return bool(call.args) or "gradient" in keywords
    if name == "grad":
        return len(call.args) >= 3 or "grad_outputs" in keywords
    return False


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


def assigns(source: str, name: str) -> bool:
    """Does this cell bind ``name`` at top level (assignment, def, import, for, with)?"""
    return name in bound_names(source)


@functools.lru_cache(maxsize=1024)
def bound_names(source: str) -> frozenset[str]:
    """The names this cell binds at top level. Cached, and per cell rather than per cell and
    name: a self-check walks back through the kernel's history at every call, and a chapter's
    ``review`` asks every cell about every answer's name (a grading child, whose cache starts
    empty, parsed each cell once per exercise)."""
    try:
        tree = syntax_tree(source)
    except SyntaxError:
        return frozenset()
    return frozenset(sub.id if isinstance(sub, ast.Name) else sub.name
                     for node in tree.body for sub in _top_scope(node)
                     if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store)
                     or isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef))


@functools.lru_cache(maxsize=256)
def syntax_tree(source: str) -> ast.Module:
    """A cell's syntax tree, parsed once per process: the grading child runs the cell from it
    (``sandbox.child``), and the readers here look at it (``bound_names``, ``names_read``,
    ``evidence``); an engine's cell takes 3-4 ms to parse. Read only, never changed (the child
    compiles copies of its statement lists). A cell that does not parse raises each time."""
    return ast.parse(source)


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp, ast.SetComp,
           ast.DictComp, ast.GeneratorExp)


def _top_scope(node: ast.AST) -> Iterator[ast.AST]:
    """``node`` and what it holds, without the insides of functions, classes, lambdas and
    comprehensions: their names are their own (``{row: ... for row in ...}`` binds no ``row``)."""
    yield node
    if isinstance(node, _SCOPES):
        return
    for child in ast.iter_child_nodes(node):
        yield from _top_scope(child)


@functools.lru_cache(maxsize=1024)
def names_read(source: str) -> frozenset[str]:
    """Every name the cell reads (in function bodies too): what its answer depends on."""
    try:
        tree = syntax_tree(source)
    except SyntaxError:
        return frozenset()
    return frozenset(n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load))


_SELF_CHECK = re.compile(r"(?<!\w)check\(")
HISTORY_CELLS = 1000  # how far back the answer cell is looked for


def answer_cell_from_history(name: str, history: list[str]) -> str | None:
    """The last executed cell (before the current one) that binds the answer name."""
    for source in reversed(history[-HISTORY_CELLS:-1]):
        # the self-check cell calls check(...); an answer calling gradcheck(...) is still an answer
        if assigns(source, name) and not _SELF_CHECK.search(source):
            return source
    return None
