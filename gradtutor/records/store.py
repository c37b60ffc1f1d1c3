"""Where grades go: results files, the nbgrader gradebook, autograded notebooks, the CSV.

Every file is written to a temporary name and renamed, so a SIGKILL leaves either the old
file or the new one. The gradebook is SQLite, written through nbgrader's own API, whose
``update_or_create_*`` calls commit on their own: a submission's rows take up to four commits
(student, submission, scores, late penalty). A kill between them leaves a submission whose
results file is not written yet, so the next run grades it again and overwrites those rows
(``tests/test_hostile.py::test_sigkill_at_random_moments_loses_nothing``). The results file is
written last and is what makes a submission count as graded on a re-run.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nbformat.notebooknode import NotebookNode, from_dict
from nbformat.v4 import nbjson

from autograder.contract import SubmissionResult, read_result
from gradtutor.grading.submission import Cell, Submission, read_small
from gradtutor.nbcells import grade_id

CSV_COLUMNS = ("student", "assignment", "exercise", "points", "max_points", "verdict",
               "misconception", "graded_by")


def results_dir(course_dir: Path) -> Path:
    return course_dir / "gradtutor" / "results"


def results_path(course_dir: Path, assignment: str, student: str) -> Path:
    return results_dir(course_dir) / assignment / f"{student}.json"


def write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; the course folder itself is kept private
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_result(course_dir: Path, result: SubmissionResult) -> Path:
    path = results_path(course_dir, result["assignment"], result["student"])
    write_atomic(path, json.dumps(result, indent=1).encode())
    return path


def load_results(course_dir: Path, assignments: list[str] | None = None, *,
                 unreadable: list[str] | None = None) -> list[SubmissionResult]:
    """Every results file (of these assignments); the paths of any that are not results go to
    ``unreadable`` (a stray file is not a grade, and never fatal)."""
    out = []
    for p in sorted(results_dir(course_dir).glob("*/*.json")):
        if assignments and p.parent.name not in assignments:
            continue
        try:
            result = read_result(json.loads(p.read_text()), student=p.stem, assignment=p.parent.name)
        except (OSError, ValueError, RecursionError):
            result = None
        if result is not None:
            out.append(result)
        elif unreadable is not None:
            unreadable.append(str(p))
    return out


def write_csv(path: Path, results: list[dict]) -> None:
    from gradtutor.records import sheet

    rows = ([r["student"], r["assignment"], e["id"], f"{e['points']:g}", f"{e['max_points']:g}",
             e["verdict"], e["misconception"] or "", "hand" if e.get("manual") else "auto"]
            for r in sorted(results, key=lambda r: (r["assignment"], r["student"]))
            for e in r["exercises"])
    sheet.write(path, CSV_COLUMNS, rows)


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


# --- the nbgrader gradebook -------------------------------------------------------------------

def db_url(course_dir: Path) -> str:
    return f"sqlite:///{course_dir.resolve() / 'gradebook.db'}"


def submitted_at(course_dir: Path, student: str, assignment: str) -> datetime | None:
    """nbgrader's own rule: the submission folder's timestamp.txt, if there is one (read as any
    file from submitted/ is: no link followed, a regular file, a few bytes at most)."""
    from nbgrader.utils import parse_utc

    text = read_small(course_dir, ("submitted", student, assignment, "timestamp.txt"))
    try:
        return parse_utc(text.strip()) if text is not None else None
    except (ValueError, TypeError, OverflowError):
        return None


def nbgrader_config(course_dir: Path) -> Any:
    """nbgrader's configuration as ``nbgrader autograde`` run there would see it: the Jupyter
    config folders, then ``nbgrader_config.py`` of the working directory, then the course's."""
    from jupyter_core.paths import jupyter_config_path
    from traitlets.config import Config, PyFileConfigLoader

    config = Config()
    folders = [*reversed(jupyter_config_path()), str(Path.cwd()), str(course_dir)]
    for folder in dict.fromkeys(folders):
        if (Path(folder) / "nbgrader_config.py").is_file():
            config.merge(PyFileConfigLoader("nbgrader_config.py", path=folder).load_config())
    return config


