"""The browser tests' session fixtures, one of each for the whole run, and the order in which
`make test`'s two workers take the test files.

Playwright's sync API runs one instance per thread: two modules each holding their own
session-scoped ``browser`` (as an imported fixture function gives them) would start a second
one while the first still runs, and every test of the second module errors.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# The files that take a minute or more (pytest --durations on a quiet machine), longest first.
# `make test` runs `-n 2 --dist loadfile --no-loadscope-reorder`: each file stays on one worker,
# and a long file taken last would leave the other worker idle at the end. Only the order of
# files changes; each file's own tests keep theirs.
LONG_FIRST = (
    "test_hub.py",
    "test_term.py",
    "test_hostile.py",
    "test_nbgrader_flow.py",
    "test_by_hand_grading.py",
    "test_isolation.py",
    "test_cgroup_limits.py",
    "test_accessibility.py",
    "test_loop.py",
    "test_build.py",
    "test_runtime.py",
    "test_hostile_messages.py",
    "test_practice.py",  # every grading variant of every exercise, computed when its tests run
    "test_sealed.py",
    "test_notebooks.py",
    "test_giveaways.py",
    "test_late_policy.py",
    "test_browser.py",
    # slow-marked files of 45-125 s on a loaded machine (load 9.5, about a third of that quiet):
    # left in alphabetical order, test_validate came among the last files of the run
    "test_demo_report.py",
    "test_validate.py",
    "test_roster.py",
    "test_grade_start.py",
    "test_answer_cells.py",
    "test_student_python.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(LONG_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable within a file


@pytest.fixture(scope="session", autouse=True)
def _one_course_build_per_chapter(tmp_path_factory: pytest.TempPathFactory) -> None:
    """kit.make_course copies one build of each chapter's course, made once in the run: a dozen
    files ask for chapter 1's, 19 times, each build ~10 s of nbgrader on a quiet machine. The folder is this
    run's (pytest-xdist's workers share their run's base folder), so no other run's build and
    no earlier code can be copied."""
    from hostile import kit

    base = tmp_path_factory.getbasetemp()
    kit.TEMPLATES = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "courses"


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory):
    """JupyterLab serving the demo notebook and copies of the course's notebooks."""
    from browser.demo import write_demo
    from browser.lab import Lab

    root = tmp_path_factory.mktemp("lab-root")
    write_demo(root)
    (root / "course").mkdir()
    for nb in sorted((REPO / "notebooks").glob("*.ipynb")):  # copies: running them must not touch notebooks/
        shutil.copy(nb, root / "course" / nb.name)
    server = Lab(root, tmp_path_factory.mktemp("lab-state"))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium through Playwright."""
    from browser.lab import CHROMIUM, CHROMIUM_ARGS
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run make test (tools/system-deps installs Debian's chromium)")
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()
