"""Student side: the contract between the grading sandbox and the trusted judge.

Imports nothing heavy (no torch): the grading parent loads it before it forks its helpers.
Every byte the sandbox sends is hostile until this module has read it: each message is parsed
with a size bound, checked field by field, and rebuilt from the grader's own values (fixed
codes, bounded numbers, identifiers). Nothing a child writes reaches results, feedback or the
report as free text, except the student's own answer values kept in the results for
``gradtutor regrade`` (a string answer at most 200 characters, a dict key 80): read back
through ``clean_plain`` like a message, never shown in feedback, shown escaped in the
instructor's report. The sandbox's child and the grading parent (``gradtutor.grading``) use
these types; the results files are the trusted side's records (``gradtutor.records.results``).

Parent -> child, once, on the job pipe (``encode_job`` / ``decode_job``)::

    {"cells": [{"kind": "code" | "markdown" | "raw", "source": str, "exercise": str | null,
                "by_hand": bool}],
     "specs": {exercise_id: {"answer": str, "call": str | null, "setups": [str, ...],
                             "by_hand": bool, "refuse": "" | "autograd" | "torch",
                             "requires": [[code, expression], ...]}}}

Child -> parent, one JSON line each (``parse_message``)::

    {"type": "ready", "spent": {STEP: seconds}, "usage": {STEP: [cpu_s, minflt, majflt]}}
                                                           set up; student code runs next
    {"type": "cell", "cell": int, "why": LIMIT}            a cell stopped by a limit
    {"type": "cell", "cell": int, "why": "error", "error": NAME}   a cell raised (a builtin's name)
    {"type": "answers", "exercise": str, "cell": int, "answers": [plain, ...]}
    {"type": "done", "spent": {STEP: seconds}, "usage": {STEP: [cpu_s, minflt, majflt]}}

``spent`` (optional) is how long the child's own steps took (``SETUP_STEPS`` before student
code, ``RUN_STEPS`` after), ``usage`` (optional) the CPU seconds and minor and major page faults
of each (``getrusage``: a forked child copies each page it first writes, a minor fault): a
profile only (``gradtutor grade --profile``), never a grade.
"""

from __future__ import annotations

import builtins
import json
import math
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

MAX_LINE_BYTES = 2 * 2**20
MAX_ELEMENTS = 100_000
MAX_DEPTH = 6
LIMIT_CODES = ("cpu", "wall", "memory", "recursion")
MISSING_CODES = ("no_variable", "answer_cell_raised", "not_callable", "no_answer_cell", "not_reached",
                 "by_hand", "by_hand_code", "no_torch")
REFUSE_CODES = ("", "autograd", "torch")  # what the student's function or class runs without
MAX_REQUIRES = 8
# what the answer cell shows, for the judge to give a generic diagnosis only on its evidence
# (``answers.evidence``): a number of the setup typed in, float32 tensors, a seed passed to backward,
# a call of backward or autograd.grad at all, a call of torch.where
EVIDENCE = ("literal", "float32", "seed", "backward", "where")
ERROR_NAMES = frozenset(n for n, v in vars(builtins).items()
                        if isinstance(v, type) and issubclass(v, BaseException))
DTYPES = frozenset({"int", "float", "bool", "float16", "bfloat16", "float32", "float64", "int8", "int16",
                    "int32", "int64", "uint8", "uint16", "uint32", "uint64", "complex64", "complex128"})
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,79}")
_UNSUPPORTED = {"t": "unsupported"}


# --- the job ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class AnswerSpec:
    """How to read an exercise's answer: its name, the call for function answers, the setup
    code of each variant to run (the shown values first), whether autograd is off while the
    answer runs (a by-hand exercise), what the student's function or class runs without
    (``refuse``: "autograd", "torch" or nothing), and what the prompt requires of it: (code,
    expression) pairs, each expression true when the requirement is met, evaluated where the
    answer ran."""

    answer: str
    call: str | None
    setups: tuple[str, ...]
    by_hand: bool = False
    requires: tuple[tuple[str, str], ...] = ()
    refuse: str = ""

    @property
    def is_function(self) -> bool:
        return self.call is not None



