"""Trusted side: the class report, what a class got right, and what to re-teach first.

    gradtutor report COURSE_DIR [--out DIR]

Reads the results the batch grader writes (``COURSE_DIR/gradtutor/results/<assignment>/
<student>.json``) and writes ``report.html`` (self-contained: charts are embedded SVG, the item
analysis PNG, each with alt text; the markup is in ``templates/report*.html.j2``) plus
``exercises.csv``, ``misconceptions.csv``, ``students.csv``, ``submissions.csv``,
``unexplained.csv``, ``items.csv`` and ``student_misconceptions.csv``. Misconceptions are ranked
by how many students show them, then by how often: the top of the list is what to re-teach
first. Outcomes have the words and colours of the runtime's ``VERDICTS``.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from autograder.feedback import VERDICTS
from gradtutor.course import Course
from gradtutor.key import misconceptions, registry
from gradtutor.records import gradebook, sheet, store, term
from gradtutor.records.results import SubmissionResult
from gradtutor.reports import analysis, charts, pages

# the outcomes in the bars' order, as VERDICTS names them ("error" is drawn with "invalid");
# also the outcome columns of exercises.csv and items.csv
BAR_ORDER = ("correct", "partial", "wrong", "invalid", "not_answered", "failed")


# ---------------------------------------------------------------- reading and counting


def load_results(course: Course) -> tuple[list[SubmissionResult], list[str]]:
    """Every results file, and the files that could not be read (never fatal)."""
    unreadable: list[str] = []
    return store.load_results(course, unreadable=unreadable), unreadable


@dataclass
class ExerciseStats:
    id: str
    assignment: str
    max_points: float = 0.0
    outcomes: Counter = field(default_factory=Counter)
    points: float = 0.0
    misconceptions: Counter = field(default_factory=Counter)

    @property
    def submissions(self) -> int:
        return sum(self.outcomes.values())

    @property
    def success_rate(self) -> float:
        return self.outcomes["correct"] / self.submissions if self.submissions else 0.0

    @property
    def mean_score(self) -> float:
        total = self.max_points * self.submissions
        return self.points / total if total else 0.0


@dataclass
class MisconceptionStats:
    id: str
    occurrences: int = 0
    students: set[str] = field(default_factory=set)
    exercises: Counter = field(default_factory=Counter)

    @property
    def name(self) -> str:
        return misconceptions.name(self.id)


@dataclass
class ClassSummary:
    results: list[SubmissionResult]
    students: dict[str, tuple[float, float]]  # student -> (score, max score), all assignments
    exercises: list[ExerciseStats]
    misconceptions: list[MisconceptionStats]  # re-teach first at the top
    failed: list[SubmissionResult]
    missing: list[tuple[str, str]] = field(default_factory=list)  # (student, assignment) not submitted
    items: list[analysis.Item] = field(default_factory=list)  # item analysis per exercise


def summarise(results: list[SubmissionResult], roster: dict[str, list[str]] | None = None) -> ClassSummary:
    """``roster`` (student -> the assignments expected of them) adds those who submitted
    nothing: listed as missing, with 0 of the assignment's points."""
    students: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    exercises: dict[str, ExerciseStats] = {}
    found: dict[str, MisconceptionStats] = {}
    expected = _exercises_per_assignment(results)
    for r in results:
        tally = students[r.student]
        tally[0] += float((r.score if r.total is None else r.total) or 0.0)  # after any late penalty
        tally[1] += float(r.max_score or 0.0)
        seen = set()
        for e in r.exercises:
            stats = exercises.setdefault(e.id, ExerciseStats(e.id, r.assignment))
            stats.max_points = max(stats.max_points, float(e.max_points or 0.0))
            stats.outcomes[e.verdict or "failed"] += 1
            stats.points += float(e.points or 0.0)
            seen.add(e.id)
            if m := e.misconception:
                stats.misconceptions[m] += 1
                ms = found.setdefault(m, MisconceptionStats(m))
                ms.occurrences += 1
                ms.students.add(r.student)
                ms.exercises[e.id] += 1
        # a submission that failed as a whole still counts against each of its exercises
        for eid in expected[r.assignment] - seen:
            stats = exercises.setdefault(eid, ExerciseStats(eid, r.assignment))
            stats.outcomes["failed"] += 1
    handed = {(r.student, r.assignment) for r in results}
    top = {r.assignment: float(r.max_score or 0.0) for r in results}
    missing = sorted((st, a) for st, assignments in (roster or {}).items() for a in assignments
                     if (st, a) not in handed)
    for st, a in missing:
        students[st][1] += top.get(a, 0.0)
    order = {ex.id: i for i, ex in enumerate(registry.all_exercises())}
    return ClassSummary(
        missing=missing,
        results=results,
        students={s: (t[0], t[1]) for s, t in sorted(students.items())},
        exercises=sorted(exercises.values(),
                         key=lambda s: (s.assignment, order.get(s.id, len(order)), s.id)),
        misconceptions=sorted(found.values(),
                              key=lambda m: (-len(m.students), -m.occurrences, m.id)),
        failed=[r for r in results if r.status != "graded"],
        items=analysis.items(results),
    )


