"""Benchmark plumbing: synthetic classes on disk, timed runs, peak memory, gradebook scores."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


# ---------------------------------------------------------------- memory of a process tree


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry.name}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        tree.setdefault(ppid, []).append(int(entry.name))
    return tree


def _descendants(root: int) -> list[int]:
    tree, out, todo = _children(), [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(tree.get(pid, []))
    return out


def _pss_kib(pid: int) -> int:
    """Proportional set size: shared (copy-on-write) pages are split between their users, so the
    sum over a fork server's children is what the machine really holds."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


class PeakMemory:
    """Samples the summed PSS of a process and all its descendants every ``interval`` s."""

    def __init__(self, pid: int, interval: float = 0.1) -> None:
        self.pid, self.interval = pid, interval
        self.peak_kib, self.peak_processes = 0, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            pids = _descendants(self.pid)
            self.peak_kib = max(self.peak_kib, sum(_pss_kib(p) for p in pids))
            self.peak_processes = max(self.peak_processes, len(pids))
            self._stop.wait(self.interval)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def peak_mib(self) -> float:
        return self.peak_kib / 1024


@dataclass
class Run:
    seconds: float
    peak_mib: float
    returncode: int
    log: str
    cpu_s: float = 0.0  # CPU time of the whole process tree (user + system): what a busy machine changes least


def timed(cmd: list[str], *, cwd: Path | None = None, log: Path | None = None,
          extra_env: dict[str, str] | None = None) -> Run:
    """Run a command, timing its wall clock and sampling its process tree's peak memory."""
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", **(extra_env or {})}
    out = open(log, "w") if log else subprocess.DEVNULL  # noqa: SIM115 - closed below
    try:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        with PeakMemory(proc.pid) as mem:
            _, status, usage = os.wait4(proc.pid, 0)  # its rusage counts every reaped descendant
            proc.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.perf_counter() - start
    finally:
        if log:
            out.close()
    return Run(seconds, mem.peak_mib, proc.returncode, str(log or ""), usage.ru_utime + usage.ru_stime)


# ---------------------------------------------------------------- classes on disk


def build_class(folder: Path, students: int, seed: int, only: list[str] | None = None) -> Path:
    """The course (or some chapters) with ``students`` synthetic students (gradtutor demo-class)."""
    shutil.rmtree(folder, ignore_errors=True)
    chosen = [arg for a in only or [] for arg in ("--assignment", a)]
    done = subprocess.run([str(BIN / "gradtutor"), "demo-class", str(folder), "--students",
                           str(students), "--seed", str(seed), *chosen],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"demo-class failed:\n{done.stdout}\n{done.stderr}")
    return folder


def copy_class(src: Path, dst: Path, keep: set[tuple[str, str]] | None = None,
               students: int | None = None, assignment: str | None = None) -> Path:
    """A copy of a course with its gradebook and only some submissions: the first ``students``
    students (of one ``assignment`` if given), or exactly the (student, assignment) pairs in
    ``keep``."""
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("submitted", "autograded",
                                                            "feedback", "reports", "results"))
    for student, chapter in submissions(src):
        wanted = (keep is not None and (student, chapter) in keep) or (
            students is not None and int(student.removeprefix("student")) <= students
            and assignment in (None, chapter))
        if wanted:
            shutil.copytree(src / "submitted" / student / chapter,
                            dst / "submitted" / student / chapter)
    return dst


def submissions(course: Path) -> list[tuple[str, str]]:
    return sorted((p.parent.name, p.name) for p in (course / "submitted").glob("*/*") if p.is_dir())


def assignments(course: Path) -> list[str]:
    return sorted(p.name for p in (course / "source").iterdir() if p.is_dir())


# ---------------------------------------------------------------- the two graders


def nbgrader_autograde(course: Path, logs: Path) -> Run:
    """Stock nbgrader as instructors run it: one ``autograde`` per assignment, serially."""
    total = Run(0.0, 0.0, 0, "")
    for assignment in sorted({a for _, a in submissions(course)}):
        run = timed([str(BIN / "nbgrader"), "autograde", assignment], cwd=course,
                    log=logs / f"nbgrader-{assignment}.log")
        total = Run(total.seconds + run.seconds, max(total.peak_mib, run.peak_mib),
                    total.returncode or run.returncode, str(logs), total.cpu_s + run.cpu_s)
    return total


def gradtutor_grade(course: Path, workers: int, log: Path, *extra: str) -> Run:
    return timed([str(BIN / "gradtutor"), "grade", str(course), "--workers", str(workers), *extra],
                 log=log)


