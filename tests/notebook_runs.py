"""Each student notebook executed once per test session, shared by the tests that read it
(tests/test_notebooks.py, tests/test_giveaways.py): a chapter's fresh-kernel run costs 7-10 s."""

from __future__ import annotations

import copy
from functools import cache
from pathlib import Path

import nbformat
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parents[1]


@cache
def _student(slug: str) -> nbformat.NotebookNode:
    path = REPO / "notebooks" / f"{slug}.ipynb"
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=180, kernel_name="python3", store_widget_state=True,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    return nb


def executed_student(slug: str) -> nbformat.NotebookNode:
    """The student notebook of chapter ``slug`` run top to bottom on a fresh kernel (widget state
    kept); a copy, so that no test changes what another reads."""
    return copy.deepcopy(_student(slug))