def _exercises_per_assignment(results: list[SubmissionResult]) -> dict[str, set[str]]:
    """Exercise ids of each assignment: from graded results, else from the course's chapters."""
    out: dict[str, set[str]] = defaultdict(set)
    for r in results:
        out[r.assignment].update(e.id for e in r.exercises)
    for ch in registry.chapters():
        if ch.slug in out and not out[ch.slug]:
            out[ch.slug].update(ch.exercise_ids())
    return out


# ---------------------------------------------------------------- charts


def score_histogram(summary: ClassSummary) -> tuple[str, str]:
    plt = charts.pyplot()
    percents = [100 * s / m for s, m in summary.students.values() if m]
    fig, ax = plt.subplots(figsize=(6.4, 3.0))
    ax.hist(percents, bins=[i * 10 for i in range(11)], color="#0969da", edgecolor="white")
    ax.set_xlabel("total score (% of points)")
    ax.set_ylabel("students")
    ax.set_xlim(0, 100)
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.set_title("Score distribution")
    if percents:
        alt = (f"Histogram of {len(percents)} students' total scores in 10-point bins: "
               f"median {statistics.median(percents):.0f}%, lowest {min(percents):.0f}%, "
               f"highest {max(percents):.0f}%.")
    else:
        alt = "Histogram of total scores: no graded points yet."
    return charts.svg(fig), alt


def exercise_bars(summary: ClassSummary) -> tuple[str, str]:
    plt = charts.pyplot()
    stats = summary.exercises
    fig, ax = plt.subplots(figsize=(7.5, 0.8 + 0.32 * max(len(stats), 1)))
    labels = [s.id for s in stats]
    left = [0.0] * len(stats)
    for outcome in BAR_ORDER:
        share = [_share(s, outcome) for s in stats]
        if any(share):
            verdict = VERDICTS[outcome]
            ax.barh(labels, share, left=left, color=verdict.ink, label=verdict.label)
            left = [a + b for a, b in zip(left, share, strict=True)]
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of submissions")
    ax.set_title("Outcome per exercise")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12 - 0.3 / max(len(stats), 1)),
              ncol=3, frameon=False)
    worst = min(stats, key=lambda s: s.success_rate, default=None)
    words = [VERDICTS[o].label.lower() for o in BAR_ORDER]
    alt = (f"Stacked bars, one per exercise ({len(stats)}), showing the share of submissions: "
           f"{', '.join(words[:-1])} and {words[-1]}."
           + (f" Lowest success: {worst.id} at {100 * worst.success_rate:.0f}% correct."
              if worst else ""))
    return charts.svg(fig), alt


def _share(s: ExerciseStats, outcome: str) -> float:
    count = s.outcomes[outcome] + (s.outcomes["error"] if outcome == "invalid" else 0)
    return 100 * count / s.submissions if s.submissions else 0.0


def misconception_bars(summary: ClassSummary, top: int = 15) -> tuple[str, str] | None:
    shown = summary.misconceptions[:top]
    if not shown:
        return None
    plt = charts.pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 0.8 + 0.34 * len(shown)))
    ax.barh([_short(m.name) for m in shown], [len(m.students) for m in shown],
            color=VERDICTS["wrong"].ink)
    ax.invert_yaxis()
    ax.set_xlabel("students affected")
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.set_title("Most common misconceptions")
    alt = "Bar chart of the most common misconceptions by students affected: " + "; ".join(
        f"{m.name} ({len(m.students)})" for m in shown) + "."
    return charts.svg(fig), alt


