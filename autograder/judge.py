"""Student side: judge plain answers against check data: validity, correctness, diagnosis.

The trusted grader runs it too: the judge sees only plain data (``plain.py``) and a
``Check`` (``checkdata.py``) holding the references as canonical values. It never runs an
exercise unit and never calls anything on a student object. In the trusted grader the check
holds every variant; in the student runtime, the shown and the practice values.
"""

from __future__ import annotations

import contextlib
import io
import re
import warnings
from dataclasses import dataclass, field
from typing import Any

import torch

from autograder import checkdata
from autograder.checkdata import Check, WrongInfo
from autograder.feedback import Feedback, VariantScore
from autograder.kinds import Canonical, Choice, Invalid, Kind, Number, Table, Tensor, numbers_close
from autograder.plain import Plain
from autograder.sealed import Sealed

NOT_ANSWERED = ("Not answered yet: replace the ... in the answer cell above with your answer, "
                "run that cell, then run this one.")

# why an answer is missing, from a fixed set (the sandbox sends codes, never text)
MISSING = {
    "no_variable": "There is no variable {answer!r}: was the answer cell deleted, renamed or not run?",
    "answer_cell_raised": "Your answer cell raised {error} before it set {answer!r}: run it, read the "
                          "error, fix it, then run the check again.",
    "not_callable": "{answer!r} should be a function (def {answer}(...)).",
    "no_answer_cell": "The answer cell that sets {answer!r} was not found, so it could not be re-run "
                      "with other values.",
    "not_reached": "This part of the answer was not read: an earlier one stopped the grader.",
    "by_hand": "This exercise is done by hand: your answer cell asked autograd for a gradient "
               "(backward, torch.autograd.grad or torch.func), which is switched off while it "
               "runs. Work the derivative out on paper and write {answer!r} as an expression "
               "of the parameters in the setup cell.",
    "by_hand_code": "This exercise is done by hand: your code asked autograd for a gradient "
                    "(backward, torch.autograd.grad, torch.func or forward-mode AD), which is "
                    "refused while {answer!r} runs. Derive each derivative on paper and write it "
                    "with tensor operations.",
    "no_torch": "This exercise is done by hand in plain Python: {answer!r} used torch, which is "
                "refused while it runs. Use Python numbers and the math module only.",
}
LIMITS = {
    "cpu": "Your code was stopped: it computed for longer than the time limit per cell.",
    "wall": "Your code was stopped: it was still running after the time limit per cell.",
    "memory": "Your code ran out of memory.",
    "recursion": "Your code recursed too deeply.",
}


# Slips no unit lists, recognised from the answer and the reference alone: (short name, the
# mechanism, a hint). Only for numbers and tensors, only when no listed wrong answer matched.
GENERIC = {
    "sign_flipped": ("The sign is flipped",
                     "Your numbers have the right size but the opposite sign (all of them, or the "
                     "ones that are not right yet).",
                     "Follow the signs through each step of the chain rule: which factor is negative?"),
    "factor_two": ("Off by a factor of 2",
                   "Your answer is twice the right value: a term counted twice, or the 2 of a square "
                   "applied twice.",
                   "Check each factor of 2: where does one come from, and is it used once?"),
    "factor_half": ("Off by a factor of 1/2",
                    "Your answer is half the right value: a factor of 2 is missing, for example the "
                    "2 that the derivative of a square brings down, or one of two equal branches.",
                    "Look for a square or a repeated use whose factor of 2 got lost."),
    "factor_k": ("Counted a whole number of times too many",
                 "Your answer is a whole multiple of the right value: something was added up several "
                 "times (gradients accumulated over backward calls, a sum instead of a mean, a loop "
                 "that ran more than once).",
                 "How many times does your code add into the result, and how many times should it?"),
    "factor_one_over_k": ("Divided a whole number of times too many",
                          "Your answer is the right value divided by a whole number: a mean where a "
                          "sum was asked, or a contribution counted once instead of several times.",
                          "Is it a sum or a mean? Does each use of the tensor contribute?"),
    "transposed": ("Transposed",
                   "Your matrix has the right entries in the wrong places: it is the transpose of "
                   "the answer.",
                   "A gradient has the shape of its tensor: check which index is the row."),
    "rounded": ("Right to a few digits only",
                "Your numbers agree with the right ones in their first few digits, then differ.",
                "Go through your computation step by step against the prompt: the formula, the "
                "step sizes and the dtype it asks for."),
    "summed": ("A sum where the entries were asked",
               "Your answer adds up entries the right answer keeps apart (all of them into one "
               "number, or the rows of a batch into one row): the per-element values were asked for.",
               "Keep one value per element: which tensor's .grad is it, and what shape does it have?"),
    "reordered": ("The right numbers in the wrong order",
                  "Your answer holds the right numbers, but not in the places the question asks "
                  "for: rows or entries swapped.",
                  "Read the order the prompt gives, row by row, and match each of your numbers to it."),
    "per_element": ("The entries where their sum was asked",
                    "Your numbers add up to the right answer: you gave the per-element values (one "
                    "per entry or per sample) where the question asks for one number, their sum.",
                    "The answer is a single number: what reduces your entries to it?"),
    "typed_in": ("Does not follow the parameters",
                 "Your answer is the same at every set of values the self-check tried, but the "
                 "right one changes with the parameters: it does not depend on them as it should.",
                 "Write the answer with the names the setup cell defines, so that it follows them "
                 "when they change."),
    "shown_values_only": ("Right at the shown values only",
                          "Your answer changes with the parameters, but agrees with the right one only "
                          "at the values shown in the notebook: your formula and the right one "
                          "coincide at that point and part elsewhere.",
                          "Work your formula at a second set of values by hand (or with torch) and "
                          "compare it with the right one, term by term."),
}

