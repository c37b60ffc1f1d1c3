"""Trusted side: the exercise unit; everything graded about one exercise is one ``Exercise``.

An exercise module in ``exercises/chNN_*/`` defines ``EXERCISE = Exercise(...)``. From it come
the prompt the student reads, the setup code, the solution, the self-check, the grade cell, the
answer key and the tests that prove the references right.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from autograder.byhand import REFUSALS
from autograder.kinds import Kind

Params = Mapping[str, Any]


@dataclass(frozen=True)
class Wrong:
    """A known wrong answer: how to compute it from the parameters, and what it reveals."""

    misconception: str  # id in gradtutor.key.misconceptions.CATALOGUE
    value: Callable[..., Any]  # same parameters as the reference
    explanation: str  # the mechanism that produces this number
    hint: str  # leads to the fix without giving the answer


# Shared wrong answers: the same mistake at many exercises, with one explanation. A unit declares
# what the mistaken answer is (a function of its parameters) and names it in a few words.
VALUE_INSTEAD = (
    "This is the value of {what}: what the forward pass computes, not a derivative. A gradient "
    "says how that value changes when the input moves a little.",
    "Differentiate: by how much does {what} move when its input moves by a small h?")
ORDER_OFF = (
    "This is {what}: one derivative order {direction} than the question asks. Count how many "
    "times the function is differentiated on the way to the answer.",
    "Write the function, then differentiate it once per order asked, checking each step.")


def value_instead(value: Callable[..., Any], what: str, hint: str | None = None) -> Wrong:
    """The function's value given where its derivative was asked ("the value of y = x²")."""
    explanation, shared_hint = VALUE_INSTEAD
    return Wrong("value_not_derivative", value, explanation.format(what=what),
                 hint or shared_hint.format(what=what))


def order_off(value: Callable[..., Any], what: str, *, higher: bool, hint: str | None = None) -> Wrong:
    """A derivative one order too high or too low ("the gradient where the Hessian was asked")."""
    explanation, shared_hint = ORDER_OFF
    return Wrong("derivative_order_off", value,
                 explanation.format(what=what, direction="higher" if higher else "lower"),
                 hint or shared_hint)


@dataclass(frozen=True)
class Require:
    """Something the prompt asks of the answer beyond its value (float64, the input left as it
    was, a value rather than a tuple): ``expression`` is True when it is met, evaluated where the
    answer ran (the setup's names, and ``answer`` for the answer)."""

    code: str  # identifier, unique within the exercise
    expression: str
    name: str  # what the prompt asks, in a few words
    explanation: str  # why it matters
    hint: str