class LatePenalties:
    """nbgrader's own ``AssignLatePenalties`` step, with its configured plugin (the
    ``LateSubmissionPlugin``'s penalty_method, or a custom ``plugin_class``), applied to a
    submission whose auto scores are stored: the same penalty ``nbgrader autograde`` gives."""

    def __init__(self, course_dir: Path) -> None:
        from nbgrader.preprocessors import AssignLatePenalties

        self.step = AssignLatePenalties(config=nbgrader_config(course_dir))
        self.step.init_plugin()

    def apply(self, gb: Any, submission: Any) -> dict[str, float]:
        seconds = float(submission.total_seconds_late or 0)
        total = 0.0
        for notebook in submission.notebooks:
            gb.db.refresh(notebook)  # its score is computed by the database from the new grades
            notebook.late_submission_penalty = None
            if seconds > 0:
                penalty = self.step.plugin_inst.late_submission_penalty(
                    submission.student.id, notebook.score, seconds)
                if penalty is not None:
                    penalty = self.step._check_late_penalty(notebook, penalty)
                    notebook.late_submission_penalty = penalty
                    total += penalty
        return {"seconds_late": seconds, "penalty": round(total, 6)}


def save_grades(gb: Any, course_dir: Path, result: dict, notebooks: dict[str, list[str]],
                late: LatePenalties | None = None) -> dict[str, float]:
    """Create student and submission as ``nbgrader autograde`` does; set each auto_score; then
    the late penalty as nbgrader's AssignLatePenalties does. Returns the lateness.

    ``notebooks`` maps notebook id -> its grade cell ids, so each exercise lands on the right
    SubmittedNotebook.
    """
    student, assignment = result["student"], result["assignment"]
    with gb.db.no_autoflush:  # nbgrader's add_submission walks relations before adding its row
        gb.update_or_create_student(student)
        stamp = submitted_at(course_dir, student, assignment)
        extra = {} if stamp is None else {"timestamp": stamp}
        submission = gb.update_or_create_submission(assignment, student, **extra)
    points = {e["id"]: e for e in result["exercises"]}
    kept = 0  # manual grades from the formgrader: nbgrader keeps them over the auto score
    # walk the submission's own rows: one query per notebook, not one per grade (find_grade)
    for notebook in submission.notebooks:
        grade_ids = set(notebooks.get(notebook.name, ()))
        for grade in notebook.grades:
            if grade.name not in grade_ids:
                continue
            entry = points.get(grade.name)
            grade.auto_score = None if entry is None or entry["verdict"] == "manual" \
                else float(entry["points"])
            grade.needs_manual_grade = grade.manual_score is not None or grade.auto_score is None
            kept += grade.manual_score is not None
    gb.db.commit()
    lateness = (late or LatePenalties(course_dir)).apply(gb, submission)
    gb.db.commit()
    return {**lateness, "manual_grades": kept}


def gradebook_scores(course_dir: Path) -> dict[tuple[str, str, str], float | None]:
    """(student, assignment, grade_id) -> auto_score, straight from the SQLite gradebook."""
    from nbgrader.api import Gradebook

    out = {}
    with Gradebook(db_url(course_dir)) as gb:
        for assignment in gb.assignments:
            for sub in assignment.submissions:
                for nb in sub.notebooks:
                    for g in nb.grades:
                        out[(sub.student.id, assignment.name, g.name)] = g.auto_score
    return out


# --- autograded notebooks: what the formgrader and `nbgrader generate_feedback` read -----------