# what a generic diagnosis may add only on the answer cell's evidence (``answers.evidence``)
ON_EVIDENCE = {
    ("typed_in", "literal"): (
        "Typed in, not computed",
        " Your cell writes numbers where the setup's names belong: a number typed in is right "
        "only where it happens to hold.",
        ""),
    ("shown_values_only", "literal"): (
        None,
        " Your cell holds a number of the setup's values: written where a parameter belongs, "
        "it is right only at the shown values.",
        " Look for a number in your cell that should be a parameter."),
    ("rounded", "float32"): (
        None,
        " Your code computes in float32 (about 7 significant digits, fewer after subtracting two "
        "close numbers).",
        " Compute in float64 (plain Python floats are)."),
}

# families of slips that describe the same kind of error with different sizes (see _consistent)
SLIP_FAMILY = {"factor_two": "factor_k", "factor_k": "factor_k",
               "factor_half": "factor_one_over_k", "factor_one_over_k": "factor_one_over_k"}


def generic_slip(kind: Kind, answer: Canonical, ref: Canonical) -> str | None:
    """The generic slip this wrong answer shows, if one fits (sign, factor, transpose, sum)."""
    if not isinstance(answer, torch.Tensor) or not isinstance(ref, torch.Tensor):
        return None
    if answer.shape != ref.shape:
        return _shape_slip(kind, answer, ref)
    if _some_negated(kind, answer, ref):  # NaN and inf entries must agree; the others flip or not
        return "sign_flipped"
    if not ref.isfinite().all() or not bool((ref != 0).any()):
        return None
    if _close(kind, answer, -ref):
        return "sign_flipped"
    if _reordered(kind, answer, ref):
        return "reordered"
    for factor, slip in ((2.0, "factor_two"), (0.5, "factor_half")):
        if _close(kind, answer, factor * ref):
            return slip
    for k in range(3, 13):
        if _close(kind, answer, k * ref):
            return "factor_k"
        if _close(kind, answer, ref / k):
            return "factor_one_over_k"
    if ref.dim() == 2 and ref.shape[0] == ref.shape[1] and _close(kind, answer, ref.T):
        return "transposed"
    if numbers_close(answer, ref, ROUNDED_RTOL, kind.atol):
        return "rounded"
    return None


def _some_negated(kind: Kind, answer: torch.Tensor, ref: torch.Tensor) -> bool:
    """Every entry right or right with its sign flipped, and at least one flipped."""
    a, r = answer.reshape(-1), ref.reshape(-1)
    if not (a.isfinite().all() and r.isfinite().all()):
        # entries that are NaN or infinite must agree exactly; the finite ones are compared
        same_odd = torch.equal(torch.isnan(a), torch.isnan(r)) and \
            torch.equal(torch.isinf(a), torch.isinf(r)) and torch.equal(a[torch.isinf(a)], r[torch.isinf(r)])
        keep = r.isfinite() & a.isfinite()
        if not same_odd or not bool(keep.any()):
            return False
        a, r = a[keep], r[keep]
    flipped = [not numbers_close(a[i:i + 1], r[i:i + 1], kind.rtol, kind.atol) for i in range(r.numel())]
    if not any(flipped):
        return False
    return all(not f or (bool(r[i] != 0) and numbers_close(a[i:i + 1], -r[i:i + 1], kind.rtol, kind.atol))
               for i, f in enumerate(flipped))


def _reordered(kind: Kind, answer: torch.Tensor, ref: torch.Tensor) -> bool:
    """The right rows (or entries) in another order."""
    if ref.dim() == 0 or ref.shape[0] < 2 or not (ref.isfinite().all() and answer.isfinite().all()):
        return False
    rows, left = list(answer), list(ref)
    # only a permutation of distinct entries says "order": repeated or zero entries move by chance
    if any(numbers_close(a, b, kind.rtol, kind.atol) for i, a in enumerate(left) for b in left[i + 1:]) \
            or sum(bool((r != 0).any()) for r in left) < 2:
        return False
    for row in rows:
        match = next((k for k, other in enumerate(left)
                      if numbers_close(row, other, kind.rtol, kind.atol)), None)
        if match is None:
            return False
        left.pop(match)
    return True