@dataclass(frozen=True)
class Region:
    """A branch of the reference that the values must reach (clip_grad_norm: the total norm
    above max_norm, and below it): ``holds(**params)`` is True inside it. The grading variants
    and the self-check's values each reach every region of their exercise
    (``answer_key.practice_params`` draws for the ones the shown values miss), so an answer
    right on one branch only is caught. ``blind`` names the listed wrong answers
    (misconception ids) that agree with the reference inside it: there they say nothing, and
    elsewhere they must differ as usual."""

    name: str
    holds: Callable[..., bool]
    blind: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Exercise:
    # a unit's folder is its chapter and its file name its id: the registry fills both in
    id: str = ""
    chapter: int = 0
    title: str
    prompt: str  # Markdown with {{param}} fields; LaTeX braces are safe
    answer: str  # the variable (or function) name the student defines
    kind: Kind
    params: dict[str, Any]  # the values shown to the student
    hidden: tuple[dict[str, Any], ...]  # other values, used only when grading
    draw: Callable[[random.Random], dict[str, Any]]  # random parameters for self-tests
    reference: Callable[..., Any]  # witness 1: torch autograd, float64
    analytic: Callable[..., Any]  # witness 2: a formula that never calls autograd
    solution: str  # code for the answer cell; becomes nbgrader's solution region
    setup: str = ""  # code template run before the answer cell, with {{param}} fields
    finite_diff: Callable[..., Any] | None = None  # witness 3, where the function is smooth
    wrong: tuple[Wrong, ...] = ()
    points: float = 1.0
    call: str | None = None  # for function answers: the expression that calls it
    placeholder: str | None = None  # starter line; default "<answer> = ..."
    by_hand: bool = False  # a derivation: autograd is off while the answer cell runs
    requires: tuple[Require, ...] = ()
    # code written by hand: the student's function or class runs with autograd (AUTOGRAD) or
    # torch altogether (TORCH) refused, wherever the grader calls it (autograder.byhand.guarded)
    refuse: str = ""
    regions: tuple[Region, ...] = ()  # branches the values must reach (see Region)
    # prompt fields run when the prompt is written, not when the unit is loaded: what torch
    # prints (an error message) can take seconds to produce, and the judge never reads a prompt
    prompt_fields: dict[str, Callable[[], Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.refuse not in REFUSALS:
            raise ValueError(f"refuse={self.refuse!r}: one of {REFUSALS}")
        if self.refuse and (self.call is None or self.by_hand):
            raise ValueError("refuse= guards a function or class answer; by_hand= an answer cell")

    def regions_at(self, params: Params) -> tuple[str, ...]:
        """The names of the regions these values reach."""
        return tuple(r.name for r in self.regions if r.holds(**params))

    def blind_at(self, params: Params) -> frozenset[int]:
        """Indices of the listed wrong answers that agree with the reference at these values by
        the unit's own declaration (a region that is blind to them)."""
        names = {m for r in self.regions if r.blind and r.holds(**params) for m in r.blind}
        return frozenset(i for i, w in enumerate(self.wrong) if w.misconception in names)

    @property
    def mode(self) -> str:
        """How the exercise is to be done, the one source of its banner: "by_hand" (a derivation
        in the answer cell), "refuse_autograd" (code with no autograd inside), "refuse_torch"
        (plain Python, no torch inside) or "autograd" (use torch)."""
        if self.by_hand:
            return "by_hand"
        return f"refuse_{self.refuse}" if self.refuse else "autograd"

    @property
    def is_function(self) -> bool:
        return self.call is not None

    def variants(self, hidden: bool = True) -> list[dict[str, Any]]:
        """The shown parameters first, then the hidden ones."""
        return [dict(self.params), *(dict(h) for h in self.hidden)] if hidden else [dict(self.params)]

    def setup_code(self, params: Params) -> str:
        return fill(self.setup, params, code=True)

    def prompt_text(self, params: Params | None = None) -> str:
        computed = {name: make() for name, make in self.prompt_fields.items()}
        return fill(self.prompt, {**(params or self.params), **computed}, code=False)

    def starter(self) -> str:
        if self.placeholder is not None:
            return self.placeholder
        return f"{self.answer} = ...  # replace ... with your answer"


_FIELD = re.compile(r"\{\{\s*(\w+)\s*(\|\s*pretty\s*)?\}\}")


def literal(value: Any) -> str:
    """Python source for a parameter value (floats keep full precision)."""
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, list | tuple):
        inner = ", ".join(literal(v) for v in value)
        return f"[{inner}]"
    return repr(value)


def pretty(value: Any) -> str:
    """How a parameter reads in prose: 3.0 shows as 3, lists as [1, 2]."""
    if isinstance(value, float):
        return str(int(value)) if value == int(value) and abs(value) < 1e15 else repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(pretty(v) for v in value) + "]"
    return str(value)


def fill(template: str, params: Params, *, code: bool) -> str:
    """Replace ``{{name}}`` by the parameter as Python source, ``{{name|pretty}}`` as prose."""

    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in params:
            raise KeyError(f"template field {{{{{name}}}}} has no parameter")
        return pretty(params[name]) if m.group(2) and not code else literal(params[name])

    return _FIELD.sub(sub, template)


def table_with(base: Callable[..., dict], **rows: dict | Callable[..., dict]) -> Callable[..., dict]:
    """A known wrong table: the right one from ``base`` with some entries changed.

    Each row's changes are a dict of entries, or a function of the parameters that returns one.
    """

    def value(**params: Any) -> dict:
        table = {row: dict(cells) for row, cells in base(**params).items()}
        for row, cells in rows.items():
            table[row].update(cells(**params) if callable(cells) else cells)
        return table

    return value


def raised(action: Callable[[], Any]) -> str | None:
    """The name of the exception ``action()`` raises, or None if it runs: the reference of a
    "which error is raised?" exercise."""
    try:
        action()
    except Exception as e:  # the exception is the answer
        return type(e).__name__
    return None