def autograded_notebook(cells: list[Cell], source: Any, result: dict,
                        errors: dict[int, str] | None = None) -> NotebookNode:
    """The sanitised cells, nbgrader metadata from source, each grade cell showing its verdict,
    misconception, hint and points, each cell that raised the name of its error (``errors``:
    cell index -> exception name, as the sandbox reported it), for the formgrader's view.

    Built as plain nbformat-4 dicts: nbformat's ``new_*_cell`` validate every cell against the
    JSON schema, which cost the single-threaded parent 40 ms per notebook. The shape is checked
    once, in the tests, with ``nbformat.validate``.
    """
    meta = {grade_id(c): c.metadata for c in source.cells if grade_id(c)}
    by_id = {e["id"]: e for e in result["exercises"]}
    out = []
    for index, cell in enumerate(cells):
        new: dict[str, Any] = {"cell_type": "markdown" if cell.kind == "markdown" else "code",
                               "id": f"cell-{index}", "metadata": {}, "source": cell.source}
        if cell.grade_id in meta:
            new["metadata"] = dict(meta[cell.grade_id])
        if new["cell_type"] == "code":
            entry = by_id.get(cell.grade_id) if cell.grade_id else None
            new["execution_count"] = None
            new["outputs"] = [] if entry is None else grade_outputs(entry)
            if entry is None and errors and index in errors:
                new["outputs"] = [{"output_type": "error", "ename": errors[index], "evalue": "",
                                   "traceback": [f"{errors[index]} (raised when the grader ran this cell)"]}]
        out.append(new)
    return from_dict({"cells": out, "metadata": source.metadata, "nbformat": 4, "nbformat_minor": 5})


def grade_outputs(entry: dict) -> list[dict]:
    """A grade cell's outputs: the verdict as text, then the points (what nbgrader reads)."""
    return [{"output_type": "stream", "name": "stdout", "text": _verdict_text(entry)},
            {"output_type": "execute_result", "execution_count": None, "metadata": {},
             "data": {"text/plain": f"{entry['points']:g}"}}]


def update_autograded(course_dir: Path, result: dict) -> int:
    """The verdicts of ``result`` written into the grade cells of the student's autograded
    notebooks (ours, written by ``grade``); how many cells changed. Read as any file under the
    course folder is: beneath it, no link followed, size-capped."""
    from gradtutor.grading.submission import MAX_NOTEBOOK_BYTES, read_beneath

    by_id = {e["id"]: e for e in result["exercises"]}
    changed = 0
    folder = course_dir / "autograded" / result["student"] / result["assignment"]
    for path in sorted(folder.glob("*.ipynb")):
        try:
            raw = read_beneath(course_dir, path.relative_to(course_dir).parts, MAX_NOTEBOOK_BYTES)
            nb = json.loads(raw)
        except Exception:
            continue
        count = 0
        for cell in nb.get("cells", []) if isinstance(nb, dict) else []:
            gid = grade_id(cell)
            if isinstance(cell, dict) and cell.get("cell_type") == "code" and gid in by_id:
                cell["outputs"] = grade_outputs(by_id[gid])
                count += 1
        if count:  # nbformat's own layout (nbjson.writes), without building NotebookNodes
            write_atomic(path, (json.dumps(nb, sort_keys=True, indent=1, ensure_ascii=False)
                                + "\n").encode())
            changed += count
    return changed


def _verdict_text(entry: dict) -> str:
    lines = [f"{entry['verdict']}: {entry['message']}"]
    if entry.get("misconception"):
        from gradtutor.key import misconceptions

        lines.append(f"Likely misconception: {misconceptions.name(entry['misconception'])}")
        hint = hint_for(entry["id"], entry["misconception"])
        if hint:
            lines.append(f"Hint: {hint}")
    lines.append(f"Points: {entry['points']:g} of {entry['max_points']:g}")
    return "\n".join(lines) + "\n"


def hint_for(exercise_id: str, misconception: str) -> str | None:
    """The hint of the exercise's wrong answer with this misconception (hints never give the
    answer away; explanations may quote numbers, so they stay in the live self-check)."""
    from autograder.judge import answer_names
    from autograder.judge import redact as _redact
    from gradtutor.key import registry
    from gradtutor.key.answer_key import reference

    try:
        ex = registry.get(exercise_id)
    except KeyError:  # an id the course no longer has
        return None
    hint = next((w.hint for w in ex.wrong if w.misconception == misconception), None)
    return None if hint is None else _redact(hint, answer_names(ex.kind, reference(exercise_id, 0)))


