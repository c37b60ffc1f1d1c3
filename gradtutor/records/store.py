"""Trusted side: where grades go: the results files, autograded notebooks, the grades CSV.

Every file is written to a temporary name and renamed (``files.write_atomic``), so a SIGKILL
leaves either the old file or the new one. The gradebook is ``gradebook.py``'s; a grading run
writes its rows first and the results file last: the results file is what makes a submission
count as graded on a re-run. ``reconcile`` reads both, so what people see agrees with
``nbgrader export``.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from autograder.feedback import as_text, misconception_line
from autograder.judge import answer_names, redact
from gradtutor.course import Course
from gradtutor.key import misconceptions, registry
from gradtutor.key.answer_key import reference
from gradtutor.nbcells import grade_id
from gradtutor.records import gradebook, sheet
from gradtutor.records.files import MAX_NOTEBOOK_BYTES, dumps_indented, read_beneath, write_atomic
from gradtutor.records.results import ExerciseResult, SubmissionResult, read_result
from gradtutor.records.submissions import Cell, Submission, submission_secret, submitted_at

CSV_COLUMNS = ("student", "assignment", "exercise", "points", "max_points", "verdict",
               "misconception", "graded_by")


def write_result(course: Course, result: SubmissionResult) -> Path:
    path = course.results_path(result.assignment, result.student)
    write_atomic(path, dumps_indented(result.to_json()).encode())  # json.dumps(indent=1)
    return path


def load_results(course: Course, assignments: list[str] | None = None, *,
                 unreadable: list[str] | None = None) -> list[SubmissionResult]:
    """Every results file (of these assignments); the paths of any that are not results go to
    ``unreadable`` (a stray file is not a grade, and never fatal)."""
    out = []
    for p in sorted(course.results_dir.glob("*/*.json")):
        if assignments and p.parent.name not in assignments:
            continue
        try:
            result = read_result(json.loads(p.read_text()), student=p.stem, assignment=p.parent.name)
        except (OSError, ValueError, RecursionError, OverflowError):  # OverflowError: a huge int
            result = None
        if result is not None:
            out.append(result)
        elif unreadable is not None:
            unreadable.append(str(p))
    return out


def write_csv(path: Path, results: list[SubmissionResult]) -> None:
    rows = ([r.student, r.assignment, e.id, f"{e.points:g}", f"{e.max_points:g}",
             e.verdict, e.misconception or "", "hand" if e.manual else "auto"]
            for r in sorted(results, key=lambda r: (r.assignment, r.student))
            for e in r.exercises)
    sheet.write(path, CSV_COLUMNS, rows)


def save_grades(gb: Any, course: Course, result: SubmissionResult, notebooks: dict[str, list[str]],
                late: gradebook.LatePenalties | None = None) -> None:
    """``save_all_grades`` of one result."""
    save_all_grades(gb, course, [(result, notebooks)], late)


def save_all_grades(gb: Any, course: Course,
                    batch: list[tuple[SubmissionResult, dict[str, list[str]]]],
                    late: gradebook.LatePenalties | None = None) -> None:
    """Each result's auto scores into the gradebook (``gradebook.save_all``: each result with
    its notebooks' grade cells); the lateness and the count of kept manual grades onto each
    result."""
    saved = gradebook.save_all(gb, course, [(r.student, r.assignment, {e.id: (e.verdict, e.points)
                                                                         for e in r.exercises}, nbs)
                                            for r, nbs in batch], late)
    for (result, _), lateness in zip(batch, saved, strict=True):
        result.seconds_late, result.penalty = lateness["seconds_late"], lateness["penalty"]
        result.manual_grades = int(lateness["manual_grades"])


def save_batch(gb: Any, course: Course, batch: list[tuple[SubmissionResult, dict[str, list[str]]]],
               late: gradebook.LatePenalties | None = None) -> dict[int, Exception]:
    """``save_all_grades`` of the batch in one transaction; when that fails, of each result
    alone, so one failure costs one result. The ones not stored, by their index in ``batch``,
    with the exception that stopped them."""
    if not batch:
        return {}
    try:
        with gradebook.one_transaction(gb):
            save_all_grades(gb, course, batch, late)
        return {}
    except Exception:
        pass
    failed: dict[int, Exception] = {}
    for index, item in enumerate(batch):
        try:
            with gradebook.one_transaction(gb):
                save_all_grades(gb, course, [item], late)
        except Exception as e:
            failed[index] = e
    return failed


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


# --- autograded notebooks: what the formgrader and `nbgrader generate_feedback` read -----------

def autograded_notebook(cells: list[Cell], source: Any, result: SubmissionResult,
                        errors: dict[int, str] | None = None) -> dict[str, Any]:
    """The sanitised cells, nbgrader metadata from source, each grade cell showing its verdict,
    misconception, hint and points, each cell that raised the name of its error (``errors``:
    cell index -> exception name, as the sandbox reported it), for the formgrader's view.

    Built as plain nbformat-4 dicts, never NotebookNodes: nbformat's ``new_*_cell`` validate
    every cell against the JSON schema (40 ms per notebook), and ``from_dict`` copies every
    node (1 ms). The shape is checked once, in the tests, with ``nbformat.validate``.
    """
    meta = {grade_id(c): c.metadata for c in source.cells if grade_id(c)}
    by_id = {e.id: e for e in result.exercises}
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
    return {"cells": out, "metadata": source.metadata, "nbformat": 4, "nbformat_minor": 5}


def grade_outputs(entry: ExerciseResult) -> list[dict]:
    """A grade cell's outputs: the verdict as text, then the points (what nbgrader reads)."""
    return [{"output_type": "stream", "name": "stdout", "text": _verdict_text(entry)},
            {"output_type": "execute_result", "execution_count": None, "metadata": {},
             "data": {"text/plain": f"{entry.points:g}"}}]


