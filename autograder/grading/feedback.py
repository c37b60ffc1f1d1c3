"""``gradtutor feedback COURSE_DIR``: one HTML page per student and assignment.

Built from the results files only (never from the notebook or the exercise's references), so a
page can show what was judged but cannot leak a hidden value or a reference answer: it holds
the verdict, the grader's message, the diagnosed misconception's name and its hint.
"""

from __future__ import annotations

import html
import sys
from pathlib import Path

from .. import misconceptions, registry
from ..contract import SubmissionResult
from ..feedback import VERDICTS
from .store import load_results, write_atomic

STYLE = """
body{font-family:system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#1f2328;
line-height:1.5}
h1{font-size:1.5rem;margin-bottom:.2rem} .meta{color:#57606a}
.ex{border-left:6px solid var(--ink);background:var(--paper);padding:.6rem 1rem;margin:1rem 0;
border-radius:4px} .ex h2{font-size:1.05rem;margin:0} .pts{float:right;font-weight:600}
.label{color:var(--ink);font-weight:600} .note{background:#fff8c5;padding:.5rem 1rem;border-radius:4px}
"""


def feedback_cli(*, course_dir: Path) -> int:
    results = load_results(course_dir)
    if not results:
        print(f"gradtutor feedback: no results under {course_dir}/gradtutor/results; run "
              "`gradtutor grade` first.", file=sys.stderr)
        return 1
    for result in results:
        path = course_dir / "feedback" / result["student"] / result["assignment"] / "feedback.html"
        write_atomic(path, page(result).encode())
    print(f"Wrote {len(results)} feedback page(s) to {course_dir / 'feedback'}"
          "/<student>/<assignment>/feedback.html.", file=sys.stderr)
    return 0


def page(result: SubmissionResult) -> str:
    esc = html.escape
    title = f"{result['assignment']}: feedback for {result['student']}"
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{esc(title)}"
             f"</title><style>{STYLE}</style></head><body>",
             f"<h1>{esc(_chapter_title(result['assignment']))}</h1>",
             f"<p class='meta'>{esc(result['student'])} · score <b>{result['score']:g} / "
             f"{result['max_score']:g}</b> · graded {esc(str(result.get('graded_at', '')))}</p>"]
    if result.get("reason"):
        label = "Your notebook could not be graded" if result["status"] == "failed" else "Note"
        parts.append(f"<p class='note'><b>{label}:</b> {esc(result['reason'])}</p>")
    parts += [_exercise(e) for e in result["exercises"]]
    parts.append("</body></html>")
    return "\n".join(parts)


def _exercise(e: dict) -> str:
    esc = html.escape
    label, ink, paper, mark = VERDICTS.get(e["verdict"], VERDICTS["error"])
    title = _exercise_title(e["id"])
    rows = [f"<div class='ex' style='--ink:{ink};--paper:{paper}'>",
            f"<h2>{esc(title)} <span class='pts'>{e['points']:g} / {e['max_points']:g}</span></h2>",
            f"<div class='label'>{mark} {esc(label)}</div>",
            f"<div>{esc(str(e.get('message') or ''))}</div>"]
    if e.get("misconception"):
        rows.append(f"<div><b>Likely misconception:</b> {esc(misconceptions.name(e['misconception']))}"
                    "</div>")
        hint = _hint(e["id"], e["misconception"])
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


def _hint(exercise_id: str, misconception: str) -> str | None:
    """The hint of the exercise's wrong answer with this misconception (hints never give the
    answer away; explanations may quote numbers, so they stay in the live self-check)."""
    try:
        wrongs = registry.get(exercise_id).wrong
    except Exception:
        return None
    return next((w.hint for w in wrongs if w.misconception == misconception), None)
