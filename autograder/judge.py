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
from autograder.checkdata import Check
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
                "Your numbers agree with the right ones in their first few digits, then differ. "
                "That is what rounding does: float32 arithmetic (7 digits, fewer after subtracting "
                "two close numbers), a number copied with few decimals, or an estimate such as a "
                "finite difference where the exact value was asked.",
                "Compute from the parameters in float64 (plain Python floats are), with the exact "
                "formula rather than an estimate."),
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
    "typed_in": ("Typed in, not computed",
                 "Your answer is the same at every set of values the self-check tried: it was typed "
                 "in, or computed from numbers copied out of the prompt, so it is right only where "
                 "those numbers happen to hold.",
                 "Write the answer with the names the setup cell defines, so that it follows them "
                 "when they change."),
    "shown_values_only": ("Right at the shown values only",
                          "Your answer changes with the parameters, but agrees with the right one only "
                          "at the values shown in the notebook: a formula that coincides with the right "
                          "one at that point, or a number from the prompt written where a parameter "
                          "belongs.",
                          "Work your formula at a second set of values by hand (or with torch) and "
                          "compare; look for a number in your cell that should be a parameter."),
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
    if not (ref.isfinite().all() and answer.isfinite().all()):
        return None
    near = lambda a, b: a.shape == b.shape and numbers_close(a, b, kind.rtol, kind.atol)
    if ref.numel() > 1 and answer.numel() == 1 and near(answer.reshape(()), ref.sum()):
        return "summed"
    if ref.dim() >= 2 and any(near(answer, ref.sum(d)) for d in range(ref.dim())):
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


def redact(text: str, names: set[str]) -> str:
    for name in sorted(names, key=len, reverse=True):
        text = re.sub(rf"(?<![\w.]){re.escape(name)}(?!\w)", "(the name you are asked for)", text)
    return text


def missing_message(check: Check, answer: Plain) -> str:
    template = MISSING.get(str(answer.get("why")), MISSING["no_variable"])
    return template.format(answer=check.spec.answer, error=answer.get("error", "an error"))


def error_message(answer: Plain) -> str:
    text = answer.get("text")  # only in the student's own kernel; the sandbox sends no text
    return f"Your code raised {answer.get('v', 'an error')}" + (f": {text}" if text else ".")


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
        return fb
    hit, ambiguous = believed(check, results)
    # a listed wrong answer never equals the right one at the shown values (tests/test_exercises):
    # an answer right there does not follow it, whatever it matches elsewhere
    if public.status == "correct":
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
    fb.message = _summary(check, results, hit, slip)
    if ambiguous:
        fb.message += (" At these values two known mistakes give this same number; the values "
                       "that tell them apart were not tried (run the check in the notebook).")
    unmet = next((r.unmet for r in results if r.unmet is not None), None)
    if unmet is not None and hit is None:
        req = check.requires[unmet]
        fb.misconception, fb.misconception_name = "prompt_requirement", f"The prompt asks for {req.name}"
        fb.explanation, fb.hint = req.explanation, req.hint
    elif hit is not None:
        w = check.wrong[hit]
        names = answer_names(check.kind, check.variants[0].reference)
        fb.misconception, fb.explanation, fb.hint = w.misconception, redact(w.explanation, names), \
            redact(w.hint, names)
        fb.misconception_name = w.name
    elif slip is not None:
        fb.misconception = slip
        fb.misconception_name, fb.explanation, fb.hint = GENERIC[slip]
    return fb


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


def _summary(check: Check, results: list[Judgement], hit: int | None, slip: str | None = None) -> str:
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
        if _constant(check, results):
            msg += (" Your answer does not change when the parameters change: it looks typed in. "
                    "Compute it from the parameters in the setup cell instead.")
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
