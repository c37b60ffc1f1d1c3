"""Trusted side: where a grading run's time goes, step by step (``gradtutor grade --profile``).

The parent times its own steps (wall clock and its own CPU time); each child reports the wall
time of its steps in its ``ready`` and ``done`` messages (``autograder.contract``: a fixed set of
names, bounded numbers). A child's figures are only a profile: student code could misreport the
ones after ``ready``, and nothing but this table ever reads them. The table says, per step, how
often it ran, its total and its cost per submission, and how busy the parent was: a parent busy
most of the wall clock sets the pace, whatever the workers could do.
"""

from __future__ import annotations

import json
import os
import resource
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Step:
    count: int = 0
    wall_s: float = 0.0
    cpu_s: float = 0.0
    minflt: int = 0  # page faults (a child's own report): minor, mostly copy-on-write after its fork
    majflt: int = 0  # major: a page read from disk


# the parent's steps, in the order a submission meets them (a step not listed sorts last)
PARENT_ORDER = (
    "start: imports", "start: zygote spawned", "start: judge's imports", "start: find submissions",
    "start: skip graded", "start: read notebooks", "start: wait for zygote",
    "start: cgroups", "start: gradebook open", "references", "read notebook",
    "walks chosen", "fork request", "fork wait", "cgroup placement", "job encode", "job write", "read messages",
    "poll and reap", "recorder: encode", "judge", "autograded notebook", "gradebook", "results file",
    "wait for children",
)