def _shape_slip(kind: Kind, answer: torch.Tensor, ref: torch.Tensor) -> str | None:
    """The slips that change an answer's shape: a sum over all entries or over one axis, the
    entries where their sum was asked, a transposed matrix."""
    near = lambda a, b: a.shape == b.shape and numbers_close(a, b, kind.rtol, kind.atol)
    # a sum only where it adds two nonzero finite entries somewhere: else nothing was summed (a
    # diagonal read off a matrix whose other entries are zero). A sum over an axis carries a NaN
    # or an infinity of the reference through (a NaN column sums to NaN), and shows in the
    # slices that hold none; a sum of everything would be one NaN, which says nothing.
    adds = lambda d: bool((ref.isfinite().all(d) & ((ref != 0).sum(d) >= 2)).any())
    if ref.dim() >= 2 and any(adds(d) and near(answer, ref.sum(d)) for d in range(ref.dim())):
        return "summed"
    if not (ref.isfinite().all() and answer.isfinite().all()):
        return None
    if ref.numel() > 1 and answer.numel() == 1 and int((ref != 0).sum()) >= 2 and \
            near(answer.reshape(()), ref.sum()):
        return "summed"
    if ref.numel() == 1 and answer.numel() > 1 and near(answer.sum(), ref.reshape(())):
        return "per_element"
    if ref.dim() == 2 and answer.shape == ref.T.shape and bool((ref != 0).any()) and near(answer, ref.T):
        return "transposed"
    return None


def _other_shape(kind: Kind, answer: Plain) -> torch.Tensor | None:
    """A numeric answer that the kind refused for its shape, read as it is: only to recognise a
    slip that changes the shape (a sum, a transpose); it is never right."""
    if not isinstance(kind, Number | Tensor) or answer.get("t") != "array" or answer.get("boxed"):
        return None
    try:
        return Tensor(shape=tuple(answer["shape"])).canonical(answer)
    except Exception:
        return None


ROUNDED_RTOL = 3e-3  # within this, but outside the kind's tolerance: the digits say "rounding"


def _close(kind: Kind, a: torch.Tensor, b: torch.Tensor) -> bool:
    try:
        return kind.same(a, b)
    except (TypeError, RuntimeError):
        return False