def update_autograded(course: Course, result: SubmissionResult) -> int:
    """The verdicts of ``result`` written into the grade cells of the student's autograded
    notebooks (ours, written by ``grade``); how many cells changed. Read as any file under the
    course folder is: beneath it, no link followed, size-capped."""
    by_id = {e.id: e for e in result.exercises}
    changed = 0
    for path in course.autograded_notebooks(result.student, result.assignment):
        try:
            raw = read_beneath(course.root, path.relative_to(course.root).parts, MAX_NOTEBOOK_BYTES)
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
            write_atomic(path, (dumps_indented(nb, sort_keys=True, ensure_ascii=False)
                                + "\n").encode())
            changed += count
    return changed


def _verdict_text(entry: ExerciseResult) -> str:
    lines = [f"{entry.verdict}: {as_text(entry.message)}"]
    if entry.misconception:
        line = misconception_line(entry.misconception, misconceptions.name(entry.misconception))
        lines.append(f"Likely misconception: {line}")
        hint = hint_for(entry.id, entry.misconception)
        if hint:
            lines.append(f"Hint: {as_text(hint)}")
    lines.append(f"Points: {entry.points:g} of {entry.max_points:g}")
    return "\n".join(lines) + "\n"


def hint_for(exercise_id: str, misconception: str) -> str | None:
    """The hint of the exercise's wrong answer with this misconception (hints never give the
    answer away; explanations may quote numbers, so they stay in the live self-check)."""
    try:
        ex = registry.get(exercise_id)
    except KeyError:  # an id the course no longer has
        return None
    hint = next((w.hint for w in ex.wrong if w.misconception == misconception), None)
    return None if hint is None else redact(hint, answer_names(ex.kind, reference(exercise_id, 0)))