@dataclass(frozen=True)
class JobCell:
    kind: str
    source: str
    exercise: str | None  # set on grade cells: read the answers here instead of running it
    by_hand: bool = False  # a by-hand exercise's answer cell: it runs with autograd off, as in the kernel


@dataclass(frozen=True)
class Job:
    cells: tuple[JobCell, ...]
    specs: dict[str, AnswerSpec]


def encode_job(job: Job) -> bytes:
    return json.dumps({
        "cells": [{"kind": c.kind, "source": c.source, "exercise": c.exercise, "by_hand": c.by_hand}
                  for c in job.cells],
        "specs": {eid: spec_to_json(s) for eid, s in job.specs.items()},
    }).encode()


def spec_to_json(s: AnswerSpec) -> dict:
    return {"answer": s.answer, "call": s.call, "setups": list(s.setups), "by_hand": s.by_hand,
            "refuse": s.refuse, "requires": [list(r) for r in s.requires]}


def spec_from_json(s: dict) -> AnswerSpec:
    return AnswerSpec(str(s["answer"]), None if s["call"] is None else str(s["call"]),
                      tuple(str(x) for x in s["setups"]), by_hand=s.get("by_hand") is True,
                      requires=tuple((str(code), str(expr)) for code, expr in s.get("requires", ())),
                      refuse=_refuse(s.get("refuse", "")))


def _refuse(value: Any) -> str:
    if value not in REFUSE_CODES:
        raise ValueError(f"unknown refusal {value!r}")
    return str(value)


def decode_job(data: bytes) -> Job:
    raw = json.loads(data)
    specs = {str(eid): spec_from_json(s) for eid, s in raw["specs"].items()}
    cells = tuple(JobCell(str(c["kind"]), str(c["source"]),
                          c["exercise"] if c["exercise"] in specs else None, c.get("by_hand") is True)
                  for c in raw["cells"])
    return Job(cells, specs)


# --- messages from the child ------------------------------------------------------------------

SETUP_STEPS = ("child: after fork", "child: isolate", "child: namespaces", "child: mounts",
               "child: limits and uid", "child: seccomp", "child: wait for job", "child: read job")
RUN_STEPS = ("child: cells", "child: answer re-runs", "child: guard restore")
MAX_SPENT_SECONDS = 86_400.0

Spent = tuple[tuple[str, float], ...]  # (step, seconds), steps of SETUP_STEPS or RUN_STEPS
Usage = tuple[tuple[str, float, int, int], ...]  # (step, CPU seconds, minor faults, major faults)
MAX_FAULTS = 2**40


@dataclass(frozen=True)
class Ready:
    spent: Spent = ()
    usage: Usage = ()


@dataclass(frozen=True)
class CellStopped:
    cell: int
    why: str  # one of LIMIT_CODES


@dataclass(frozen=True)
class CellFailed:
    cell: int
    error: str  # a builtin exception's name, or "Exception"


@dataclass(frozen=True)
class Answers:
    exercise: str
    cell: int
    answers: tuple[dict, ...]


@dataclass(frozen=True)
class Done:
    spent: Spent = ()
    usage: Usage = ()


Message = Ready | CellStopped | CellFailed | Answers | Done


MALFORMED = "the grading child sent a malformed message"
MAX_NUMBER = sys.float_info.max  # an integer beyond the largest float is not an answer's number


