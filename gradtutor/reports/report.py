"""Trusted side: the class report: what a class got right, and what to re-teach first.

    gradtutor report COURSE_DIR [--out DIR]

Reads the results the batch grader writes (``COURSE_DIR/gradtutor/results/<assignment>/
<student>.json``, as the gradebook has them now: ``store.reconcile``) and writes
``report.html`` (self-contained: charts are embedded SVG with alt text) plus CSV files
(``exercises.csv``, ``misconceptions.csv``, ``students.csv`` and more, listed at the end of the
page). Misconceptions are ranked by how many students show them, then by how often: the top of
the list is what to re-teach first.
"""

from __future__ import annotations

import base64
import html
import io
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from autograder.contract import SubmissionResult
from gradtutor.course import Course
from gradtutor.key import misconceptions, registry
from gradtutor.records import gradebook, sheet, store
from gradtutor.reports import analysis

# verdict -> (label, colour); "failed" is a submission the grader could not read or run
OUTCOMES = {
    "correct": ("correct", "#1a7f37"),
    "partial": ("partly right", "#d4a72c"),
    "wrong": ("wrong", "#cf222e"),
    "invalid": ("cannot be judged", "#8250df"),
    "error": ("cannot be judged", "#8250df"),
    "not_answered": ("not answered", "#8c959f"),
    "failed": ("submission failed", "#24292f"),
}
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
    results: list[dict]
    students: dict[str, tuple[float, float]]  # student -> (score, max score), all assignments
    exercises: list[ExerciseStats]
    misconceptions: list[MisconceptionStats]  # re-teach first at the top
    failed: list[dict]
    missing: list[tuple[str, str]] = field(default_factory=list)  # (student, assignment) not submitted
    items: list[analysis.Item] = field(default_factory=list)  # item analysis per exercise


def summarise(results: list[dict], roster: dict[str, list[str]] | None = None) -> ClassSummary:
    """``roster`` (student -> the assignments expected of them) adds those who submitted
    nothing: listed as missing, with 0 of the assignment's points."""
    students: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    exercises: dict[str, ExerciseStats] = {}
    found: dict[str, MisconceptionStats] = {}
    expected = _exercises_per_assignment(results)
    for r in results:
        tally = students[r["student"]]
        tally[0] += float(r.get("total", r.get("score")) or 0.0)  # after any late penalty
        tally[1] += float(r.get("max_score") or 0.0)
        seen = set()
        for e in r["exercises"]:
            stats = exercises.setdefault(e["id"], ExerciseStats(e["id"], r["assignment"]))
            stats.max_points = max(stats.max_points, float(e.get("max_points") or 0.0))
            stats.outcomes[e.get("verdict") or "failed"] += 1
            stats.points += float(e.get("points") or 0.0)
            seen.add(e["id"])
            if m := e.get("misconception"):
                stats.misconceptions[m] += 1
                ms = found.setdefault(m, MisconceptionStats(m))
                ms.occurrences += 1
                ms.students.add(r["student"])
                ms.exercises[e["id"]] += 1
        # a submission that failed as a whole still counts against each of its exercises
        for eid in expected[r["assignment"]] - seen:
            stats = exercises.setdefault(eid, ExerciseStats(eid, r["assignment"]))
            stats.outcomes["failed"] += 1
    handed = {(r["student"], r["assignment"]) for r in results}
    top = {r["assignment"]: float(r.get("max_score") or 0.0) for r in results}
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
        failed=[r for r in results if r.get("status") != "graded"],
        items=analysis.items(results),
    )


def _exercises_per_assignment(results: list[dict]) -> dict[str, set[str]]:
    """Exercise ids of each assignment: from graded results, else from the course's chapters."""
    out: dict[str, set[str]] = defaultdict(set)
    for r in results:
        out[r["assignment"]].update(e["id"] for e in r["exercises"])
    for ch in registry.chapters():
        if ch.slug in out and not out[ch.slug]:
            out[ch.slug].update(ch.exercise_ids())
    return out


# ---------------------------------------------------------------- charts


def _svg(fig: Any) -> str:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "gradtutor"  # same data, same file
    return plt


def score_histogram(summary: ClassSummary) -> tuple[str, str]:
    plt = _pyplot()
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
    return _svg(fig), alt