def notebook_text(nb: dict) -> str:
    """``nbformat.v4.nbjson.writes(nb)``, the same text, without its deep copy of the notebook
    and its pure-Python indented encoding (most of the recorder's time per notebook): the
    transient keys left out and multi-line strings split into lines on shallow copies of
    what changes (``nbformat.v4.rwbase.split_lines`` and ``strip_transient``), then
    ``files.dumps_indented``. Never validated: see ``autograded_notebook``."""
    out = {**nb, "metadata": {k: v for k, v in nb["metadata"].items()
                              if k not in ("orig_nbformat", "orig_nbformat_minor", "signature")}}
    out["cells"] = [_split_cell(cell) for cell in nb["cells"]]
    return dumps_indented(out, sort_keys=True, ensure_ascii=False)


def _split_cell(cell: dict) -> dict:
    cell = {**cell}
    if "trusted" in cell["metadata"]:
        cell["metadata"] = {k: v for k, v in cell["metadata"].items() if k != "trusted"}
    if isinstance(cell.get("source"), str):
        cell["source"] = cell["source"].splitlines(True)
    if "attachments" in cell:
        cell["attachments"] = {k: _split_bundle(v) for k, v in cell["attachments"].items()}
    if cell["cell_type"] == "code":
        outputs = []
        for output in cell["outputs"]:
            if output["output_type"] in ("execute_result", "display_data") and "data" in output:
                output = {**output, "data": _split_bundle(output["data"])}
            elif output["output_type"] == "stream" and isinstance(output["text"], str):
                output = {**output, "text": output["text"].splitlines(True)}
            outputs.append(output)
        cell["outputs"] = outputs
    return cell


def _split_bundle(data: dict) -> dict:
    return {k: v.splitlines(True) if isinstance(v, str) and
            (k.startswith("text/") or k in ("application/javascript", "image/svg+xml")) else v
            for k, v in data.items()}


def write_autograded(course: Course, sub: Submission, nb: dict[str, Any]) -> None:
    folder = course.autograded_dir(sub.student, sub.assignment)
    write_atomic(folder / f"{sub.notebook}.ipynb", notebook_text(nb).encode())
    stamp = submitted_at(course, sub.student, sub.assignment)
    if stamp is not None:  # the parsed time, written anew: never the submitted file's bytes
        write_atomic(folder / "timestamp.txt", f"{stamp.isoformat(sep=' ')}\n".encode())
    secret = submission_secret(course, sub.student, sub.assignment)
    if secret is not None:  # nbgrader's release_feedback names the page after it
        write_atomic(folder / "submission_secret.txt", secret.encode())


# --- what the gradebook says now: manual grades, extra credit, comments, late penalties ---------

def reconcile(course: Course, results: list[SubmissionResult]) -> list[SubmissionResult]:
    """The results as the gradebook has them now: a manual grade from the formgrader replaces
    the auto score (``manual`` marks it), extra credit is added, the grader's comment is
    attached to its exercise, and the late penalty is the one stored. What the feedback pages,
    the report and the CSV show, so they agree with ``nbgrader export``."""
    book = gradebook.recorded(course)
    if book is None:
        return results
    grades, comments, penalties = book.grades, book.comments, book.penalties
    out = []
    for r in results:
        r = replace(r, exercises=[replace(e) for e in r.exercises])
        for e in r.exercises:
            found = grades.get((r.student, r.assignment, e.id))
            if found is not None:
                auto, manual, extra = found.auto, found.manual, found.extra_credit
                if manual is not None and manual != auto:
                    e.manual, e.auto_points = True, e.points
                    e.points = float(manual)
                if extra:
                    e.extra_credit = float(extra)
            note = comments.get((r.student, r.assignment, e.id))
            if note:
                e.comment = "\n".join(note)[:2000]
        r.score = round(sum(e.points + (e.extra_credit or 0.0) for e in r.exercises), 6)
        r.penalty = round(min(penalties.get((r.student, r.assignment), r.penalty) or 0.0, r.score), 6)
        r.total = round(r.score - r.penalty, 6)
        out.append(r)
    return out