def grade_profile(course: Path) -> dict:
    """The last ``gradtutor grade --profile`` run's per-step figures (its JSON)."""
    path = course / "gradtutor" / "grade-profile.json"
    return json.loads(path.read_text()) if path.exists() else {}


def profile_table(log: Path) -> str:
    """The profile table ``gradtutor grade --profile`` printed at the end of its log."""
    text = log.read_text()
    start = text.rfind("profile: ")
    end = text.find("Profile saved", start)
    return text[start:end].rstrip() if start >= 0 else ""


def gradtutor_regrade(course: Path, log: Path, *, force: bool, units: Path | None = None) -> Run:
    """``gradtutor regrade``: the stored answers judged again, no notebook run; with ``force``
    every answer is judged and every submission stored again (gradebook, results, autograded
    notebooks), the most a change can cost. ``units``: a folder holding an ``exercises``
    package to grade with instead of the repository's (put first on the import path)."""
    extra = {} if units is None else {
        "PYTHONPATH": os.pathsep.join([str(units), str(REPO), os.environ.get("PYTHONPATH", "")])}
    return timed([str(BIN / "gradtutor"), "regrade", str(course), *(["--force"] if force else [])],
                 log=log, cwd=units, extra_env=extra)


def edited_units(folder: Path, chapter: str, unit: str, old: str, new: str) -> Path:
    """A copy of the repository's exercise units with one unit's text edited."""
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(REPO / "exercises", folder / "exercises",
                    ignore=shutil.ignore_patterns("__pycache__"))
    path = folder / "exercises" / chapter / f"{unit}.py"
    text = path.read_text()
    if old not in text:
        raise RuntimeError(f"{path}: {old!r} not found, update bench/run's edit")
    path.write_text(text.replace(old, new, 1))
    return folder


def gradebook_scores(course: Path) -> dict[tuple[str, str, str], float | None]:
    """(student, assignment, grade cell) -> score, read straight from nbgrader's SQLite file."""
    query = """
        SELECT sa.student_id, a.name, bc.name,
               COALESCE(g.manual_score, g.auto_score)
        FROM grade g
        JOIN grade_cells gc ON g.cell_id = gc.id
        JOIN base_cell bc ON bc.id = gc.id
        JOIN submitted_notebook sn ON g.notebook_id = sn.id
        JOIN submitted_assignment sa ON sn.assignment_id = sa.id
        JOIN assignment a ON sa.assignment_id = a.id"""
    with sqlite3.connect(f"file:{course / 'gradebook.db'}?mode=ro", uri=True) as db:
        return {(s, a, c): score for s, a, c, score in db.execute(query)}


def compare_scores(stock: dict, ours: dict, pairs: set[tuple[str, str]]
                   ) -> tuple[list[str], list[str]]:
    """Differences, exercise by exercise, on the same submissions; and the cells nbgrader left
    ungraded (None: it could not run the notebook) where gradtutor recorded 0 with a reason,
    which is the score nbgrader's totals count for them too."""
    keys = sorted(k for k in set(stock) | set(ours) if (k[0], k[1]) in pairs)
    diffs, ungraded = [], []
    for key in keys:
        a, b = stock.get(key, "missing"), ours.get(key, "missing")
        if a is None and b == 0.0:
            ungraded.append("/".join(key))
        elif a != b and not (isinstance(a, float) and isinstance(b, float) and abs(a - b) < 1e-6):
            diffs.append(f"{'/'.join(key)}: nbgrader {a}, gradtutor {b}")
    return diffs, ungraded


@dataclass(frozen=True)
class Ceiling:
    """What the course's own work allows against stock nbgrader (#28's "which step holds it")."""

    ratio_at_floor: float  # the ratio of a grader with no cost beyond the floor, on ``workers`` cores
    cores_at_floor: float  # cores such a grader would need for ``target``
    cores_as_measured: float  # cores the measured grader (its CPU per submission) would need
    target: float


def ceiling(*, stock_s: float, floor_s: float, cpu_s: float, workers: int,
            target: float = 100) -> Ceiling:
    """``stock_s``: stock nbgrader's wall seconds per submission, serially; ``floor_s``: the
    floor's seconds per submission in one process; ``cpu_s``: the grader's CPU seconds per
    submission, every process. A grader cannot beat the floor shared by its cores, so
    ``stock_s / (floor_s / workers)`` bounds its ratio whatever it does besides."""
    return Ceiling(ratio_at_floor=stock_s * workers / floor_s,
                   cores_at_floor=target * floor_s / stock_s,
                   cores_as_measured=target * cpu_s / stock_s, target=target)