def parse_message(line: bytes, expected: dict[str, int]) -> Message | None:
    """One line from a child, or None when it is not a well-formed message of the contract.

    ``expected`` maps each exercise of the job to how many answers it must carry. Total: for any
    bytes it returns a message or None and raises nothing (tests/test_contract_fuzz.py); every
    field is checked by type (exact built-in types, so nothing unhashable reaches a set) and
    bound (numbers finite, strings, lists, dicts and nesting bounded) before it is used.
    """
    if type(line) not in (bytes, bytearray) or len(line) > MAX_LINE_BYTES:
        return None
    try:
        raw = json.loads(line.decode("utf-8"))
        return _message(raw, expected)
    except (UnicodeDecodeError, ValueError, RecursionError, TypeError, OverflowError, MemoryError):
        return None


def message_from_json(raw: Any, expected: dict[str, int]) -> Message | None:
    """``parse_message`` for a line already parsed as JSON (the grader's own records that carry
    a child's messages on, e.g. to the recorder's process): the same checks, the same totality."""
    try:
        return _message(raw, expected)
    except (ValueError, RecursionError, TypeError, OverflowError, MemoryError):
        return None


def _message(raw: Any, expected: dict[str, int]) -> Message | None:
    if type(raw) is not dict or len(raw) > 16:
        return None
    kind = raw.get("type")
    if kind == "ready":
        return Ready(_spent(raw.get("spent"), SETUP_STEPS), _usage(raw.get("usage"), SETUP_STEPS))
    if kind == "done":
        return Done(_spent(raw.get("spent"), RUN_STEPS), _usage(raw.get("usage"), RUN_STEPS))
    cell = raw.get("cell")
    if type(cell) is not int or not 0 <= cell < 1_000_000:
        return None
    if kind == "cell":
        why = raw.get("why")
        if why == "error":
            return CellFailed(cell, _error_name(raw.get("error")))
        return CellStopped(cell, why) if _one_of(why, LIMIT_CODES) else None
    if kind == "answers":
        exercise, answers = raw.get("exercise"), raw.get("answers")
        if type(exercise) is not str or exercise not in expected or type(answers) is not list \
                or len(answers) != expected[exercise]:
            return None
        return Answers(exercise, cell, tuple(clean_plain(a) for a in answers))
    return None


def _spent(value: Any, steps: tuple[str, ...]) -> Spent:
    """The known steps' times, each a finite number of seconds within bounds; anything else is
    left out (a profile, never a reason to drop the message)."""
    if type(value) is not dict or len(value) > len(steps):
        return ()
    return tuple((name, float(value[name])) for name in steps
                 if type(value.get(name)) in (int, float) and 0 <= value[name] <= MAX_SPENT_SECONDS)


def _usage(value: Any, steps: tuple[str, ...]) -> Usage:
    """The known steps' [CPU seconds, minor faults, major faults], each bounded; anything else
    is left out, as in ``_spent``."""
    if type(value) is not dict or len(value) > len(steps):
        return ()
    out = []
    for name in steps:
        row = value.get(name)
        if type(row) is not list or len(row) != 3:
            continue
        cpu, minor, major = row
        if type(cpu) in (int, float) and 0 <= cpu <= MAX_SPENT_SECONDS and \
                all(type(n) is int and 0 <= n <= MAX_FAULTS for n in (minor, major)):
            out.append((name, float(cpu), minor, major))
    return tuple(out)


def _one_of(value: Any, allowed: Iterable[str]) -> bool:
    """``value in allowed`` for a string only: a list or dict from the child is never hashed."""
    return type(value) is str and len(value) <= 80 and value in allowed


def _error_name(value: Any) -> str:
    return value if _one_of(value, ERROR_NAMES) else "Exception"


def clean_plain(p: Any, depth: int = 0) -> dict:
    """A plain value rebuilt from the grader's own pieces: known tags, bounded numbers and
    sizes, identifiers from a fixed pattern or set. Anything else reads as unsupported. At the
    top, the codes of the prompt's requirements the answer did not meet (``unmet``) are kept."""
    out = _clean_value(p, depth)
    unmet = p.get("unmet") if type(p) is dict and depth == 0 else None
    if type(unmet) is list and unmet:
        out["unmet"] = [u for u in unmet[:MAX_REQUIRES] if type(u) is str and _IDENT.fullmatch(u)]
    evidence = p.get("evidence") if type(p) is dict and depth == 0 else None
    if type(evidence) is list:
        out["evidence"] = [e for e in EVIDENCE if any(_one_of(v, (e,)) for v in evidence[:8])]
    return out


