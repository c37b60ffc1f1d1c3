"""The browser tests' session fixtures, one of each for the whole run.

Playwright's sync API runs one instance per thread: two modules each holding their own
session-scoped ``browser`` (as an imported fixture function gives them) would start a second
one while the first still runs, and every test of the second module errors.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


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