def exercise_bars(summary: ClassSummary) -> tuple[str, str]:
    plt = _pyplot()
    stats = summary.exercises
    fig, ax = plt.subplots(figsize=(7.5, 0.8 + 0.32 * max(len(stats), 1)))
    labels = [s.id for s in stats]
    left = [0.0] * len(stats)
    for outcome in BAR_ORDER:
        share = [_share(s, outcome) for s in stats]
        if any(share):
            label, colour = OUTCOMES[outcome]
            ax.barh(labels, share, left=left, color=colour, label=label)
            left = [a + b for a, b in zip(left, share, strict=True)]
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of submissions")
    ax.set_title("Outcome per exercise")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12 - 0.3 / max(len(stats), 1)),
              ncol=3, frameon=False)
    worst = min(stats, key=lambda s: s.success_rate, default=None)
    alt = (f"Stacked bars, one per exercise ({len(stats)}), showing the share of submissions "
           "correct, partly right, wrong, not judgeable, not answered and failed."
           + (f" Lowest success: {worst.id} at {100 * worst.success_rate:.0f}% correct."
              if worst else ""))
    return _svg(fig), alt


def _share(s: ExerciseStats, outcome: str) -> float:
    count = s.outcomes[outcome] + (s.outcomes["error"] if outcome == "invalid" else 0)
    return 100 * count / s.submissions if s.submissions else 0.0