def _process_age() -> float:
    """Seconds since this process started (from /proc: the interpreter's own start-up counts)."""
    try:
        ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
        uptime = float(Path("/proc/uptime").read_text().split()[0])
        return max(0.0, uptime - ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return 0.0


@dataclass
class Profile:
    """Per-step totals of one run; ``enabled=False`` makes every call nearly free."""

    enabled: bool = False
    parent: dict[str, Step] = field(default_factory=dict)
    child: dict[str, Step] = field(default_factory=dict)
    recorder: dict[str, Step] = field(default_factory=dict)  # the recorder's process (its report)
    recorder_cpu_s: float | None = None  # all of the recorder process's CPU
    parent_cpu_s: float | None = None  # all of this process's CPU (its threads), at ``finish``
    marks: dict[str, float] = field(default_factory=dict)  # seconds since the process started
    counts: dict[str, int] = field(default_factory=dict)  # events worth counting (e.g. references computed)
    chapters: dict[str, dict[str, Step]] = field(default_factory=dict)  # child steps per assignment
    zygote: dict[str, Step] = field(default_factory=dict)  # its warm-up and walks (its report)
    zygote_cpu_s: float | None = None  # all of the zygote's CPU, read as it is closed
    submissions: int = 0
    wall_s: float = 0.0
    _origin: float = 0.0  # perf_counter() at process start

    def __post_init__(self) -> None:
        self._origin = time.perf_counter() - _process_age()

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        if not self.enabled:
            yield
            return
        wall, cpu = time.perf_counter(), time.thread_time()
        try:
            yield
        finally:
            self.add(name, time.perf_counter() - wall, time.thread_time() - cpu)

    def add(self, name: str, wall_s: float, cpu_s: float = 0.0, *, child: bool = False) -> None:
        if not self.enabled:
            return
        step = (self.child if child else self.parent).setdefault(name, Step())
        step.count += 1
        step.wall_s += wall_s
        step.cpu_s += cpu_s

    def add_child(self, spent: tuple[tuple[str, float], ...],
                  usage: tuple[tuple[str, float, int, int], ...] = (), *, chapter: str = "") -> None:
        """A child's report: the wall time of its steps, and their CPU and page faults."""
        if not self.enabled:
            return
        for name, seconds in spent:
            self.add(name, seconds, child=True)
            if chapter:
                self._chapter_step(chapter, name).wall_s += seconds
        reported = {name for name, _ in spent}
        for name, cpu_s, minflt, majflt in usage:
            if name not in reported:  # a step with no wall time of its own ("after fork")
                self.child.setdefault(name, Step()).count += 1
            for step in (self.child.setdefault(name, Step()),
                         *((self._chapter_step(chapter, name),) if chapter else ())):
                step.cpu_s += cpu_s
                step.minflt += minflt
                step.majflt += majflt

    def add_zygote(self, name: str, cpu_s: object) -> None:
        """The zygote's CPU for its warm-up or a walk (its report, a profile figure)."""
        if self.enabled and type(cpu_s) in (int, float) and 0 <= cpu_s < 86_400:  # type: ignore[operator]
            step = self.zygote.setdefault(name[:40], Step())
            step.count += 1
            step.cpu_s += float(cpu_s)  # type: ignore[arg-type]

    def add_chapter(self, chapter: str, name: str, wall_s: float) -> None:
        """One more of a chapter's children: ``name``'s figure (e.g. its cgroup's CPU)."""
        if self.enabled:
            step = self._chapter_step(chapter, name)
            step.count += 1
            step.wall_s += wall_s

    def _chapter_step(self, chapter: str, name: str) -> Step:
        return self.chapters.setdefault(chapter, {}).setdefault(name, Step())

    def merge_recorder(self, report: dict) -> None:
        """The recorder process's profile (``recorder.Storing.send_profile``): its steps, its
        counts added to ours, its marks (``perf_counter`` times: one clock for every process
        of the machine) as seconds since this process started."""
        if not self.enabled:
            return
        for name, (count, wall_s, cpu_s) in report.get("steps", {}).items():
            step = self.recorder.setdefault(str(name), Step())
            step.count += int(count)
            step.wall_s += float(wall_s)
            step.cpu_s += float(cpu_s)
        for name, n in report.get("counts", {}).items():
            self.count(str(name), int(n))
        for name, at in report.get("marks", {}).items():
            self.marks.setdefault(str(name), float(at) - self._origin)
        self.recorder_cpu_s = float(report.get("cpu_s", 0.0))

    def count(self, name: str, n: int = 1) -> None:
        if self.enabled:
            self.counts[name] = self.counts.get(name, 0) + n

    def since_start(self) -> float:
        """Seconds since the process started (the interpreter and the imports included)."""
        return time.perf_counter() - self._origin

    def mark(self, name: str) -> None:
        """The first time the run reaches ``name``, in seconds since the process started."""
        if self.enabled and name not in self.marks:
            self.marks[name] = self.since_start()

    def finish(self, submissions: int) -> None:
        self.submissions = submissions
        usage = resource.getrusage(resource.RUSAGE_SELF)
        self.parent_cpu_s = usage.ru_utime + usage.ru_stime
        self.wall_s = self.since_start()

    def to_json(self) -> dict:
        def steps(table: dict[str, Step]) -> dict:
            return {k: {"count": s.count, "wall_s": round(s.wall_s, 6), "cpu_s": round(s.cpu_s, 6),
                        **({"minflt": s.minflt, "majflt": s.majflt} if s.minflt or s.majflt else {})}
                    for k, s in table.items()}

        return {"submissions": self.submissions, "wall_s": round(self.wall_s, 3),
                "marks_s": {k: round(v, 3) for k, v in self.marks.items()}, "counts": self.counts,
                "parent": steps(self.parent), "child": steps(self.child),
                "recorder": steps(self.recorder), "parent_cpu_s": self.parent_cpu_s,
                "chapters": {c: steps(t) for c, t in self.chapters.items()},
                "zygote": steps(self.zygote), "zygote_cpu_s": self.zygote_cpu_s,
                "recorder_cpu_s": self.recorder_cpu_s}

    def table(self) -> str:
        n = max(self.submissions, 1)
        waiting = self.parent.get("wait for children", Step()).wall_s
        cpu = sum(s.cpu_s for s in self.parent.values())
        lines = [f"profile: {self.submissions} submission(s), {self.wall_s:.2f} s from process start"]
        lines += [f"  {name}: {at:.2f} s" for name, at in self.marks.items()]
        lines += [f"  {name}: {n}" for name, n in self.counts.items()]
        lines.append(f"  {'parent step':<24} {'count':>6} {'total s':>8} {'ms/sub':>8} {'cpu ms/sub':>10}")
        for name in sorted(self.parent, key=_order):
            s = self.parent[name]
            lines.append(f"  {name:<24} {s.count:>6} {s.wall_s:>8.2f} {1e3 * s.wall_s / n:>8.1f} "
                         f"{1e3 * s.cpu_s / n:>10.1f}")
        lines.append(f"  the parent's steps used {cpu:.2f} s of CPU in {self.wall_s:.2f} s; the loop "
                     f"waited for children {waiting:.2f} s")
        if self.recorder:
            lines.append(f"  {'recorder step (its process)':<24} {'count':>6} {'total s':>8} {'ms/sub':>8} "
                         f"{'cpu ms/sub':>10}")
            for name in sorted(self.recorder, key=_order):
                s = self.recorder[name]
                lines.append(f"  {name:<24} {s.count:>6} {s.wall_s:>8.2f} {1e3 * s.wall_s / n:>8.1f} "
                             f"{1e3 * s.cpu_s / n:>10.1f}")
        for name, s in self.zygote.items():
            lines.append(f"  zygote: {name:<28} {s.count:>3} x, {s.cpu_s:.2f} s of CPU")
        for who, spent in (("the parent process", self.parent_cpu_s),
                           ("the recorder's process", self.recorder_cpu_s),
                           ("the zygote", self.zygote_cpu_s)):
            if spent is not None:
                lines.append(f"  {who} used {spent:.2f} s of CPU in all ({1e3 * spent / n:.1f} ms per "
                             "submission, its start-up included)")
        if self.child:
            lines.append(f"  {'child step (its report)':<24} {'count':>6} {'total s':>8} {'ms/sub':>8} "
                         f"{'cpu ms/sub':>10} {'minflt/sub':>10} {'majflt/sub':>10}")
            for name, s in self.child.items():
                lines.append(f"  {name:<24} {s.count:>6} {s.wall_s:>8.2f} {1e3 * s.wall_s / n:>8.1f} "
                             f"{1e3 * s.cpu_s / n:>10.1f} {s.minflt / n:>10.0f} {s.majflt / n:>10.1f}")
        lines += self._chapter_lines()
        return "\n".join(lines)

    def _chapter_lines(self) -> list[str]:
        """Per assignment, per child: its cgroup's CPU, and the CPU and minor faults of its
        cells and answer re-runs (its report)."""
        if len(self.chapters) < 1:
            return []
        cols = ("child: after fork", "child: cells", "child: answer re-runs")
        lines = [f"  {'per child, by assignment':<24} {'count':>6} {'cgroup cpu ms':>13} "
                 + " ".join(f"{c.removeprefix('child: ')[:13] + ' cpu/flt':>22}" for c in cols)]
        for chapter, table in sorted(self.chapters.items()):
            cg = table.get(CGROUP_CPU, Step())
            k = max(cg.count, 1)
            steps = [table.get(c, Step()) for c in cols]
            row = " ".join(f"{1e3 * s.cpu_s / k:>12.1f} {s.minflt / k:>9.0f}" for s in steps)
            lines.append(f"  {chapter:<24} {cg.count:>6} {1e3 * cg.wall_s / k:>13.1f} {row}")
        return lines

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_json(), indent=1))


def _order(name: str) -> tuple[int, str]:
    return (PARENT_ORDER.index(name) if name in PARENT_ORDER else len(PARENT_ORDER), name)


CGROUP_CPU = "child: CPU, all its processes (its cgroup)"
OFF = Profile()  # the default: nothing recorded
