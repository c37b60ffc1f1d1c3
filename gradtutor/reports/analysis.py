"""Trusted side: what the class report adds after a deadline, from the stored answers and the units.

The wrong answers no unit explains yet, item analysis, and each student's misconceptions across
chapters. It reads the stored answers (validated by ``store.load_results``) and the exercise
units; the report (``report.py``) shows what it finds.

* **Unexplained wrong answers**: per exercise, the wrong answers (at the shown values) that
  ``MIN_SHARED`` or more students gave and that no listed ``Wrong`` explains, grouped by the
  unit's own tolerance, with the generic slip each matches (``judge.GENERIC``) and a
  ready-to-paste ``Wrong(...)`` entry: where the slip says how the number arises, the entry
  computes it from the unit's reference; otherwise it carries the value seen and leaves the
  formula to the instructor (a number at the shown values is not yet a mechanism).
* **Item analysis**: per exercise, difficulty (mean share of its points), discrimination (the
  point-biserial correlation, Pearson's r on partial credit, between the exercise's score and
  the rest of the same assignment) and the verdicts.
* **Misconceptions per student**: each misconception a student showed, with the chapters it
  showed in (one seen in two chapters is a pattern, not a slip).
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

import torch

from autograder import checkdata
from autograder.judge import GENERIC, same
from autograder.kinds import Invalid, Tensor
from autograder.plain import plain_source
from gradtutor.key import registry
from gradtutor.key.answer_key import reference
from gradtutor.records.results import SubmissionResult
from gradtutor.reports import charts

MIN_SHARED = 2
REVIEW_BELOW = 0.2  # discrimination under this: the exercise does not tell strong from weak


# ---------------------------------------------------------------- unexplained wrong answers


@dataclass
class Unexplained:
    exercise: str
    assignment: str
    answer: Any  # canonical value at the shown values
    plain: dict
    students: list[str] = field(default_factory=list)
    slip: str | None = None
    entry: str = ""


def unexplained(results: list[SubmissionResult], min_shared: int = MIN_SHARED) -> list[Unexplained]:
    """Shared wrong answers no listed ``Wrong`` explains: exercises in the course's order, and
    within one exercise the answer most students gave first."""
    groups: dict[str, list[Unexplained]] = defaultdict(list)
    for r in results:
        if r.status != "graded":
            continue
        for e in r.exercises:
            answers = e.answers
            if e.verdict != "wrong" or not answers or \
                    (e.misconception is not None and e.misconception not in GENERIC):
                continue
            try:
                check = checkdata.get(e.id)
                canon = check.kind.canonical(answers[0])
            except (KeyError, Invalid, TypeError, ValueError):
                continue
            found = next((g for g in groups[e.id] if same(check.kind, g.answer, canon)), None)
            if found is None:
                found = Unexplained(e.id, r.assignment, canon, answers[0], slip=e.misconception)
                groups[e.id].append(found)
            found.students.append(r.student)
    out = [g for gs in groups.values() for g in gs if len(set(g.students)) >= min_shared]
    for g in out:
        g.students = sorted(set(g.students))
        g.entry = wrong_entry(registry.get(g.exercise), g)
    order = {ex.id: i for i, ex in enumerate(registry.all_exercises())}
    return sorted(out, key=lambda g: (order.get(g.exercise, len(order)), -len(g.students)))


def wrong_entry(ex: Any, g: Unexplained) -> str:
    """A ``Wrong(...)`` to paste into the unit's ``wrong=(...)``."""
    names = list(ex.params)
    signature = ", ".join(names)
    seen = literal(g.plain)
    at = ", ".join(f"{k}={v!r}" for k, v in ex.params.items())
    ref = getattr(ex.reference, "__name__", "reference")
    ref = ref if ref.isidentifier() else "reference"
    call = f"{ref}({', '.join(f'{n}={n}' for n in names)})"
    if g.slip in GENERIC:
        _, explanation, hint = GENERIC[g.slip]
        value = _slip_formula(g.slip, call, g.answer, ex)
        return (f'Wrong("{g.slip}", lambda {signature}: {value},  # {len(g.students)} students; '
                f"{seen} at {at}\n"
                f"      {explanation!r},\n      {hint!r}),")
    if not isinstance(ex.kind, Tensor):  # a name, a flag or a table: the answer itself
        value = f"{seen},"
    else:
        value = f"...,  # a formula of the parameters that gives {seen} at {at}"
    return (f'Wrong("new_misconception_id",  # {len(g.students)} students\n'
            f"      lambda {signature}: {value}\n"
            '      "The mechanism that produces this answer (never the right answer).",\n'
            '      "A hint that leads to the fix without giving the answer away."),')


def _slip_formula(slip: str, call: str, answer: Any, ex: Any) -> str:
    if slip == "sign_flipped":
        return f"-{call}"
    if slip == "factor_two":
        return f"2 * {call}"
    if slip == "factor_half":
        return f"{call} / 2"
    if slip == "transposed":
        return f"{call}.T"
    if slip == "summed":
        return f"{call}.sum()"
    ratio = _ratio(answer, reference(ex.id, 0))
    if slip == "factor_k":
        return f"{round(ratio)} * {call}"
    return f"{call} / {round(1 / ratio) if ratio else 'k'}"