def misconception_bars(summary: ClassSummary, top: int = 15) -> tuple[str, str] | None:
    shown = summary.misconceptions[:top]
    if not shown:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 0.8 + 0.34 * len(shown)))
    ax.barh([_short(m.name) for m in shown], [len(m.students) for m in shown], color="#cf222e")
    ax.invert_yaxis()
    ax.set_xlabel("students affected")
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.set_title("Most common misconceptions")
    alt = "Bar chart of the most common misconceptions by students affected: " + "; ".join(
        f"{m.name} ({len(m.students)})" for m in shown) + "."
    return _svg(fig), alt


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
    by_student: dict[str, list[dict]] = defaultdict(list)
    for r in summary.results:
        by_student[r["student"]].append(r)
    missing: dict[str, list[str]] = defaultdict(list)
    for st, a in summary.missing:
        missing[st].append(a)
    rows = []
    for student, (score, top) in summary.students.items():
        mine = by_student[student]
        rows.append([student, f"{score:g}", f"{top:g}", f"{100 * score / top:.1f}" if top else "",
                     len(mine), len(missing[student]), sum(bool(r.get("seconds_late")) for r in mine),
                     f"{sum(r.get('penalty', 0.0) for r in mine):g}"])
    sheet.write(paths[2], ["student", "score", "max_score", "percent", "submitted", "not_submitted",
                           "late", "penalty"], rows)
    sheet.write(paths[3], SUBMISSION_COLUMNS, submission_rows(summary.results, summary.missing))
    paths += [out / "unexplained.csv", out / "items.csv", out / "student_misconceptions.csv"]
    sheet.write(paths[4], ["assignment", "exercise", "students", "generic_slip", "answer", "who",
                           "wrong_entry"],
                ([g.assignment, g.exercise, len(g.students), g.slip or "",
                  analysis._literal(g.plain), " ".join(g.students), g.entry]
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


def submission_rows(results: list[dict], missing: list[tuple[str, str]]) -> list[list[Any]]:
    """One row per student and assignment (``missing``: those not submitted, 0 points)."""
    rows: list[tuple[str, str, dict | None]] = [(r["student"], r["assignment"], r) for r in results]
    rows += [(st, a, None) for st, a in missing]
    out: list[list[Any]] = []
    for student, assignment, r in sorted(rows, key=lambda t: (t[1], t[0])):
        if r is None:
            out.append([student, assignment, "not submitted", 0, 0, 0, "", "", "", ""])
            continue
        out.append([student, assignment, r.get("status", "graded"), f"{r['score']:g}",
                    f"{r.get('penalty', 0.0):g}", f"{r.get('total', r['score']):g}",
                    f"{r['max_score']:g}", f"{r.get('seconds_late', 0.0):g}",
                    "yes" if r.get("seconds_late") else "no",
                    sum(bool(e.get("manual")) for e in r["exercises"])])
    return out


# ---------------------------------------------------------------- HTML

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;max-width:980px;margin:2em auto;
padding:0 1em;color:#1f2328;line-height:1.5}
h1{margin-bottom:.2em} .sub{color:#57606a;margin-top:0}
table{border-collapse:collapse;width:100%;margin:1em 0;font-size:.93em}
th,td{border-bottom:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa} td.n{text-align:right;font-variant-numeric:tabular-nums}
.cards{display:flex;gap:1em;flex-wrap:wrap}
.card{border:1px solid #d0d7de;border-radius:6px;padding:.6em 1em;min-width:9em}
.card b{display:block;font-size:1.5em}
ol.reteach li{margin-bottom:.8em} .why{color:#57606a}
img{max-width:100%}
"""


def _card(value: str, label: str) -> str:
    return f'<div class="card"><b>{html.escape(value)}</b>{html.escape(label)}</div>'


def _img(chart: tuple[str, str] | None, media: str = "image/svg+xml") -> str:
    if chart is None:
        return ""
    data, alt = chart
    return f'<figure><img src="data:{media};base64,{data}" alt="{html.escape(alt)}"></figure>'


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


def render_html(summary: ClassSummary, course_dir: Path, unreadable: list[str]) -> str:
    esc = html.escape
    n_students = len(summary.students)
    graded = sum(r.get("status") == "graded" for r in summary.results)
    percents = [100 * s / m for s, m in summary.students.values() if m]
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        "<title>Class report · gradtutor</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>Class report</h1>",
        f"<p class='sub'>{esc(str(course_dir))} · generated "
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC</p>",
        "<div class='cards'>",
        _card(str(n_students), "students"),
        _card(f"{graded} / {len(summary.results)}", "submissions graded"),
        _card(f"{statistics.median(percents):.0f}%" if percents else "–", "median score"),
        _card(str(len(summary.misconceptions)), "misconceptions seen"),
        "</div>",
        "<h2>Re-teach first</h2>",
    ]
    if summary.misconceptions:
        parts.append("<p>Ranked by the number of students who showed the misconception, then by "
                     "how often it appeared.</p><ol class='reteach'>")
        for m in summary.misconceptions[:10]:
            where = ", ".join(f"{e} ({c})" for e, c in m.exercises.most_common())
            parts.append(
                f"<li><b>{esc(m.name)}</b> <code>{esc(m.id)}</code>: {len(m.students)} of "
                f"{n_students} students, {m.occurrences} answers; seen in {esc(where)}."
                f"<div class='why'>{esc(_explanation(m))}</div>"
                f"<details><summary>Students affected</summary>"
                f"{esc(', '.join(sorted(m.students)))}</details></li>")
        parts.append("</ol>")
        parts.append(_img(misconception_bars(summary)))
    else:
        parts.append("<p>No known misconception was diagnosed in any answer.</p>")
    parts += ["<h2>Score distribution</h2>", _img(score_histogram(summary)),
              "<h2>Success per exercise</h2>", _img(exercise_bars(summary)),
              _exercise_table(summary)]
    parts += _analysis_html(summary)
    if summary.missing:
        parts.append("<h2>Not submitted</h2><table><tr><th>student</th><th>assignment</th></tr>")
        parts += [f"<tr><td>{esc(st)}</td><td>{esc(a)}</td></tr>" for st, a in summary.missing]
        parts.append("</table>")
    if summary.failed or unreadable:
        parts.append("<h2>Submissions that could not be graded</h2><table><tr><th>student</th>"
                     "<th>assignment</th><th>reason</th></tr>")
        for r in summary.failed:
            parts.append(f"<tr><td>{esc(r['student'])}</td><td>{esc(r['assignment'])}</td>"
                         f"<td>{esc(str(r.get('reason') or ''))}</td></tr>")
        for path in unreadable:
            parts.append(f"<tr><td colspan=2>{esc(path)}</td><td>unreadable results file</td></tr>")
        parts.append("</table>")
    parts.append("<p class='sub'>Also written: exercises.csv, misconceptions.csv, students.csv, "
                 "submissions.csv, unexplained.csv, items.csv, student_misconceptions.csv."
                 "</p></body></html>")
    return "\n".join(parts)


def _analysis_html(summary: ClassSummary) -> list[str]:
    """Unexplained wrong answers, item analysis, misconceptions per student."""
    esc = html.escape
    parts = ["<h2>Unexplained wrong answers</h2>"]
    found = analysis.unexplained(summary.results)
    if found:
        parts.append(f"<p>Wrong answers that {analysis.MIN_SHARED} or more students gave and no "
                     "listed wrong answer explains: the next entries for the units. Each comes "
                     "with a <code>Wrong(...)</code> to paste into the unit's <code>wrong=(...)"
                     "</code>; then <code>gradtutor regrade</code> diagnoses them.</p>")
        for g in found:
            slip = (f"; matches the generic slip <b>{esc(misconceptions.name(g.slip))}</b>"
                    if g.slip else "; matches no generic slip")
            parts.append(
                f"<h3><code>{esc(g.exercise)}</code> ({esc(g.assignment)}): {len(g.students)} "
                f"students{slip}</h3><p>Their answer at the shown values: "
                f"<code>{esc(analysis._literal(g.plain))}</code></p>"
                f"<details><summary>Students</summary>{esc(', '.join(g.students))}</details>"
                f"<pre>{esc(g.entry)}</pre>")
    else:
        parts.append(f"<p>No wrong answer shared by {analysis.MIN_SHARED} or more students is "
                     "left unexplained.</p>")
    parts += ["<h2>Item analysis</h2>",
              "<p>Difficulty: the mean share of the exercise's points (1 = everyone right). "
              "Discrimination: the point-biserial correlation between the exercise's score and "
              "the rest of the assignment; under "
              f"{analysis.REVIEW_BELOW} the exercise does not tell strong from weak students.</p>",
              _img(analysis.item_chart(summary.items), "image/png"),
              "<table><tr><th>assignment</th><th>exercise</th><th>submissions</th>"
              "<th>difficulty</th><th>discrimination</th><th>verdicts</th><th>note</th></tr>"]
    for i in summary.items:
        verdicts = ", ".join(f"{OUTCOMES.get(v, (v,))[0]} {n}" for v, n in i.verdicts.most_common())
        disc = "–" if i.discrimination is None else f"{i.discrimination:.2f}"
        parts.append(f"<tr><td>{esc(i.assignment)}</td><td><code>{esc(i.exercise)}</code></td>"
                     f"<td class='n'>{i.submissions}</td><td class='n'>{i.difficulty:.2f}</td>"
                     f"<td class='n'>{disc}</td><td>{esc(verdicts)}</td><td>{esc(i.flag)}</td></tr>")
    parts.append("</table>")
    per_student = analysis.student_misconceptions(summary.results)
    parts.append("<h2>Misconceptions per student</h2>")
    if per_student:
        parts.append("<p>Each misconception a student showed, with the chapters it showed in; "
                     "students with one seen in several chapters first.</p><table><tr>"
                     "<th>student</th><th>misconceptions (chapters)</th></tr>")
        for student, seen in per_student.items():
            cells = "; ".join(f"{misconceptions.name(m)} ({', '.join(a)})" for m, a in seen.items())
            parts.append(f"<tr><td>{esc(student)}</td><td>{esc(cells)}</td></tr>")
        parts.append("</table>")
    else:
        parts.append("<p>No student showed a known misconception.</p>")
    return parts


def _exercise_table(summary: ClassSummary) -> str:
    esc = html.escape
    rows = ["<table><tr><th>assignment</th><th>exercise</th><th>correct</th><th>mean score</th>"
            "<th>submissions</th><th>most common misconception</th></tr>"]
    for s in summary.exercises:
        top = s.misconceptions.most_common(1)
        mis = f"{misconceptions.name(top[0][0])} ({top[0][1]})" if top else ""
        rows.append(f"<tr><td>{esc(s.assignment)}</td><td><code>{esc(s.id)}</code></td>"
                    f"<td class='n'>{100 * s.success_rate:.0f}%</td>"
                    f"<td class='n'>{100 * s.mean_score:.0f}%</td>"
                    f"<td class='n'>{s.submissions}</td><td>{esc(mis)}</td></tr>")
    rows.append("</table>")
    return "\n".join(rows)


def write_report(course: Course, out: Path | None = None, assignments: list[str] | None = None,
                 *, shown_as: Path | None = None) -> Path | None:
    """Write the report (of these assignments); ``None`` when there is nothing graded.
    ``shown_as``: the course folder as the page names it (default: where it is)."""
    results, unreadable = load_results(course)
    results = store.reconcile(course, [r for r in results
                                       if not assignments or r["assignment"] in assignments])
    if not results:
        return None
    out = out or course.reports_dir
    out.mkdir(parents=True, exist_ok=True)
    summary = summarise(results, gradebook.roster(course, assignments))
    write_csvs(summary, out)
    page = out / "report.html"
    page.write_text(render_html(summary, shown_as or course.root, unreadable))
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
