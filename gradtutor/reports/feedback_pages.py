"""Trusted side: ``gradtutor feedback COURSE_DIR``, one HTML page per student and assignment.

Built from the results files and the gradebook, with each exercise's title and the hint of its
diagnosed misconception (redacted by ``store.hint_for``) from the units; never from the notebook
or a reference answer, so a page can show what was judged but cannot leak a hidden value or a
reference answer: it holds the verdict, the grader's message, the diagnosed misconception's name
and its hint, and what the teaching team entered in the formgrader (manual grades, comments) and
the late penalty, as ``nbgrader export`` has them.

Where it goes: ``feedback/<student>/<assignment>/feedback.html``, and into the page nbgrader's
``release_feedback`` hands out, ``<notebook>.html`` (put at the top of nbgrader's own page
when ``nbgrader generate_feedback`` wrote one, or as that page otherwise), with the
submission's ``submission_secret.txt`` beside it, so ``fetch_feedback`` delivers it.

The markup is in ``templates/feedback*.html.j2``, rendered through ``pages`` (autoescaped).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from autograder.feedback import VERDICTS, misconception_line
from gradtutor.course import Course
from gradtutor.key import misconceptions, registry
from gradtutor.records.files import write_atomic
from gradtutor.records.results import ExerciseResult, SubmissionResult
from gradtutor.records.store import hint_for, load_results, reconcile
from gradtutor.records.submissions import submission_secret
from gradtutor.reports import pages

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
    path = page_path(course, result.student, result.assignment)
    write_atomic(path, page(result).encode())
    return _into_nbgraders_pages(course, path.parent, result)


def _into_nbgraders_pages(course: Course, folder: Path, result: SubmissionResult) -> int:
    """Our summary at the top of each ``<notebook>.html`` (nbgrader's page, or ours alone)."""
    notebooks = [p.stem for p in course.autograded_notebooks(result.student, result.assignment)]
    secret = submission_secret(course, result.student, result.assignment)
    if secret is not None:
        write_atomic(folder / "submission_secret.txt", secret.encode())
    for name in notebooks:
        target = folder / f"{name}.html"
        block = BEGIN + pages.render("feedback_block.html.j2", **_view(result)) + END
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
    return pages.render("feedback.html.j2", **_view(result))


def _view(result: SubmissionResult) -> dict[str, Any]:
    """What the templates show of one submission."""
    late = result.penalty or result.seconds_late
    return {
        "title": f"{result.assignment}: feedback for {result.student}",
        "chapter": _chapter_title(result.assignment),
        "student": result.student,
        "score": result.score,
        "max_score": result.max_score,
        "penalty": result.penalty,
        "late": _duration(result.seconds_late or 0) if late else "",
        "total": result.score if result.total is None else result.total,
        "graded_at": "" if result.graded_at is None else str(result.graded_at),
        "reason": result.reason,
        "failed": bool(result.reason) and result.status == "failed",
        "exercises": [_exercise(e) for e in result.exercises],
    }


def _duration(seconds: float) -> str:
    hours, minutes = divmod(round(seconds / 60), 60)
    return f"{hours} h {minutes} min" if hours else f"{minutes} min"


def _exercise(e: ExerciseResult) -> dict[str, Any]:
    """What the templates show of one exercise; a verdict outside the vocabulary (the contract
    also allows "manual") is shown as one that cannot be judged."""
    misconception = e.misconception
    return {
        "verdict": VERDICTS.get(e.verdict, VERDICTS["error"]),
        "title": _exercise_title(e.id),
        "points": e.points,
        "max_points": e.max_points,
        "message": str(e.message or ""),
        "manual": e.manual,
        "auto_points": e.auto_points or 0,
        "extra_credit": e.extra_credit,
        "comment": e.comment,
        "misconception": misconception_line(misconception, misconceptions.name(misconception))
        if misconception else None,
        "hint": hint_for(e.id, misconception) if misconception else None,
    }


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
