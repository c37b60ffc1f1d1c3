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
import pytest

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


def _two_copies(tmp_path: Path, change) -> tuple[Path, Path]:
    """Chapter 1 as released, and a copy that ``change`` altered (a JSON dict of the notebook)."""
    a, b = tmp_path / "a.ipynb", tmp_path / "b.ipynb"
    shutil.copy(REPO / "notebooks" / "ch01_graphs.ipynb", a)
    nb = json.loads(a.read_text())
    change(nb)
    b.write_text(json.dumps(nb, indent=2, sort_keys=False))  # another JSON layout, no final newline
    return a, b


def _answer(nb: dict) -> dict:
    return next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("solution"))


def _lesson_code(nb: dict) -> dict:
    return next(c for c in nb["cells"] if c["cell_type"] == "code" and not c["metadata"].get("nbgrader"))


def _saved_by_jupyterlab(nb: dict) -> None:
    """What opening, running and saving rewrites: metadata, ids, counts, lesson outputs."""
    nb["metadata"]["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nb["metadata"]["language_info"] = {"name": "python", "version": "3.11.2", "mimetype": "text/x-python"}
    nb["metadata"]["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    nb["nbformat_minor"] = 5
    for cell in nb["cells"]:
        cell["metadata"]["trusted"] = True
        cell["metadata"]["jp-MarkdownHeadingCollapsed"] = True
        if isinstance(cell["source"], str):  # nbformat keeps a list of lines or one string
            cell["source"] = cell["source"].splitlines(keepends=True)
        if cell["cell_type"] == "code":
            cell["execution_count"] = 7
    _lesson_code(nb)["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "tensor(1.)\n"}]


def _answer_output(nb: dict) -> None:
    _answer(nb)["outputs"] = [{"output_type": "execute_result", "execution_count": 3, "metadata": {},
                               "data": {"text/plain": "42"}}]


@pytest.mark.parametrize("change", [_saved_by_jupyterlab, lambda nb: None], ids=["saved", "relaid"])
def test_a_save_without_an_edit_is_the_same_work(tmp_path: Path, change) -> None:
    a, b = _two_copies(tmp_path, change)
    assert a.read_bytes() != b.read_bytes()
    assert keepwork.same_work(a, b) and keepwork.same_work(b, a)


def test_the_same_answer_output_run_twice_is_the_same_work(tmp_path: Path) -> None:
    def rerun(nb: dict) -> None:
        _answer_output(nb)
        _answer(nb)["outputs"][0]["execution_count"] = 9
    (tmp_path / "once").mkdir(), (tmp_path / "twice").mkdir()
    once = _two_copies(tmp_path / "once", _answer_output)[1]
    twice = _two_copies(tmp_path / "twice", rerun)[1]
    assert once.read_bytes() != twice.read_bytes() and keepwork.same_work(once, twice)


@pytest.mark.parametrize("change", [
    lambda nb: _answer(nb).update(source="x = 1  # my work"),
    _answer_output,
    lambda nb: nb["cells"].append({"cell_type": "markdown", "id": "mine", "metadata": {}, "source": "notes"}),
    lambda nb: nb["cells"].pop(),
    lambda nb: next(c for c in nb["cells"] if c["cell_type"] == "markdown").update(
        attachments={"a.png": {"image/png": "iVBORw0KGgo="}}),
    lambda nb: _lesson_code(nb).update(source="print('I changed a lesson cell')"),
], ids=["answer source", "answer output", "added cell", "removed cell", "attachment", "lesson source"])
def test_the_students_content_is_a_change(tmp_path: Path, change) -> None:
    a, b = _two_copies(tmp_path, change)
    assert not keepwork.same_work(a, b) and not keepwork.same_work(b, a)


def test_a_broken_notebook_or_another_file_compares_by_bytes(tmp_path: Path) -> None:
    a, b = tmp_path / "a.ipynb", tmp_path / "b.ipynb"
    a.write_text("{not json"), b.write_text("{not json ")
    assert not keepwork.same_work(a, b) and keepwork.same_work(a, a)
    c, d = tmp_path / "c.txt", tmp_path / "d.txt"
    c.write_text('{"cells": []}'), d.write_text('{"cells": [] }')
    assert not keepwork.same_work(c, d)


def test_an_untouched_but_saved_copy_takes_the_new_release(tmp_path: Path) -> None:
    """The rule itself: the saved-but-untouched copy is replaced; an edited one is kept."""
    release, work = tmp_path / "release", tmp_path / "work"
    release.mkdir()
    for name in ("ch01_graphs.ipynb", "ch02_numerics.ipynb"):
        shutil.copy(REPO / "notebooks" / name, release / name)
    keepwork.refresh(release, work, work / ".base")
    for name, change in (("ch01_graphs.ipynb", _saved_by_jupyterlab), ("ch02_numerics.ipynb", _answer_output)):
        nb = json.loads((work / name).read_text())
        change(nb)
        (work / name).write_text(json.dumps(nb))
    assert keepwork.refresh(release, work, work / ".base") == []  # no release: nothing to do
    mine = (work / "ch02_numerics.ipynb").read_bytes()
    for name in ("ch01_graphs.ipynb", "ch02_numerics.ipynb"):
        nb = nbformat.read(release / name, as_version=4)
        nb.cells[0].source += "\n\nAn update."
        nbformat.write(nb, release / name)
    said = keepwork.refresh(release, work, work / ".base")
    assert said == ["updated: ch01_graphs.ipynb (you had not changed it)",
                    "kept your ch02_numerics.ipynb: the new release is updates/ch02_numerics.ipynb, "
                    "see updates/WHAT-CHANGED.txt"]
    assert (work / "ch01_graphs.ipynb").read_bytes() == (release / "ch01_graphs.ipynb").read_bytes()
    assert (work / "ch02_numerics.ipynb").read_bytes() == mine
    assert not (work / "updates" / "ch01_graphs.ipynb").exists()


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