def _ratio(answer: Any, ref: Any) -> float:
    if not isinstance(answer, torch.Tensor) or not isinstance(ref, torch.Tensor):
        return 0.0
    a, r = answer.reshape(-1).double(), ref.reshape(-1).double()
    nonzero = r != 0
    return float((a[nonzero] / r[nonzero]).mean()) if bool(nonzero.any()) else 0.0


def literal(plain: dict) -> str:
    """The answer as Python source, at most 300 characters; "(a value)" where it has none."""
    try:
        text = plain_source(plain)
    except (ValueError, KeyError, TypeError):
        return "(a value)"
    return text if len(text) <= 300 else text[:297] + "..."


# ---------------------------------------------------------------- item analysis


@dataclass
class Item:
    exercise: str
    assignment: str
    submissions: int
    difficulty: float  # mean share of the points: 1.0 everyone right
    discrimination: float | None  # point-biserial against the rest of the assignment
    verdicts: Counter

    @property
    def flag(self) -> str:
        if self.discrimination is None:
            return "no spread: every student scored the same"
        if self.discrimination < 0:
            return "negative: strong students do worse here; check the key"
        if self.discrimination < REVIEW_BELOW:
            return "low: does not separate strong from weak"
        return ""


def items(results: list[SubmissionResult]) -> list[Item]:
    by_assignment: dict[str, list[SubmissionResult]] = defaultdict(list)
    for r in results:
        if r.status == "graded" and r.exercises:
            by_assignment[r.assignment].append(r)
    order = {ex.id: i for i, ex in enumerate(registry.all_exercises())}
    out = []
    for assignment, rs in sorted(by_assignment.items()):
        ids = sorted({e.id for r in rs for e in r.exercises},
                     key=lambda i: (order.get(i, len(order)), i))
        for eid in ids:
            share, rest, verdicts = [], [], Counter()
            for r in rs:
                mine = [e for e in r.exercises if e.id == eid]
                if not mine:
                    continue
                e = mine[0]
                share.append(e.points / e.max_points if e.max_points else 0.0)
                rest.append(sum(x.points for x in r.exercises if x.id != eid))
                verdicts[e.verdict or "error"] += 1
            out.append(Item(eid, assignment, len(share), statistics.fmean(share) if share else 0.0,
                            _correlation(share, rest), verdicts))
    return out


def _correlation(x: list[float], y: list[float]) -> float | None:
    if len(x) < 3:
        return None
    try:
        return statistics.correlation(x, y)
    except statistics.StatisticsError:  # one of them constant
        return None


def item_chart(found: list[Item]) -> tuple[str, str] | None:
    """Difficulty against discrimination, a point per exercise, exercises at the same point under
    one label (PNG, base64, and its alt text); ``None`` when no exercise has a discrimination."""
    shown = [i for i in found if i.discrimination is not None]
    if not shown:
        return None
    plt = charts.pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    ax.axhspan(-1, REVIEW_BELOW, color="#fff8c5", zorder=0)
    ax.scatter([i.difficulty for i in shown], [i.discrimination for i in shown], color="#0969da",
               zorder=2)
    at: dict[tuple[float, float], list[str]] = defaultdict(list)  # one label per point
    for i in shown:
        at[(round(i.difficulty, 2), round(i.discrimination, 2))].append(i.exercise)
    for (x, y), names in at.items():
        ax.annotate("\n".join(names), (x, y), fontsize=7, xytext=(4, 2), textcoords="offset points",
                    va="top" if len(names) > 1 else "bottom")
    ax.set_xlim(-0.05, 1.05)
    ax.set_ylim(min(-0.2, min(i.discrimination for i in shown) - 0.05), 1.05)
    ax.set_xlabel("difficulty: mean share of the points (1 = everyone right)")
    ax.set_ylabel("discrimination (point-biserial, rest of assignment)")
    ax.set_title(f"Item analysis: shaded = discrimination under {REVIEW_BELOW}")
    image = charts.png(fig, dpi=110)
    low = [i.exercise for i in shown if i.discrimination < REVIEW_BELOW]
    alt = (f"Scatter plot of {len(shown)} exercises, difficulty (x) against discrimination (y). "
           + (f"Under {REVIEW_BELOW}: {', '.join(low)}." if low else
              f"Every exercise discriminates at {REVIEW_BELOW} or more."))
    return image, alt


# ---------------------------------------------------------------- misconceptions per student


def student_misconceptions(results: list[SubmissionResult]) -> dict[str, dict[str, list[str]]]:
    """student -> misconception -> the chapters (assignments) it was seen in; students with a
    misconception seen in several chapters first."""
    seen: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for r in results:
        for e in r.exercises:
            if e.misconception:
                seen[r.student][e.misconception].add(r.assignment)
    out = {st: {m: sorted(a) for m, a in sorted(ms.items(), key=lambda t: (-len(t[1]), t[0]))}
           for st, ms in seen.items()}
    return dict(sorted(out.items(), key=lambda t: (-max(len(a) for a in t[1].values()), t[0])))