def _clean_value(p: Any, depth: int) -> dict:
    if type(p) is not dict or depth > MAX_DEPTH:
        return dict(_UNSUPPORTED)
    t = p.get("t")
    if not _one_of(t, _TAGS):
        return dict(_UNSUPPORTED)
    if t in ("none", "ellipsis", "function", "unsupported"):
        return {"t": t}
    if t == "bool":
        return {"t": "bool", "v": p.get("v") is True}
    if t == "array":
        return _clean_array(p)
    if t == "str":
        v = p.get("v")
        return {"t": "str", "v": v[:200]} if type(v) is str else dict(_UNSUPPORTED)
    if t in ("exception", "error"):
        return {"t": t, "v": _error_name(p.get("v"))}
    if t == "node":
        v = p.get("v")
        return {"t": "node", "v": v} if type(v) is str and _IDENT.fullmatch(v) else dict(_UNSUPPORTED)
    if t == "missing":
        why = p.get("why")
        out = {"t": "missing", "why": why if _one_of(why, MISSING_CODES) else "no_variable"}
        if why == "answer_cell_raised":
            out["error"] = _error_name(p.get("error"))
        return out
    if t == "limit":
        why = p.get("why")
        return {"t": "limit", "why": why if _one_of(why, LIMIT_CODES) else "cpu"}
    return _clean_container(p, t, depth)


def _clean_container(p: dict, t: str, depth: int) -> dict:
    v = p.get("v")
    if t == "dict" and type(v) is dict and len(v) <= 50:
        return {"t": "dict", "v": {k[:80]: clean_plain(x, depth + 1) for k, x in v.items() if type(k) is str}}
    if t == "list" and type(v) is list and len(v) <= 1000:
        return {"t": "list", "v": [clean_plain(x, depth + 1) for x in v]}
    return dict(_UNSUPPORTED)


_TAGS = frozenset({"none", "ellipsis", "function", "unsupported", "bool", "array", "str", "exception",
                   "error", "node", "missing", "limit", "dict", "list"})


def _clean_array(p: dict) -> dict:
    shape, dtype, values = p.get("shape"), p.get("dtype"), p.get("v")
    if type(shape) is not list or len(shape) > 8 or not all(type(n) is int and 0 <= n <= MAX_ELEMENTS
                                                              for n in shape):
        return dict(_UNSUPPORTED)
    if math.prod(shape) > MAX_ELEMENTS:
        return dict(_UNSUPPORTED)
    try:
        clean = _numbers(values, shape)
    except (TypeError, ValueError):
        return dict(_UNSUPPORTED)
    out = {"t": "array", "shape": list(shape), "dtype": dtype if _one_of(dtype, DTYPES) else "float",
           "v": clean}
    if p.get("boxed") is True:  # one tensor inside a tuple or list, as autograd.grad returns it
        out["boxed"] = True
    return out


def _numbers(v: Any, shape: list[int]) -> Any:
    """The nested list checked against its shape, each leaf a finite float within
    ``MAX_NUMBER`` or a spelled-out special (an integer of 400 digits is not a number here)."""
    if not shape:
        if type(v) is int and abs(v) <= MAX_NUMBER:
            return float(v)
        if type(v) is float and math.isfinite(v):
            return v
        if type(v) is str and v in ("nan", "inf", "-inf"):
            return v
        raise ValueError("not a number")
    if type(v) is not list or len(v) != shape[0]:
        raise ValueError("shape mismatch")
    return [_numbers(u, shape[1:]) for u in v]


def encode_message(message: dict) -> bytes:
    return (json.dumps(message, allow_nan=False) + "\n").encode()
