"""Trusted side: one nbgrader course folder, as a value. Every path of it is named here once.

Grading, records and reports take a ``Course`` instead of a bare folder, so no module rebuilds
``root / "submitted" / student / assignment`` or finds the gradebook on its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


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

    def source_dir(self, assignment: str) -> Path:
        return self.source / assignment

    def submission_dir(self, student: str, assignment: str) -> Path:
        return self.submitted / student / assignment

    def autograded_dir(self, student: str, assignment: str) -> Path:
        return self.root / "autograded" / student / assignment

    def feedback_dir(self, student: str, assignment: str) -> Path:
        return self.root / "feedback" / student / assignment

    # --- gradtutor's own ------------------------------------------------------------------------
    @property
    def results_dir(self) -> Path:
        return self.root / "gradtutor" / "results"

    def results_path(self, assignment: str, student: str) -> Path:
        return self.results_dir / assignment / f"{student}.json"

    @property
    def regrades_dir(self) -> Path:
        return self.root / "gradtutor" / "regrades"

    @property
    def reports_dir(self) -> Path:
        return self.root / "reports"