def quietly(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Run trusted torch code without letting its warnings reach stderr (nbgrader scores
    any stderr output as a failed test)."""
    with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def matches(check: Check, answer: Canonical, variant: int = 0) -> list[int]:
    """Indices of every known wrong answer this answer matches at this variant (two mistakes
    can give the same number at some values: 4x and 4x² at x = 1); for a table or an array
    with no exact match, the mistake it follows in part (``_in_part``)."""
    exact = [i for i, value in check.variants[variant].wrong if same(check.kind, answer, value)]
    if exact:
        return exact
    if isinstance(answer, dict) or (isinstance(answer, torch.Tensor) and answer.numel() > 1):
        part = _in_part(check, answer, variant)
        return [] if part is None else [part]
    return []


def believed(check: Check, results: list[Judgement]) -> tuple[int | None, bool]:
    """The known wrong answer the answers show, and whether it is still ambiguous.

    The candidates are the wrong answers matched at the first variant where any matched. A
    candidate is believed only where it holds at every other variant that separates the
    candidates (where their values differ); a variant at which they coincide says nothing.
    Returns (None, False) when no candidate survives: the answer equals a known mistake only
    where mistakes coincide, so none of them is named."""
    first = next((r for r in results if r.matches), None)
    if first is None:
        return None, False
    candidates = list(first.matches)
    for i, r in enumerate(results):
        if len(candidates) < 2 or not r.read:
            continue  # one candidate left, or the answer was not read here
        values = dict(check.variants[i].wrong)
        told_apart = any(not same(check.kind, values[a], values[b])
                         for a in candidates for b in candidates if a < b and a in values and b in values)
        if told_apart:
            candidates = [c for c in candidates if c in r.matches]
    if not candidates:
        return None, False
    return candidates[0], len(candidates) > 1


def _cells(kind: Kind, a: Canonical, b: Canonical) -> list[bool]:
    """Which cells (of a table) or entries (of an array) of ``a`` agree with ``b``."""
    if isinstance(kind, Table):
        return kind._cells(a, b)
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)) or a.shape != b.shape:
        raise TypeError("not comparable entry by entry")
    x, y = a.reshape(-1), b.reshape(-1)
    return [numbers_close(x[i:i + 1], y[i:i + 1], kind.rtol, kind.atol) for i in range(y.numel())]


def _in_part(check: Check, answer: Canonical, variant: int) -> int | None:
    """A table (or array) wrong only in cells a known mistake changes (at least half of them), and
    there exactly as that mistake has them, shows that mistake in part. When several fit,
    the one that changes the fewest cells; none when the closest ones name different causes."""
    kind, ref = check.kind, check.variants[variant].reference
    try:
        wrong_here = {j for j, ok in enumerate(_cells(kind, answer, ref)) if not ok}
    except (TypeError, KeyError, RuntimeError):
        return None
    if not wrong_here:
        return None
    fits: list[tuple[int, int]] = []  # (cells the mistake changes, index)
    for i, value in check.variants[variant].wrong:
        try:
            theirs = {j for j, ok in enumerate(_cells(kind, value, ref)) if not ok}
            agree = _cells(kind, answer, value)
        except (TypeError, KeyError, RuntimeError):
            continue
        # at least half of the mistake's cells: one shared True/False alone is no evidence
        if wrong_here <= theirs and 2 * len(wrong_here) >= len(theirs) and all(agree[j] for j in wrong_here):
            fits.append((len(theirs), i))
    if not fits:
        return None
    fewest = min(n for n, _ in fits)
    closest = {i for n, i in fits if n == fewest}
    causes = {check.wrong[i].misconception for i in closest}
    return min(closest) if len(causes) == 1 else None


def same(kind: Kind, a: Canonical, b: Canonical) -> bool:
    if isinstance(b, Sealed):  # the runtime ships answers that never change sealed
        return b.holds(a)
    if isinstance(a, Sealed):
        return a.holds(b)
    if a is None or b is None:
        return a is b
    if isinstance(a, dict) != isinstance(b, dict):
        return False
    try:
        return kind.same(a, b)
    except (TypeError, KeyError, RuntimeError):
        return False


def answer_names(kind: Kind, ref: Canonical) -> set[str]:
    """The exception and grad_fn names the right answer consists of (for a table, its cells):
    words a wrong answer's explanation must not show, or it would give the answer away."""
    if isinstance(kind, Choice):
        values = [ref]
    elif isinstance(kind, Table) and isinstance(ref, dict):
        values = [row.get(c) for row in ref.values() for c, k in kind.columns if isinstance(k, Choice)]
    else:
        return set()
    return {v for v in values if isinstance(v, str) and
            (v.endswith(("Error", "Exception")) or "Backward" in v or v == "AccumulateGrad")}


WITHHELD = ("The explanation of this mistake would name the answer, so it is left out here: "
            "compare your answer with what the lesson says about each line.")


def redact(text: str, names: set[str]) -> str:
    """``text`` without the sentences that show one of ``names``: a sentence about the answer's
    names states the answer (a placeholder in it would still say which line raises)."""
    if not names:
        return text
    ordered = sorted(names, key=len, reverse=True)
    shows = re.compile("|".join(rf"(?<![\w.]){re.escape(n)}(?!\w)" for n in ordered))
    sentences = re.split(r"(?<=[.!?])\s+(?=[A-Z(\"'`])", text)
    kept = [sentence for sentence in sentences if not shows.search(sentence)]
    if len(kept) == len(sentences):
        return text
    return " ".join(kept) or WITHHELD


def missing_message(check: Check, answer: Plain) -> str:
    template = MISSING.get(str(answer.get("why")), MISSING["no_variable"])
    return template.format(answer=check.spec.answer, error=answer.get("error", "an error"))


# errors whose cause is the same in every exercise: (exception name, words of its text, what it means)
EXPLAINED = (
    ("OverflowError", "", "a number grew past the largest float (about 1.8e308). In a loop of "
     "steps that means the values diverged: each step made them larger. Check the sign and the "
     "size (the learning rate) of the step at that line."),
    ("AttributeError", "'NoneType'", "a value your code uses is None. A function that ends "
     "without return gives None: does each function return what the prompt asks (a result, a "
     "handle)?"),
    ("ZeroDivisionError", "", "a division by zero: one of the values your code divides by is 0 "
     "at these values."),
)


# torch's own errors whose text names one mistake, whatever the exercise: (exception name, a
# pattern of its text, misconception id, its short name, what it means, a hint). Read from the
# text the kernel keeps (the sandbox sends none, and then no cause is given).
ERROR_CAUSES = (
    ("RuntimeError", r"returned an incorrect number of gradients \(expected (?P<want>\d+), got (?P<got>\d+)\)",
     "custom_grad_order", "backward returns one gradient per forward input, in forward's order",
     "Your backward returned {got} values where forward takes {want} inputs. backward returns "
     "exactly one value per argument of forward (after ctx), in forward's order: None for a "
     "number or an input that needs no gradient.",
     "Count the arguments of your forward after ctx, and return one value for each."),
    ("RuntimeError", r"jvp returned an invalid number of forward gradients "
                     r"\(expected (?P<want>\d+) but got (?P<got>\d+)\)",
     "jvp_sums_inputs", "A JVP adds up the contributions of every input's tangent",
     "Your jvp returned {got} tangents where the Function has {want} output(s). jvp returns one "
     "tangent per output; each is the sum over the inputs of (partial derivative) × (that "
     "input's tangent), not one term per input.",
     "If both inputs move, how does the one output move?"),
    ("RuntimeError", r"returned an invalid gradient at index (?P<index>\d+) - got \[(?P<a>\d+), (?P<b>\d+)\] "
                     r"but expected shape compatible with \[(?P=b), (?P=a)\]",
     "matmul_transpose", "Matrix-product gradients: shapes and transposes",
     "The gradient your backward returned for input {index} (counting from 0) has the "
     "transposed shape ({a}, {b}) of that input's ({b}, {a}). A gradient has its tensor's "
     "shape; in a matrix product, the order of the factors and which one is transposed decide it.",
     "Write each factor's shape under your product: which order gives the input's shape?"),
    ("ValueError", r"gradient for \w+ has shape \((?P<a>\d+), (?P<b>\d+)\), "
                   r"but \w+ has shape \((?P=b), (?P=a)\)",
     "matmul_transpose", "Matrix-product gradients: shapes and transposes",
     "One of your gradients has the transposed shape ({a}, {b}) of its tensor's ({b}, {a}). A "
     "gradient has its tensor's shape; in a matrix product, the order of the factors and which "
     "one is transposed decide it.",
     "Write each factor's shape under your product: which order gives the tensor's shape?"),
    ("RuntimeError", r"mat1 and mat2 shapes cannot be multiplied "
                     r"\((?P<a>\d+)x(?P<b>\d+) and (?P<c>\d+)x(?P<d>\d+)\)",
     "matmul_transpose", "Matrix-product gradients: shapes and transposes",
     "A matrix product in your code multiplies a {a}×{b} matrix by a {c}×{d} one: the inner sizes "
     "({b} and {c}) must agree. In a gradient, the order of the factors and which one is "
     "transposed follow from the shapes the result must have.",
     "Write each factor's shape under your product: which order and transposes give the shape "
     "you need?"),
    ("RuntimeError", r"Trying to backward through the graph a second time",
     "graph_freed", "The graph is freed after backward unless retain_graph=True",
     "A backward pass went through a graph that an earlier backward pass had already freed: "
     "backward frees the graph's saved tensors as it goes, unless that earlier call is told "
     "retain_graph=True.",
     "Which backward call runs first, and what must it leave behind for the next one?"),
)


def error_cause(answer: Plain) -> tuple[str, str, str, str] | None:
    """(misconception id, short name, explanation, hint) for an error ``ERROR_CAUSES`` knows."""
    if type(answer) is not dict or answer.get("t") != "error" or not isinstance(answer.get("text"), str):
        return None
    for name, pattern, misconception, short, explanation, hint in ERROR_CAUSES:
        found = re.search(pattern, answer["text"]) if answer.get("v") == name else None
        if found:
            return misconception, short, explanation.format(**found.groupdict()), hint
    return None


def error_message(answer: Plain) -> str:
    """The error the student's own code raised, with where (in the kernel: the line) and, for
    the errors ``EXPLAINED`` lists, what it means, rather than the raw exception alone."""
    name, text = str(answer.get("v", "an error")), answer.get("text")  # no text from the sandbox
    line = answer.get("line")
    where = f" ({line})" if isinstance(line, str) and line else ""
    means = next((m for n, words, m in EXPLAINED if n == name and words in str(text or "")), None)
    if means is not None:
        return f"Your code raised {name}{where}: {means}"
    if where:
        return f"Your code raised {name}{where}" + (f". {text}" if text else ".")
    return f"Your code raised {name}" + (f": {text}" if text else ".")


@dataclass
class Judgement:
    """One variant of one answer, judged. Only ``status`` and ``score`` reach the student's
    ``Feedback``; the rest is what the summary and the diagnosis read."""

    status: str  # "correct", "wrong", "invalid" or "not_answered"
    score: float  # 1.0 or 0.0
    message: str = ""  # why it is invalid or not answered
    read: bool = False  # the kind read the answer: ``canonical`` holds it (None is a value too)
    canonical: Canonical = None  # the answer as the kind reads it
    wrong: int | None = None  # the known wrong answer it is (index into ``check.wrong``)
    matches: list[int] = field(default_factory=list)  # every known wrong answer it equals here
    slip: str | None = None  # a key of GENERIC, where no known wrong answer matched
    unmet: int | None = None  # index into ``check.requires`` of a requirement not met
    right_value: bool = False  # with ``unmet``: the value itself is right
    cells: list[str] = field(default_factory=list)  # a table's wrong entries, by name


def judge_variant(check: Check, variant: int, answer: Plain) -> Judgement:
    """One variant: its status, score, and what the answer is (a known mistake, a slip)."""
    t = answer.get("t")
    if t == "ellipsis":
        return Judgement("not_answered", 0.0, message=NOT_ANSWERED)
    if t == "missing":
        return Judgement("invalid", 0.0, message=missing_message(check, answer))
    if t == "limit":
        return Judgement("invalid", 0.0, message=LIMITS.get(str(answer.get("why")), LIMITS["cpu"]))
    if t == "error":
        return Judgement("invalid", 0.0, message=error_message(answer))
    ref = check.variants[variant].reference
    try:
        canon = check.kind.canonical(answer)
    except Invalid as e:
        other = _other_shape(check.kind, answer)
        slip = generic_slip(check.kind, other, ref) if other is not None else None
        if slip is None:
            return Judgement("invalid", 0.0, message=str(e))
        return Judgement("wrong", 0.0, read=True, canonical=other, slip=slip)
    unmet = _unmet(check, answer)
    right = same(check.kind, canon, ref)
    if right and unmet is None:
        return Judgement("correct", 1.0, read=True, canonical=canon)
    if right:  # the right value, but the prompt asked for more than the value: say what
        return Judgement("wrong", 0.0, read=True, canonical=canon, unmet=unmet, right_value=True)
    # a table is right only when every entry is; the message names the wrong entries
    found = matches(check, canon, variant)
    # a known mistake in the value comes first; else the unmet requirement
    result = Judgement("wrong", 0.0, read=True, canonical=canon, matches=found,
                       wrong=found[0] if found else None, unmet=unmet)
    if result.wrong is None:
        result.slip = generic_slip(check.kind, canon, ref)
    if isinstance(check.kind, Table) and isinstance(ref, dict):  # cells plain or sealed
        result.cells = check.kind.wrong_cells(canon, ref)
    return result


def _unmet(check: Check, answer: Plain) -> int | None:
    """Index into ``check.requires`` of the first requirement the answer did not meet."""
    codes = answer.get("unmet") or ()
    return next((i for i, r in enumerate(check.requires) if r.code in codes), None)


UNJUDGEABLE = ("The grader could not judge this answer (reading it failed), so it earns no points "
               "here. Check that it is the kind of value the exercise asks for.")


def judge(exercise: str | Check, answers: list[Plain]) -> Feedback:
    """Judge the answers for the first ``len(answers)`` variants (shown values first).

    Raises only ``ValueError`` for no answers or more than variants (the caller's mistake). Whatever
    the answers hold, judging them raises nothing: an answer the judge fails on is invalid with
    the fixed ``UNJUDGEABLE`` message, never a traceback of its data (tests/test_contract_fuzz.py).
    """
    check = exercise if isinstance(exercise, Check) else checkdata.get(exercise)
    if type(answers) is not list or not 0 < len(answers) <= len(check.variants):
        raise ValueError(f"judge takes a list of 1 to {len(check.variants)} answers for {check.id}")
    try:
        return _judge(check, answers)
    except Exception:  # the answer's doing, contained to this exercise: see UNJUDGEABLE
        return Feedback(exercise=check.id, title=check.title, verdict="invalid", score=0.0,
                        message=UNJUDGEABLE,
                        variants=[VariantScore("invalid", 0.0) for _ in answers])


def _safe_variant(check: Check, variant: int, answer: Plain) -> Judgement:
    try:
        return judge_variant(check, variant, answer if type(answer) is dict else {"t": "unsupported"})
    except Exception:  # one variant's answer the judge cannot read: that variant is invalid
        return Judgement("invalid", 0.0, message=UNJUDGEABLE)


def _judge(check: Check, answers: list[Plain]) -> Feedback:
    results = [_safe_variant(check, i, a) for i, a in enumerate(answers)]
    public = results[0]
    fb = Feedback(exercise=check.id, title=check.title, verdict="wrong", score=0.0, message="",
                  variants=[VariantScore(r.status, r.score) for r in results])
    if public.status in ("not_answered", "invalid"):
        fb.verdict, fb.message = public.status, public.message
        cause = error_cause(answers[0]) if public.status == "invalid" else None
        if cause is not None:  # torch's error text names the mistake (ERROR_CAUSES)
            fb.misconception, fb.misconception_name, fb.explanation, fb.hint = cause
        return fb
    hit, ambiguous = believed(check, results)
    # a listed wrong answer never equals the right one at the shown values (tests/test_exercises):
    # an answer right there does not follow it, whatever it matches elsewhere
    if public.status == "correct":
        hit, ambiguous = None, False
    if hit is not None and _untrue_story(check.wrong[hit], answers[0], code=check.spec.is_function):
        hit, ambiguous = None, False
    several = _several(check, public) if public.status == "wrong" else []
    if several:  # each wrong entry explained by its own mistake, rather than one story for all
        hit, ambiguous = None, False
    if hit is not None:
        _follow(check, results, hit)
        fb.variants = [VariantScore(r.status, r.score) for r in results]
    fb.score = sum(r.score for r in results) / len(results)
    fb.verdict = "correct" if fb.score == 1.0 else "partial" if fb.score > 0 else "wrong"
    slip = _consistent(results)
    failing = [r for r in results[1:] if r.status != "correct"]
    if slip is None and hit is None and public.status == "correct" and failing and \
            all(r.status == "wrong" for r in failing):  # read and wrong there, not a crash
        slip = "typed_in" if _constant(check, results) else "shown_values_only"
    fb.message = _summary(check, results, hit, slip, answers)
    if ambiguous:
        fb.message += (" At these values two known mistakes give this same number; the values "
                       "that tell them apart were not tried (run the check in the notebook).")
    unmet = next((r.unmet for r in results if r.unmet is not None), None)
    if unmet is not None and hit is None:
        req = check.requires[unmet]
        fb.misconception = "prompt_requirement"
        fb.misconception_name = f"Not yet what the prompt asks: {req.name}"
        fb.explanation, fb.hint = req.explanation, req.hint
    elif hit is not None:
        w = check.wrong[hit]
        names = answer_names(check.kind, check.variants[0].reference)
        fb.misconception, fb.explanation, fb.hint = w.misconception, redact(w.explanation, names), \
            redact(w.hint, names)
        fb.misconception_name = w.name
    elif several:
        names = answer_names(check.kind, check.variants[0].reference)
        fb.misconception, fb.misconception_name = "several_mistakes", SEVERAL
        fb.explanation = " ".join(f"({k}) {redact(check.wrong[i].explanation, names)}"
                                  for k, i in enumerate(several, start=1))
        fb.hint = redact(check.wrong[several[0]].hint, names)
    elif slip is not None:
        fb.misconception = slip
        fb.misconception_name, fb.explanation, fb.hint = generic_text(slip, answers[0], results[0], check)
    return fb


def evidence_of(answer: Plain) -> set[str]:
    """What the answer cell showed (``answers.evidence``); the answer's own dtype counts too."""
    found = answer.get("evidence") if type(answer) is dict else None
    out = {e for e in found if type(e) is str} if type(found) is list else set()
    if type(answer) is dict and answer.get("dtype") in ("float32", "float16", "bfloat16"):
        out.add("float32")
    return out


def generic_text(slip: str, answer: Plain, public: Judgement, check: Check) -> tuple[str, str, str]:
    """A generic slip's name, explanation and hint: what the numbers show, plus a cause only
    where the answer cell shows its evidence (``ON_EVIDENCE``), and for "rounded" where the
    digits part."""
    name, why, hint = GENERIC[slip]
    found = evidence_of(answer)
    for (s, e), (other, more_why, more_hint) in ON_EVIDENCE.items():
        if s == slip and e in found:
            name = other or name
            why += more_why
            hint += more_hint
    if slip == "rounded":
        why += _digits_note(check, public)
    return name, why, hint


def _digits_note(check: Check, public: Judgement) -> str:
    """Where the digits part at the shown values: the entry and how many digits agree (never
    the right digits themselves)."""
    got, ref = public.canonical, check.variants[0].reference
    if not (isinstance(got, torch.Tensor) and isinstance(ref, torch.Tensor)) or got.shape != ref.shape:
        return ""
    a, r = got.reshape(-1).double(), ref.reshape(-1).double()
    worst = int(torch.argmax((a - r).abs() / r.abs().clamp_min(1e-300)))
    if not bool(r[worst] != 0):
        return ""
    digits = max(0, int(-torch.log10((a[worst] - r[worst]).abs() / r[worst].abs()).floor()))
    where = f" entry {_index(worst, ref)}" if r.numel() > 1 else ""
    return f" Your{where} agrees with the right value to about {digits} significant digits."


def _index(flat: int, ref: torch.Tensor) -> str:
    return str(tuple(divmod(flat, ref.shape[-1]))) if ref.dim() == 2 else f"[{flat}]"


# x.backward(z), a story about a seed (not x.backward(create_graph=True))
_SEEDED_CALL = re.compile(r"\w\.backward\((?!\w+=)[A-Za-z_]")


SEVERAL = "Several mistakes at once, each explained below"


def _several(check: Check, public: Judgement) -> list[int]:
    """For a table wrong in entries that no one listed mistake accounts for exactly: the listed
    mistakes each of whose own entries (those no other mistake changes, short of one that
    contains it whole) are wrong here exactly as it has them, and whose changes lie within the
    answer's wrong entries, when between them (two at least) they cover every wrong entry; else
    none. Each is then explained, rather than one mistake's story told for all (a fix-it with
    several bugs left)."""
    if not isinstance(check.kind, Table) or not isinstance(public.canonical, dict) or _exact(check, public):
        return []
    ref = check.variants[0].reference
    try:
        wrong_here = {j for j, ok in enumerate(_cells(check.kind, public.canonical, ref)) if not ok}
        changes = {i: ({j for j, ok in enumerate(_cells(check.kind, value, ref)) if not ok},
                       _cells(check.kind, public.canonical, value))
                   for i, value in check.variants[0].wrong}
    except (TypeError, KeyError, RuntimeError):
        return []
    picked: list[int] = []
    covered: set[int] = set()
    for i, (theirs, agree) in changes.items():
        others = set().union(*(t for k, (t, _) in changes.items() if k != i and not theirs < t))
        own = theirs - others
        if own and theirs <= wrong_here and all(agree[j] for j in own) and not theirs <= covered:
            picked.append(i)
            covered |= theirs
    return picked if len(picked) >= 2 and covered == wrong_here else []


def _exact(check: Check, public: Judgement) -> bool:
    """Is the answer exactly a listed mistake here (not only in part)?"""
    values = dict(check.variants[0].wrong)
    return any(i in values and same(check.kind, public.canonical, values[i]) for i in public.matches)


def _untrue_story(wrong: WrongInfo, answer: Plain, *, code: bool = False) -> bool:
    """A listed mistake whose explanation tells a story the answer cell's code contradicts: a
    seeded ``backward`` call, for a cell that calls backward without a seed; or (for an answer
    that is code the student wrote) a ``torch.where``, for code that calls no ``where``. The
    numbers agree, the story does not."""
    found = evidence_of(answer)
    if "backward" in found and "seed" not in found and bool(_SEEDED_CALL.search(wrong.explanation)):
        return True
    read = type(answer) is dict and type(answer.get("evidence")) is list  # the cell was read
    return code and read and "torch.where" in wrong.explanation and "where" not in found


def _follow(check: Check, results: list[Judgement], hit: int) -> None:
    """An answer believed to be the known mistake ``hit`` earns nothing where that mistake
    happens to give the right answer (a region of the values blind to it, declared by its
    exercise: a per-parameter clip below the threshold clips nothing): right there by the
    mistake's luck, not by the answer's reasoning."""
    for i, r in enumerate(results):
        value = dict(check.variants[i].wrong).get(hit)
        if r.status == "correct" and r.read and value is not None and same(check.kind, value, r.canonical):
            results[i] = Judgement("wrong", 0.0, read=True, canonical=r.canonical, wrong=hit, matches=[hit])


def _consistent(results: list[Judgement]) -> str | None:
    """The slip at the shown values, if every other variant where the answer is wrong shows the
    same kind of slip (a factor of 2 here and 3 there is still 'a whole multiple'); a slip at the
    shown values alone can be chance."""
    failing = [r for r in results if r.status != "correct"]
    if not failing:
        return None
    # the shown values first; an answer right there is judged by where it fails
    slip, others = failing[0].slip, [r.slip for r in failing[1:]]
    if slip is None:
        return None
    if all(o == slip for o in others):
        return slip
    family = SLIP_FAMILY.get(slip)
    if family is not None and all(SLIP_FAMILY.get(o) == family for o in others):
        return family
    return None


def _summary(check: Check, results: list[Judgement], hit: int | None, slip: str | None = None,
             answers: list[Plain] = ()) -> str:
    public, hidden = results[0], results[1:]
    unmet = next((r for r in results if r.unmet is not None), None)
    if unmet is not None and not any(r.wrong is not None for r in results):
        name = check.requires[unmet.unmet].name
        value = "The value is right, but" if unmet.right_value else "Not right yet, and"
        return f"{value} the exercise asks for more: {name}."
    if public.status == "correct" and all(r.status == "correct" for r in hidden):
        extra = f" It also holds at {len(hidden)} other set(s) of values." if hidden else ""
        return "Right." + extra
    if public.status == "correct":
        bad = sum(r.status != "correct" for r in hidden)
        msg = f"Right at the shown values, but not at {bad} of {len(hidden)} other set(s) of values."
        if _constant(check, results) and answers and "literal" in evidence_of(answers[0]):
            msg += (" Your answer does not change when the parameters change: it looks typed in. "
                    "Compute it from the parameters in the setup cell instead.")
        elif _constant(check, results):
            msg += (" Your answer does not change when the parameters change, but the right one "
                    "does: compute it from the names the setup cell defines.")
        return msg
    if public.cells:
        shown = ", ".join(public.cells[:6])
        return f"Some entries are not right yet: {shown}."
    if public.status == "wrong" and slip is not None:
        return "Not right yet, and the way it differs says why (below)."
    if public.status == "wrong" and public.wrong is None:
        return _shape_note(check, public) or _what_differs(check, public)
    if public.status == "wrong" and hit is None:
        return ("At the shown values this is what more than one known mistake gives, but at the "
                "other values your answer is none of them. Work it out step by step.")
    if public.status == "wrong":
        return "This is a known mistake."
    return public.message


def _what_differs(check: Check, public: Judgement) -> str:
    """Which entries are wrong and in which direction, never by how much (that would give the
    answer away)."""
    got, ref = public.canonical, check.variants[0].reference
    if isinstance(got, torch.Tensor) and isinstance(ref, torch.Tensor) and got.shape == ref.shape \
            and got.numel() > 1 and bool(ref.isfinite().all() and got.isfinite().all()):
        flat_got, flat_ref = got.reshape(-1), ref.reshape(-1)
        bad = [i for i in range(flat_ref.numel())
               if not numbers_close(flat_got[i:i + 1], flat_ref[i:i + 1], check.kind.rtol, check.kind.atol)]
        if bad and len(bad) < flat_ref.numel():
            where = ", ".join(str(tuple(divmod(i, ref.shape[-1]))) if ref.dim() == 2 else f"[{i}]"
                              for i in bad[:6])
            return (f"{len(bad)} of {flat_ref.numel()} entries are not right yet ({where}); the others "
                    "are. What is different about those?")
    if isinstance(got, torch.Tensor) and isinstance(ref, torch.Tensor) and got.numel() == ref.numel() == 1 \
            and bool(got.isfinite().all() and ref.isfinite().all()):
        side = "too large" if float(got.reshape(())) > float(ref.reshape(())) else "too small"
        return (f"This is not the value PyTorch gives: it is {side}, and it matches none of the usual "
                "mistakes. Work it out step by step, or compute it with torch and compare.")
    return "This is not the value PyTorch gives, and it matches none of the usual mistakes."


def describe_difference(check: Check, variant: int, answer: Plain, at: str = "There") -> str:
    """At a practice variant (public values), the first entry where the answer differs: what
    it gives and what is right, to as many digits as tell them apart. Empty where the reference
    is sealed, not numbers, or the answer is not read there."""
    try:
        result = judge_variant(check, variant, answer)
    except Exception:
        return ""
    got, ref = result.canonical, check.variants[variant].reference
    if not (result.read and isinstance(got, torch.Tensor) and isinstance(ref, torch.Tensor)) \
            or got.shape != ref.shape:
        return ""
    a, r = got.reshape(-1).double(), ref.reshape(-1).double()
    bad = next((i for i in range(r.numel())
                if not numbers_close(a[i:i + 1], r[i:i + 1], check.kind.rtol, check.kind.atol)), None)
    if bad is None:
        return ""
    mine, right = digits(float(a[bad]), float(r[bad]))
    where = f" at entry {_index(bad, ref)}" if r.numel() > 1 else ""
    return f" {at}{where}, your answer gives {mine}; the right value is {right}."


def digits(a: float, b: float) -> tuple[str, str]:
    """``a`` and ``b`` to four significant digits, or as many more (up to 12) as it takes for
    them to read differently."""
    for n in range(4, 13):
        x, y = f"{a:.{n}g}", f"{b:.{n}g}"
        if x != y:
            break
    return ("0" if x in ("-0", "0") else x), ("0" if y in ("-0", "0") else y)


def _shape_note(check: Check, public: Judgement) -> str | None:
    """Kinds may read answers of a slip's shape so they can be diagnosed; say so if undiagnosed."""
    got, ref = public.canonical, check.variants[0].reference
    if isinstance(got, torch.Tensor) and isinstance(ref, torch.Tensor) and got.shape != ref.shape:
        return (f"Your answer has shape {tuple(got.shape)}, but the expected answer has shape "
                f"{tuple(ref.shape)}: count how many numbers it should hold, and why.")
    return None


def _constant(check: Check, results: list[Judgement]) -> bool:
    canon = [r.canonical for r in results]
    if any(c is None for c in canon):
        return False
    return all(same(check.kind, canon[0], c) for c in canon[1:])
