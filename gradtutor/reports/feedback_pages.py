"""Trusted side: ``gradtutor feedback COURSE_DIR``: one HTML page per student and assignment.

Built from the results files and the gradebook only (never from the notebook or the exercise's
references), so a page can show what was judged but cannot leak a hidden value or a reference
answer: it holds the verdict, the grader's message, the diagnosed misconception's name and its
hint, and what the teaching team entered in the formgrader (manual grades, comments) and the
late penalty, as ``nbgrader export`` has them.

Where it goes: ``feedback/<student>/<assignment>/feedback.html``, and into the page nbgrader's
``release_feedback`` hands out, ``<notebook>.html`` (put at the top of nbgrader's own page
when ``nbgrader generate_feedback`` wrote one, or as that page otherwise), with the
submission's ``submission_secret.txt`` beside it, so ``fetch_feedback`` delivers it.
"""

from __future__ import annotations

import html
import sys
from pathlib import Path

from autograder.contract import SubmissionResult
from autograder.feedback import VERDICTS
from gradtutor.course import Course
from gradtutor.key import misconceptions, registry
from gradtutor.records.files import write_atomic
from gradtutor.records.store import hint_for, load_results, reconcile
from gradtutor.records.submissions import submission_secret

STYLE = """
body{font-family:system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#1f2328;
line-height:1.5}
h1{font-size:1.5rem;margin-bottom:.2rem} .meta{color:#57606a}
.ex{border-left:6px solid var(--ink);background:var(--paper);padding:.6rem 1rem;margin:1rem 0;
border-radius:4px} .ex h2{font-size:1.05rem;margin:0} .pts{float:right;font-weight:600}
.label{color:var(--ink);font-weight:600} .note{background:#fff8c5;padding:.5rem 1rem;border-radius:4px}
"""


BEGIN, END = "<!-- gradtutor feedback -->", "<!-- /gradtutor feedback -->"


def feedback_cli(*, course_dir: Path) -> int:
    course = Course.at(course_dir)
    results = reconcile(course, load_results(course))
    if not results:
        print(f"gradtutor feedback: no results under {course.results_dir}; run "
              "`gradtutor grade` first.", file=sys.stderr)
        return 1
    merged = sum(write_pages(course, result) for result in results)
    print(f"Wrote {len(results)} feedback page(s) to {course.feedback}"
          f"/<student>/<assignment>/feedback.html, and put them into {merged} page(s) that "
          "`nbgrader release_feedback` hands out.", file=sys.stderr)
    return 0


def page_path(course: Course, student: str, assignment: str) -> Path:
    """Where a submission's own feedback page goes."""
    return course.feedback_dir(student, assignment) / "feedback.html"


def write_pages(course: Course, result: SubmissionResult) -> int:
    """One submission's feedback.html, and our block in each page nbgrader hands out (how many)."""
    path = page_path(course, result["student"], result["assignment"])
    write_atomic(path, page(result).encode())
    return _into_nbgraders_pages(course, path.parent, result)


def _into_nbgraders_pages(course: Course, folder: Path, result: SubmissionResult) -> int:
    """Our summary at the top of each ``<notebook>.html`` (nbgrader's page, or ours alone)."""
    notebooks = [p.stem for p in course.autograded_notebooks(result["student"], result["assignment"])]
    secret = submission_secret(course, result["student"], result["assignment"])
    if secret is not None:
        write_atomic(folder / "submission_secret.txt", secret.encode())
    for name in notebooks:
        target = folder / f"{name}.html"
        block = f"{BEGIN}<style>{STYLE}</style><div class='gradtutor'>{_body(result)}</div>{END}"
        if target.exists():
            text = target.read_text()
            if BEGIN in text and END in text:  # a re-run: replace our block
                text = text[:text.index(BEGIN)] + block + text[text.index(END) + len(END):]
            else:
                at = text.find(">", text.find("<body")) + 1 if "<body" in text else 0
                text = text[:at] + block + text[at:]
        else:
            text = page(result).replace("<body>", f"<body>{BEGIN}", 1).replace("</body>", f"{END}</body>", 1)
        write_atomic(target, text.encode())
    return len(notebooks)


def page(result: SubmissionResult) -> str:
    esc = html.escape
    title = f"{result['assignment']}: feedback for {result['student']}"
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{esc(title)}"
            f"</title><style>{STYLE}</style></head><body>{_body(result)}</body></html>")


def _body(result: SubmissionResult) -> str:
    esc = html.escape
    score = f"score <b>{result['score']:g} / {result['max_score']:g}</b>"
    if result.get("penalty"):
        score += (f" · late by {_duration(result.get('seconds_late', 0))}: penalty "
                  f"−{result['penalty']:g} · total <b>{result.get('total', result['score']):g}</b>")
    elif result.get("seconds_late"):
        score += f" · late by {_duration(result['seconds_late'])} (no penalty)"
    parts = [f"<h1>{esc(_chapter_title(result['assignment']))}</h1>",
             f"<p class='meta'>{esc(result['student'])} · {score} · graded "
             f"{esc(str(result.get('graded_at', '')))}</p>"]
    if result.get("reason"):
        label = "Your notebook could not be graded" if result["status"] == "failed" else "Note"
        parts.append(f"<p class='note'><b>{label}:</b> {esc(result['reason'])}</p>")
    parts += [_exercise(e) for e in result["exercises"]]
    return "\n".join(parts)


def _duration(seconds: float) -> str:
    hours, minutes = divmod(round(seconds / 60), 60)
    return f"{hours} h {minutes} min" if hours else f"{minutes} min"


def _exercise(e: dict) -> str:
    esc = html.escape
    label, ink, paper, mark = VERDICTS.get(e["verdict"], VERDICTS["error"])
    title = _exercise_title(e["id"])
    rows = [f"<div class='ex' style='--ink:{ink};--paper:{paper}'>",
            f"<h2>{esc(title)} <span class='pts'>{e['points']:g} / {e['max_points']:g}</span></h2>",
            f"<div class='label'>{mark} {esc(label)}</div>",
            f"<div>{esc(str(e.get('message') or ''))}</div>"]
    if e.get("manual"):
        rows.append(f"<div><b>Graded by hand:</b> {e['points']:g} (the autograder gave "
                    f"{e.get('auto_points', 0):g})</div>")
    if e.get("extra_credit"):
        rows.append(f"<div><b>Extra credit:</b> +{e['extra_credit']:g}</div>")
    if e.get("comment"):
        rows.append(f"<div><b>Comment from your teacher:</b> {esc(e['comment'])}</div>")
    if e.get("misconception"):
        rows.append(f"<div><b>Likely misconception:</b> {esc(misconceptions.name(e['misconception']))}"
                    "</div>")
        hint = hint_for(e["id"], e["misconception"])
        if hint:
            rows.append(f"<div><b>Hint:</b> {esc(hint)}</div>")
    rows.append("</div>")
    return "\n".join(rows)


def _chapter_title(slug: str) -> str:
    for ch in registry.chapters():
        if ch.slug == slug and ch.lesson.exists():
            return ch.title
    return slug


def _exercise_title(exercise_id: str) -> str:
    try:
        return registry.get(exercise_id).title
    except Exception:  # an id the course no longer has: show it as it is
        return exercise_id
