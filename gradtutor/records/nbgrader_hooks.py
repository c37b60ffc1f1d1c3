"""Trusted side: the two classes nbgrader loads by name from the course's configuration.

* ``GradtutorLatePolicy``: a ``LateSubmissionPlugin`` (nbgrader's documented way to a custom late
  penalty, ``c.AssignLatePenalties.plugin_class``) for a percentage per started day late and a
  grace period; ``records.term.LatePolicy.penalty`` is the rule. ``gradtutor late-policy set``
  writes its settings; ``gradtutor grade`` and ``nbgrader autograde`` both call it.
* ``ShowDueDate``: a step of ``nbgrader generate_assignment`` that writes the assignment's due
  date and the late policy (both public) under the first heading of the released notebook and
  into its metadata (``metadata.gradtutor.due``), where the student runtime's ``review`` reads it.

nbgrader is imported at the top: only nbgrader, which has it loaded already, imports this module.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nbconvert.exporters.exporter import ResourcesDict
from nbformat.notebooknode import NotebookNode
from nbformat.v4 import new_markdown_cell
from nbgrader.plugins import LateSubmissionPlugin
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Float

from gradtutor.course import Course
from gradtutor.records import gradebook
from gradtutor.records.term import LatePolicy, policy_from_config, when_text

MARK = "gradtutor-due-date"  # the line's HTML comment: tests and a re-run find it by this


class GradtutorLatePolicy(LateSubmissionPlugin):
    """A percentage of the score off per started day late, and a grace period; with nbgrader's
    ``penalty_method = 'zero'``, a score of 0 after the grace period."""

    percent_per_day = Float(0.0, help="Percent of the notebook's score taken off per started day "
                                      "late (at most all of it).").tag(config=True)
    grace_hours = Float(0.0, help="A submission at most this many hours late counts as on "
                                  "time.").tag(config=True)

    def late_submission_penalty(self, student_id: str, score: float, total_seconds_late: float) -> float | None:
        method = "zero" if self.penalty_method == "zero" else "percent" if self.percent_per_day else "none"
        return LatePolicy(method, self.percent_per_day, self.grace_hours).penalty(score, total_seconds_late)


def due_line(due: Any, policy: LatePolicy) -> str:
    """The Markdown line a student reads under the notebook's title."""
    return f"<!-- {MARK} -->\n**Due: {when_text(due)}.** {policy.describe()}"


class ShowDueDate(NbGraderPreprocessor):
    """Write the due date (if the gradebook has one) and the late policy into the released
    notebook: a line under the first cell's title, and ``metadata.gradtutor.due`` (ISO, UTC)."""

    def preprocess(self, nb: NotebookNode, resources: ResourcesDict) -> tuple[NotebookNode, ResourcesDict]:
        info = resources.get("nbgrader", {})
        course = _course_of(str(info.get("db_url", "")))
        due = gradebook.due_dates(course).get(info.get("assignment", "")) if course else None
        if due is None:
            return nb, resources
        # the policy `gradtutor grade` applies in this course (its config, after the working folder's)
        line = due_line(due, policy_from_config(gradebook.nbgrader_config(course)))
        first = nb.cells[0] if nb.cells else None
        if first is not None and first.cell_type == "markdown" and "nbgrader" not in first.metadata:
            title, _, rest = first.source.partition("\n")
            first.source = f"{title}\n\n{line}" + (f"\n\n{rest.lstrip(chr(10))}" if rest.strip() else "")
        else:
            nb.cells.insert(0, new_markdown_cell(line))
        nb.metadata.setdefault("gradtutor", {})["due"] = due.isoformat()
        return nb, resources


def _course_of(db_url: str) -> Course | None:
    """The course folder of a gradebook URL (gradtutor's courses keep ``gradebook.db`` in it)."""
    path = Path(db_url.removeprefix("sqlite:///")) if db_url.startswith("sqlite:///") else None
    return Course.at(path.parent) if path is not None and path.name == "gradebook.db" else None
