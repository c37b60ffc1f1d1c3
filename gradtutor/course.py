"""Trusted side: one nbgrader course folder, as a value. Every path of it is named here once.

Grading, records and reports take a ``Course`` instead of a bare folder, so no module rebuilds
``root / "submitted" / student / assignment`` or finds the gradebook on its own. What the
course's own (trusted) source notebooks say is read here too: their grade cells and points.
Files under ``submitted/`` are the students': they are named here (as parts beneath the root,
for the link-refusing reader), never read here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from gradtutor.nbcells import grade_id, is_grade, points


@dataclass(frozen=True)
class Course:
    """An nbgrader course folder: ``source/``, ``submitted/``, ``autograded/``, ``feedback/``,
    ``gradebook.db``, and gradtutor's own ``gradtutor/`` (results, regrades)."""

    root: Path

    @classmethod
    def at(cls, folder: Path | str) -> Course:
        return cls(Path(folder).resolve())

    # --- nbgrader's folders ---------------------------------------------------------------------
    @property
    def gradebook(self) -> Path:
        return self.root / "gradebook.db"

    @property
    def db_url(self) -> str:
        return f"sqlite:///{self.gradebook}"

    @property
    def source(self) -> Path:
        return self.root / "source"

    @property
    def submitted(self) -> Path:
        return self.root / "submitted"

    @property
    def feedback(self) -> Path:
        return self.root / "feedback"

    def source_dir(self, assignment: str) -> Path:
        return self.source / assignment

    def source_notebook(self, assignment: str, notebook: str) -> Path:
        return self.source_dir(assignment) / f"{notebook}.ipynb"

    def submission_dir(self, student: str, assignment: str) -> Path:
        return self.submitted / student / assignment

    def submitted_parts(self, student: str, assignment: str, name: str) -> tuple[str, ...]:
        """``submitted/<student>/<assignment>/<name>`` as parts beneath the root (what the
        link-refusing reader walks)."""
        return ("submitted", student, assignment, name)

    def autograded_dir(self, student: str, assignment: str) -> Path:
        return self.root / "autograded" / student / assignment

    def feedback_dir(self, student: str, assignment: str) -> Path:
        return self.feedback / student / assignment

    # --- what the folders hold --------------------------------------------------------------------
    def source_assignments(self) -> dict[str, list[str]]:
        """assignment -> its source notebooks' ids (file stems), for every assignment with one."""
        return {p.parent.name: sorted(q.stem for q in p.parent.glob("*.ipynb"))
                for p in self.source.glob("*/*.ipynb")}

    def submitted_assignments(self) -> set[str]:
        """The assignments some student submitted a notebook for."""
        return {p.parent.name for p in self.submitted.glob("*/*/*.ipynb")}

    def submitted_notebooks(self, student: str, assignment: str) -> set[str]:
        """The notebook ids a student handed in for an assignment."""
        return {p.stem for p in self.submission_dir(student, assignment).glob("*.ipynb")}

    def autograded_notebooks(self, student: str, assignment: str) -> list[Path]:
        return sorted(self.autograded_dir(student, assignment).glob("*.ipynb"))

    def source_notebooks(self, assignment: str) -> dict[str, NotebookNode]:
        """notebook id -> the assignment's source notebook (the course's own, trusted)."""
        folder = self.source_dir(assignment)
        return {p.stem: nbformat.read(p, as_version=4) for p in sorted(folder.glob("*.ipynb"))}

    def max_points(self, assignment: str) -> float:
        """The points of every grade cell of the assignment's source notebooks."""
        return sum(p for nb in self.source_notebooks(assignment).values() for _, p in grade_cells(nb))

    # --- gradtutor's own ------------------------------------------------------------------------
    @property
    def results_dir(self) -> Path:
        return self.root / "gradtutor" / "results"

    def results_path(self, assignment: str, student: str) -> Path:
        return self.results_dir / assignment / f"{student}.json"

    @property
    def checks_cache(self) -> Path:
        """Every variant's references of the exercises graded here, kept between runs (the
        grading variants: the trusted side's alone; the course folder is hidden from the
        sandbox and this folder is private)."""
        return self.root / "gradtutor" / "cache" / "checks"

    @property
    def regrades_dir(self) -> Path:
        return self.root / "gradtutor" / "regrades"

    @property
    def reports_dir(self) -> Path:
        return self.root / "reports"


def grade_cells(source: NotebookNode) -> list[tuple[str, float]]:
    """(grade_id, points) of every grade cell, in notebook order."""
    return [(grade_id(c), points(c)) for c in source.cells if is_grade(c) and grade_id(c)]


def grade_ids(sources: dict[str, NotebookNode], notebooks: set[str]) -> dict[str, list[str]]:
    """Notebook id -> its grade cell ids, for the notebooks a student handed in."""
    return {nb: [gid for gid, _ in grade_cells(src)] for nb, src in sources.items()
            if nb in notebooks}