def _short(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


# ---------------------------------------------------------------- CSV


def write_csvs(summary: ClassSummary, out: Path) -> list[Path]:
    paths = [out / "exercises.csv", out / "misconceptions.csv", out / "students.csv",
             out / "submissions.csv"]
    rows: list[list[Any]] = []
    for s in summary.exercises:
        top = s.misconceptions.most_common(1)
        rows.append([s.assignment, s.id, f"{s.max_points:g}", s.submissions,
                     f"{s.success_rate:.3f}", f"{s.mean_score:.3f}", s.outcomes["correct"],
                     s.outcomes["partial"], s.outcomes["wrong"],
                     s.outcomes["invalid"] + s.outcomes["error"], s.outcomes["not_answered"],
                     s.outcomes["failed"], top[0][0] if top else ""])
    sheet.write(paths[0], ["assignment", "exercise", "max_points", "submissions", "success_rate",
                           "mean_score", *BAR_ORDER[:4], "not_answered", "failed",
                           "top_misconception"], rows)
    sheet.write(paths[1], ["rank", "misconception", "name", "students_affected", "occurrences",
                           "exercises", "students"],
                ([rank, m.id, m.name, len(m.students), m.occurrences,
                  " ".join(e for e, _ in m.exercises.most_common()), " ".join(sorted(m.students))]
                 for rank, m in enumerate(summary.misconceptions, 1)))
    by_student: dict[str, list[SubmissionResult]] = defaultdict(list)
    for r in summary.results:
        by_student[r.student].append(r)
    missing: dict[str, list[str]] = defaultdict(list)
    for st, a in summary.missing:
        missing[st].append(a)
    rows = []
    for student, (score, top) in summary.students.items():
        mine = by_student[student]
        rows.append([student, f"{score:g}", f"{top:g}", f"{100 * score / top:.1f}" if top else "",
                     len(mine), len(missing[student]), sum(bool(r.seconds_late) for r in mine),
                     f"{sum(r.penalty or 0.0 for r in mine):g}"])
    sheet.write(paths[2], ["student", "score", "max_score", "percent", "submitted", "not_submitted",
                           "late", "penalty"], rows)
    sheet.write(paths[3], SUBMISSION_COLUMNS, submission_rows(summary.results, summary.missing))
    paths += [out / "unexplained.csv", out / "items.csv", out / "student_misconceptions.csv"]
    sheet.write(paths[4], ["assignment", "exercise", "students", "generic_slip", "answer", "who",
                           "wrong_entry"],
                ([g.assignment, g.exercise, len(g.students), g.slip or "",
                  analysis.literal(g.plain), " ".join(g.students), g.entry]
                 for g in analysis.unexplained(summary.results)))
    sheet.write(paths[5], ["assignment", "exercise", "submissions", "difficulty", "discrimination",
                           *BAR_ORDER[:5], "note"],
                ([i.assignment, i.exercise, i.submissions, round(i.difficulty, 4),
                  "" if i.discrimination is None else round(i.discrimination, 4),
                  *(i.verdicts[v] + (i.verdicts["error"] if v == "invalid" else 0)
                    for v in BAR_ORDER[:5]), i.flag] for i in summary.items))
    sheet.write(paths[6], ["student", "misconception", "name", "chapters", "assignments"],
                ([st, m, misconceptions.name(m), len(a), " ".join(a)]
                 for st, seen in analysis.student_misconceptions(summary.results).items()
                 for m, a in seen.items()))
    return paths


SUBMISSION_COLUMNS = ("student", "assignment", "status", "score", "late_penalty", "total",
                      "max_score", "seconds_late", "late", "graded_by_hand")


def submission_rows(results: list[SubmissionResult], missing: list[tuple[str, str]]) -> list[list[Any]]:
    """One row per student and assignment (``missing``: those not submitted, 0 points)."""
    rows: list[tuple[str, str, SubmissionResult | None]] = [(r.student, r.assignment, r) for r in results]
    rows += [(st, a, None) for st, a in missing]
    out: list[list[Any]] = []
    for student, assignment, r in sorted(rows, key=lambda t: (t[1], t[0])):
        if r is None:
            out.append([student, assignment, "not submitted", 0, 0, 0, "", "", "", ""])
            continue
        out.append([student, assignment, r.status, f"{r.score:g}",
                    f"{r.penalty or 0.0:g}", f"{r.score if r.total is None else r.total:g}",
                    f"{r.max_score:g}", f"{r.seconds_late or 0.0:g}",
                    "yes" if r.seconds_late else "no",
                    sum(bool(e.manual) for e in r.exercises)])
    return out


# ---------------------------------------------------------------- lateness


@dataclass(frozen=True)
class Late:
    """One late submission as the report shows it: the score before and after the penalty."""

    student: str
    assignment: str
    due: str
    late_by: str
    penalty: float
    before: float
    after: float
    max_score: float


@dataclass(frozen=True)
class Term:
    """The course's late policy and due dates (``records.term``), for the report's lateness part."""

    policy: str = ""
    due: dict[str, str] = field(default_factory=dict)  # assignment -> its due date, as words

    @classmethod
    def of(cls, course: Course, assignments: list[str] | None = None) -> Term:
        dates = {a: term.when_text(d) for a, d in gradebook.due_dates(course).items()
                 if not assignments or a in assignments}
        try:
            policy = term.read_policy(course).describe()
        except Exception as e:  # a config the report cannot read: say so, never fail the report
            policy = f"(the late policy could not be read: {type(e).__name__})"
        return cls(policy, dates)


def late_submissions(results: list[SubmissionResult], due: dict[str, str]) -> list[Late]:
    """Every submission the gradebook found late or penalised: by assignment, the latest first."""
    late = [r for r in results if (r.seconds_late or 0) > 0 or (r.penalty or 0) > 0]
    return [Late(r.student, r.assignment, due.get(r.assignment, "not set"),
                 term.duration_text(r.seconds_late or 0.0), float(r.penalty or 0.0), float(r.score),
                 float(r.score if r.total is None else r.total), float(r.max_score))
            for r in sorted(late, key=lambda r: (r.assignment, -(r.seconds_late or 0.0), r.student))]


# ---------------------------------------------------------------- HTML


def _explanation(m: MisconceptionStats) -> str:
    """The mechanism, as written for the exercise where most students showed it."""
    for eid, _ in m.exercises.most_common():
        try:
            ex = registry.get(eid)
        except KeyError:
            continue
        for w in ex.wrong:
            if w.misconception == m.id:
                return w.explanation
    return ""


def _outcome(verdict: str) -> str:
    """An outcome's words; a verdict the vocabulary does not know, as it is."""
    return VERDICTS[verdict].label if verdict in VERDICTS else verdict


def render_html(summary: ClassSummary, course_dir: Path, unreadable: list[str],
                course_term: Term | None = None) -> str:
    """The page (templates/report.html.j2, with report_analysis.html.j2 for analysis.py's part)."""
    course_term = course_term or Term()
    percents = [100 * s / m for s, m in summary.students.values() if m]
    graded = sum(r.status == "graded" for r in summary.results)
    cards = [(str(len(summary.students)), "students"),
             (f"{graded} / {len(summary.results)}", "submissions graded"),
             (f"{statistics.median(percents):.0f}%" if percents else "–", "median score"),
             (str(len(summary.misconceptions)), "misconceptions seen")]
    return pages.render(
        "report.html.j2",
        course_dir=str(course_dir),
        generated=f"{datetime.now(UTC):%Y-%m-%d %H:%M}",
        cards=cards,
        n_students=len(summary.students),
        reteach=[(m, _explanation(m)) for m in summary.misconceptions[:10]],
        misconception_chart=misconception_bars(summary),
        score_chart=score_histogram(summary),
        exercise_chart=exercise_bars(summary),
        exercises=summary.exercises,
        unexplained=analysis.unexplained(summary.results),
        min_shared=analysis.MIN_SHARED,
        items=summary.items,
        item_chart=analysis.item_chart(summary.items),
        review_below=analysis.REVIEW_BELOW,
        per_student=analysis.student_misconceptions(summary.results),
        missing=summary.missing,
        policy=course_term.policy,
        due=course_term.due,
        late=late_submissions(summary.results, course_term.due),
        failed=[(r.student, r.assignment, str(r.reason or "")) for r in summary.failed],
        unreadable=unreadable,
        misconception_name=misconceptions.name,
        literal=analysis.literal,
        outcome=_outcome,
    )


def write_report(course: Course, out: Path | None = None, assignments: list[str] | None = None,
                 *, shown_as: Path | None = None) -> Path | None:
    """Write the report (of these assignments); ``None`` when there is nothing graded.
    ``shown_as``: the course folder as the page names it (default: where it is)."""
    results, unreadable = load_results(course)
    results = store.reconcile(course, [r for r in results
                                       if not assignments or r.assignment in assignments])
    if not results:
        return None
    out = out or course.reports_dir
    out.mkdir(parents=True, exist_ok=True)
    summary = summarise(results, gradebook.roster(course, assignments))
    write_csvs(summary, out)
    page = out / "report.html"
    page.write_text(render_html(summary, shown_as or course.root, unreadable, Term.of(course, assignments)))
    return page


def report_cli(*, course_dir: Path, out: Path | None, assignment: list[str] | None = None) -> int:
    course = Course.at(course_dir)
    page = write_report(course, out, assignment, shown_as=course_dir)
    if page is None:
        print(f"No results under {course.results_dir}: grade the class first "
              f"(gradtutor grade {course_dir}).")
        return 1
    print(f"Wrote {page} (and exercises.csv, misconceptions.csv, students.csv, submissions.csv, "
          "unexplained.csv, items.csv, student_misconceptions.csv beside it).")
    return 0
