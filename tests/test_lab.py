"""`make lab` as a student gets it: a working copy git does not track, kept across rebuilds, and
a lab with the student's nbgrader tools only and no error in its log."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat

from gradtutor.authoring.build import REPO

BIN = Path(sys.executable).parent
sys.path.insert(0, str(REPO / "hub"))
import keepwork  # noqa: E402


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_working_copy_is_not_tracked() -> None:
    done = subprocess.run(["git", "-C", str(REPO), "check-ignore", "-q", "work/ch01_graphs.ipynb"])
    assert done.returncode == 0, "work/ must be in .gitignore"


def _first_answer(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution"))


def test_a_rebuild_keeps_the_students_edit_and_says_what_changed(tmp_path: Path) -> None:
    """A checkout's built chapters 1 and 2 fill the working copy; the student edits chapter 1
    there; `gradtutor build` rebuilds; an update changes a lesson cell of both chapters: the
    edit is kept, the new chapter 1 goes to updates/ with the changed cell named, and the
    untouched chapter 2 is brought up to date."""
    shutil.copy(REPO / "nbgrader_config.py", tmp_path / "nbgrader_config.py")
    build = [str(BIN / "gradtutor"), "build", "1", "--no-solutions"]
    built, work = tmp_path / "notebooks", tmp_path / "work"
    built.mkdir()
    for name in ("ch01_graphs.ipynb", "ch02_numerics.ipynb"):
        shutil.copy(REPO / "notebooks" / name, built / name)
    make_lab = [sys.executable, str(REPO / "hub" / "keepwork.py"), str(built), str(work)]
    subprocess.run(make_lab, check=True, capture_output=True)
    (ch1, ch2) = sorted(p.name for p in built.glob("*.ipynb"))
    mine = nbformat.read(work / ch1, as_version=4)
    _first_answer(mine).source = "my_answer = 42  # my work"
    nbformat.write(mine, work / ch1)
    edited = (work / ch1).read_bytes()

    subprocess.run(build, cwd=tmp_path, check=True, capture_output=True)  # a rebuild
    assert subprocess.run(make_lab, capture_output=True, text=True).stderr == ""  # nothing changed
    assert (work / ch1).read_bytes() == edited
    changed = {}
    for name in (ch1, ch2):  # an update of the course changes a lesson cell
        nb = nbformat.read(built / name, as_version=4)
        cell = next(c for c in nb.cells if c.cell_type == "markdown")
        cell.source += "\n\nA sentence added in an update."
        changed[name] = cell.id
        nbformat.write(nb, built / name)
    said = subprocess.run(make_lab, check=True, capture_output=True, text=True).stderr
    assert (work / ch1).read_bytes() == edited
    assert f"kept your {ch1}" in said and f"updated: {ch2}" in said
    assert "A sentence added in an update." in (work / ch2).read_text()
    assert (work / "updates" / ch1).read_bytes() == (built / ch1).read_bytes()
    note = (work / "updates" / keepwork.NOTE).read_text()
    assert f"{ch1}: the release changed 1 cell(s)" in note and f"changed {changed[ch1]}" in note


def test_make_lab_serves_the_working_copy_with_student_tools_only(tmp_path: Path) -> None:
    """`make lab` itself (the venv running this test as its VENV): its log has no error and no
    "not a subdirectory of the notebook server root", the page disables the formgrader,
    create-assignment and course-list plugins, the formgrader's URL is not served, the
    assignment list and validate are, and the served folder is the working copy."""
    port, token, work = _port(), "labtest", tmp_path / "work"
    cmd = [
        "make",
        "-C",
        str(REPO),
        "lab",
        f"VENV={sys.prefix}",
        f"PY={sys.executable}",
        "STAMP=",
        f"PORT={port}",
        f"WORK={work}",
        f"LAB_ARGS=--IdentityProvider.token={token}",
    ]
    log = tmp_path / "lab.log"
    with log.open("w") as out:
        lab = subprocess.Popen(
            cmd,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, "HOME": str(tmp_path), "PATH": f"{BIN}:{os.environ['PATH']}"},
        )
    base = f"http://127.0.0.1:{port}"

    def get(path: str) -> tuple[int, str]:
        req = urllib.request.Request(base + path, headers={"Authorization": f"token {token}"})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, ""

    try:
        deadline = time.monotonic() + 120
        while True:
            assert lab.poll() is None, log.read_text()
            try:
                if get("/api/status")[0] == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.5)
        status, page = get("/lab")
        assert status == 200
        config = json.loads(
            re.search(
                r'<script id="jupyter-config-data" type="application/json">(.*?)</script>', page, re.S
            ).group(1)
        )
        disabled = set(config["disabledExtensions"])
        assert {
            "@jupyter/nbgrader:formgrader",
            "@jupyter/nbgrader:create-assignment",
            "@jupyter/nbgrader:course-list",
        } <= disabled
        assert not {"@jupyter/nbgrader:assignment-list", "@jupyter/nbgrader:validate-assignment"} & disabled
        assert get("/formgrader")[0] == 404
        assert get("/assignments?course_id=gradtutor")[0] == 200  # the assignment list's API
        listed = json.loads(get("/api/contents")[1])["content"]
        assert {"ch01_graphs.ipynb"} <= {item["name"] for item in listed}
        assert (work / "ch01_graphs.ipynb").read_bytes() == (
            REPO / "notebooks" / "ch01_graphs.ipynb"
        ).read_bytes()
    finally:
        os.killpg(lab.pid, signal.SIGTERM)
        try:
            lab.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(lab.pid, signal.SIGKILL)
            lab.wait()
    text = log.read_text()
    assert "not a subdirectory of the notebook server root" not in text
    stopping = "received signal 15, stopping"  # the test's own SIGTERM, logged at level C
    errors = [line for line in text.splitlines()
              if (re.match(r"\[(E|C) ", line) or "Traceback" in line) and stopping not in line]
    assert not errors, "\n".join(errors)