def write_autograded(course_dir: Path, sub: Submission, nb: NotebookNode) -> None:
    folder = course_dir / "autograded" / sub.student / sub.assignment
    write_atomic(folder / f"{sub.notebook}.ipynb", nbjson.writes(nb).encode())  # no re-validation
    stamp = submitted_at(course_dir, sub.student, sub.assignment)
    if stamp is not None:  # the parsed time, written anew: never the submitted file's bytes
        write_atomic(folder / "timestamp.txt", f"{stamp.isoformat(sep=' ')}\n".encode())
    secret = submission_secret(course_dir, sub.student, sub.assignment)
    if secret is not None:  # nbgrader's release_feedback names the page after it
        write_atomic(folder / "submission_secret.txt", secret.encode())


_SECRET = re.compile(r"[0-9a-f]{16,256}")


def submission_secret(course_dir: Path, student: str, assignment: str) -> str | None:
    """The token nbgrader's submit wrote (hex), read as any file from submitted/ is, or None."""
    text = read_small(course_dir, ("submitted", student, assignment, "submission_secret.txt"))
    text = text.strip() if text is not None else ""
    return text if _SECRET.fullmatch(text) else None


# --- what the gradebook says now: manual grades, extra credit, comments, late penalties ---------

_GRADES = """
SELECT sa.student_id, a.name, bc.name, g.auto_score, g.manual_score, g.extra_credit
FROM grade g JOIN submitted_notebook sn ON g.notebook_id = sn.id
JOIN submitted_assignment sa ON sn.assignment_id = sa.id
JOIN assignment a ON sa.assignment_id = a.id JOIN base_cell bc ON g.cell_id = bc.id"""
_COMMENTS = """
SELECT sa.student_id, a.name, bc.name, c.manual_comment
FROM comment c JOIN submitted_notebook sn ON c.notebook_id = sn.id
JOIN submitted_assignment sa ON sn.assignment_id = sa.id
JOIN assignment a ON sa.assignment_id = a.id JOIN base_cell bc ON c.cell_id = bc.id
WHERE c.manual_comment IS NOT NULL AND c.manual_comment != ''"""
_PENALTIES = """
SELECT sa.student_id, a.name, COALESCE(SUM(sn.late_submission_penalty), 0)
FROM submitted_notebook sn JOIN submitted_assignment sa ON sn.assignment_id = sa.id
JOIN assignment a ON sa.assignment_id = a.id GROUP BY sa.student_id, a.name"""


def reconcile(course_dir: Path, results: list[SubmissionResult]) -> list[SubmissionResult]:
    """The results as the gradebook has them now: a manual grade from the formgrader replaces
    the auto score (``manual`` marks it), extra credit is added, the grader's comment is
    attached to its exercise, and the late penalty is the one stored. What the feedback pages,
    the report and the CSV show, so they agree with ``nbgrader export``."""
    db_path = course_dir / "gradebook.db"
    if not db_path.exists():
        return results
    with sqlite3.connect(db_path) as db:
        grades = {(s, a, g): (auto, manual, extra) for s, a, g, auto, manual, extra in db.execute(_GRADES)}
        comments: dict[tuple[str, str, str], list[str]] = {}
        for s, a, cell, text in db.execute(_COMMENTS):
            comments.setdefault((s, a, cell.removesuffix("-answer").removesuffix("-prompt")), []).append(text)
        penalties = {(s, a): p for s, a, p in db.execute(_PENALTIES)}
    out = []
    for r in results:
        r = {**r, "exercises": [dict(e) for e in r["exercises"]]}
        for e in r["exercises"]:
            found = grades.get((r["student"], r["assignment"], e["id"]))
            if found is not None:
                auto, manual, extra = found
                if manual is not None and manual != auto:
                    e["manual"], e["auto_points"] = True, e["points"]
                    e["points"] = float(manual)
                if extra:
                    e["extra_credit"] = float(extra)
            note = comments.get((r["student"], r["assignment"], e["id"]))
            if note:
                e["comment"] = "\n".join(note)[:2000]
        r["score"] = round(sum(e["points"] + e.get("extra_credit", 0.0) for e in r["exercises"]), 6)
        r["penalty"] = round(min(penalties.get((r["student"], r["assignment"]), r.get("penalty", 0.0)) or 0.0,
                                 r["score"]), 6)
        r["total"] = round(r["score"] - r["penalty"], 6)
        out.append(r)  # type: ignore[arg-type]
    return out
