"""Trusted side: the parent's side of the sandbox: start the zygote, hand each child its job, read it.

The zygote (``autograder.sandbox.zygote``) is a fresh interpreter started from a copy of the
student runtime, so no child can inherit the answer key, a source notebook, the roster or a
classmate's cells from it. For each submission the parent makes two pipes, asks the zygote to
fork a child with them (one fresh uid per submission), writes that submission's job into the
child, and reads its typed messages (``autograder.contract``). As root each child is init of a
PID namespace of its own: one SIGKILL from the parent, sent through a pidfd (no pid reuse) at the
notebook deadline or when the child says it is done, ends every process of the submission, with
no help from any of them (a fork bomb, a stopped process, a grandchild holding the pipe). Every
wait here has a deadline the parent enforces alone.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import selectors
import shutil
import signal
import socket
import stat
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable, Iterable, Sized
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import autograder
import exercises
import gradtutor
from autograder.contract import MALFORMED, Done, Job, Message, Ready, encode_job, parse_message
from autograder.sandbox.limits import UIDS_PER_BATCH, Limits, describe, uid_block
from gradtutor.grading import cgroups
from gradtutor.grading.outcome import Outcome
from gradtutor.grading.profile import CGROUP_CPU, OFF, Profile

NEEDS_ROOT = ("gradtutor grade needs root, to run each submission as its own user in its own mount "
              "namespace: run it with sudo, as root in a container (docs/grading.md), or with rootless "
              "podman (`podman run --userns=auto ...`).")
MAX_OUTPUT_BYTES = 8 * 2**20  # answers are small; a child flooding its pipe is cut off
ZYGOTE_START_SECONDS = 300
JOB_WRITE_SECONDS = 30  # a child reads its job as soon as it is set up, before any student code
BOOT = ("import sys; sys.path[0:0] = sys.argv[2:]; "
        "from autograder.sandbox.zygote import main; main(int(sys.argv[1]))")


STUDENT_PYTHON = "GRADTUTOR_STUDENT_PYTHON"  # the default of `gradtutor grade --student-python`
_PROBE = ("import json, sys, sysconfig; p = sysconfig.get_paths(); "
          "print(json.dumps([sys.prefix, sys.base_prefix, p['purelib'], p['platlib']]))")


class SandboxError(RuntimeError):
    """The sandbox itself failed (never the student's doing)."""


@dataclass(frozen=True)
class Interpreter:
    """The Python the zygote runs: the students' interpreter and packages, so a grade sees the
    same torch as the self-check did. Its prefixes stay visible to the children; its
    site-packages are all the zygote imports from, besides the copied runtime."""

    executable: str
    prefixes: tuple[str, ...]
    site: tuple[str, ...]

    @classmethod
    def current(cls) -> Interpreter:
        paths = sysconfig.get_paths()
        return cls(sys.executable, (sys.prefix, sys.base_prefix),
                   tuple(dict.fromkeys((paths["purelib"], paths["platlib"]))))

    @classmethod
    def at(cls, python: str | Path) -> Interpreter:
        """Another interpreter (a students' environment), asked for its own paths. It runs no
        student code: ``-I`` keeps PYTHONPATH and the user's site out."""
        try:
            done = subprocess.run([str(python), "-I", "-c", _PROBE], capture_output=True, text=True,
                                  timeout=60, stdin=subprocess.DEVNULL, env={"LANG": "C.UTF-8"})
            prefix, base, purelib, platlib = json.loads(done.stdout)
        except (OSError, subprocess.SubprocessError, ValueError) as e:
            raise SandboxError(f"{python} did not run as a Python interpreter ({e})") from e
        return cls(str(python), (prefix, base), tuple(dict.fromkeys((purelib, platlib))))

    def keep(self) -> set[Path]:
        """What the children must still read inside folders hidden from them."""
        return {Path(p).resolve() for p in (*self.prefixes, *self.site)}

    def unreadable(self) -> list[str]:
        """Folders of this interpreter that another user cannot enter and read: the children,
        each a user of its own, could not import from them (a staff-only environment). Folders
        above them that the sandbox rebuilds (the grader's home, the scratch folders) are
        traversable there whatever their modes here."""
        rebuilt = [Path.home().resolve(), *(Path(p) for p in ("/tmp", "/var/tmp", "/dev/shm"))]
        bad = []
        for top in sorted(self.keep()):
            for folder in (top, *top.parents):
                if folder != top and any(folder.is_relative_to(r) for r in rebuilt):
                    break
                try:
                    mode = folder.stat().st_mode
                except OSError:
                    bad.append(str(folder))
                    break
                need = stat.S_IXOTH | (stat.S_IROTH if folder == top else 0)
                if mode & need != need:
                    bad.append(f"{folder} (mode {stat.filemode(mode)})")
                    break
        return sorted(set(bad))


def interpreter(python: str | Path | None) -> Interpreter:
    """``python``, else $GRADTUTOR_STUDENT_PYTHON, else this interpreter; refused with a
    reason when other users cannot read it (as root only: without root the children keep
    the grader's own uid)."""
    python = python or os.environ.get(STUDENT_PYTHON) or None
    found = Interpreter.at(python) if python else Interpreter.current()
    bad = found.unreadable() if os.geteuid() == 0 else []
    if bad:
        raise SandboxError(
            f"the grader runs each submission as a user of its own, and such a user cannot read "
            f"{', '.join(bad)}, part of the Python at {found.executable}: torch's lazily loaded "
            "modules would fail in every notebook. Grade with the students' interpreter "
            "(--student-python /opt/gradtutor/student/bin/python on the class hub, or set "
            f"{STUDENT_PYTHON}), or make that environment readable by all (chmod -R o+rX).")
    return found


@dataclass
class _Running:
    serial: int
    uid: int
    rfd: int
    outcome: Outcome
    expected: dict[str, int]
    deadline: float
    started: float
    pid: int | None = None
    pidfd: int | None = None  # as root: the child's, for a kill that cannot reach a reused pid
    buffer: bytearray = field(default_factory=bytearray)
    received: int = 0
    eof: bool = False
    status: int | None = None
    done: bool = False
    group: cgroups.Group | None = None  # its cgroup, when the host gives the grader cgroups
    ready_at: float | None = None  # when its "ready" arrived (the profile's set-up time)
    cpu_s: float | None = None  # CPU of all its processes, read from its cgroup at its end (profile)
    job_w: int | None = None  # the job pipe's end, open until its job is written (a spare's wait)
    settled: bool = False  # the zygote answered its fork request; placed in its group if forked


# what the zygote's copy of the runtime leaves out: caches, build state, the check data (the
# answer key's public half, not needed to grade) and the packaging file (nothing builds it there)
_NOT_COPIED = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build", "_data",
                                     "pyproject.toml")


def runtime_tree(dest: Path) -> Path:
    """The student runtime's ``autograder`` package copied under ``dest``, without data: all
    the zygote may import."""
    target = dest / "autograder"
    shutil.copytree(Path(autograder.__file__).parent, target, ignore=_NOT_COPIED)
    return target


def hidden_paths(course_dir: Path | None, python: Interpreter | None = None) -> tuple[list[str], list[str]]:
    """(folders student code must find empty, folders inside them it still needs).

    Hidden: the course, the exercise units, the trusted package, the runtime's source and the
    checkout, the grading user's home. Kept: the interpreter's prefixes (the venv and the base
    Python) and its site-packages, bound back in place inside whatever hides them, so lazy
    imports still read the standard library and the site-packages.
    """
    keep = sorted((python or Interpreter.current()).keep())
    hide = {Path(m.__file__).resolve().parent for m in (exercises, autograder, gradtutor)}
    if course_dir is not None:
        hide.add(course_dir.resolve())
    checkout = Path(exercises.__file__).resolve().parent.parent
    if (checkout / "pyproject.toml").exists():
        hide.add(checkout)
    if Path.home().resolve() != Path("/"):
        hide.add(Path.home().resolve())
    if Path("/run").is_dir():  # host daemons' sockets, /run/lock, a container's /run/secrets
        hide.add(Path("/run").resolve())
    hide.discard(Path("/"))
    # a folder inside another hidden one needs no mount of its own, unless a kept one is between
    out = [p for p in hide if not any(p != q and p.is_relative_to(q) and
                                       not any(p.is_relative_to(k) and k.is_relative_to(q) for k in keep)
                                       for q in hide)]
    return [str(p) for p in sorted(out, key=lambda p: len(p.parts))], [str(k) for k in keep]


class Sandbox:
    """The zygote, and the children forked from it, ``workers`` at a time."""

    def __init__(self, *, limits: Limits, course_dir: Path | None, imports: Iterable[str] | None = (),
                 python: Interpreter | None = None, profile: Profile = OFF, walks_told: bool = False) -> None:
        """Start the zygote. ``imports=None``: the lessons' import lines follow
        (``send_imports``), so the zygote starts warming up before the caller has read them.
        ``walks_told``: the zygote walks none of torch's lazy paths until ``send_walks`` names
        them (else all, unless it names fewer)."""
        python = python or Interpreter.current()
        self.profile = profile
        self.limits = limits
        self.root = os.geteuid() == 0
        self.serial = 0
        self.uid_base = uid_block(os.getpid())
        self.tree = Path(tempfile.mkdtemp(prefix="gradtutor-runtime-"))
        runtime_tree(self.tree)
        os.chmod(self.tree, 0o755)
        self.ctl, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        paths = [str(self.tree), *python.site]
        env = {k: os.environ[k] for k in ("PATH", "LANG", "LC_ALL") if k in os.environ}
        self.process = subprocess.Popen(
            [python.executable, "-I", "-S", "-c", BOOT, str(theirs.fileno()), *paths],
            pass_fds=(theirs.fileno(),), cwd="/", env=env, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        theirs.close()
        self.exited: dict[int, int] = {}
        self.forked: dict[int, int | None] = {}
        self.spares: list[_Running] = []  # forked ahead, waiting for a job (oldest first)
        self.groups: cgroups.Groups | None = None
        hide, keep = hidden_paths(course_dir, python)
        self._send({"op": "config", "limits": limits.to_json(), "root": self.root, "hide": hide,
                    "keep": keep, "imports": None if imports is None else sorted(set(imports)),
                    "walks_told": walks_told})
        self.ready = False
        self.imports_sent = imports is not None

    def send_imports(self, imports: Iterable[str], *, later: Iterable[str] = ()) -> None:
        """The lessons' import lines, for a zygote started with ``imports=None``: ``imports``
        run before the first fork (the first children's chapter), ``later`` between forks
        (chapters whose children come later: ch11's scikit-learn alone costs 1.2 s of CPU)."""
        if not self.imports_sent:
            self._send({"op": "imports", "imports": sorted(set(imports))})
            self.imports_sent = True
        later = sorted(set(later) - set(imports))
        if later:
            self._send({"op": "imports", "imports": later})

    def send_walks(self, names: Iterable[str]) -> None:
        """Only these of torch's lazy paths are walked (``autograder.sandbox.walks``): those the
        chapters being graded take (``gradtutor.grading.torch_uses``)."""
        self._send({"op": "walks", "walks": list(names)})

    def wait_ready(self) -> None:
        """The zygote warms up while the caller does its own work; wait for it here."""
        if not self.ready:
            self.send_imports(())  # none were sent: the zygote must not wait for them
            with self.profile.step("start: wait for zygote"):
                self._await(lambda m: m.get("op") == "ready", ZYGOTE_START_SECONDS, "start")
            self.profile.mark("zygote ready")  # as this process sees it (it may come later)
            self.ready = True

    # --- control channel ---

    def _send(self, message: dict, fds: list[int] | None = None) -> None:
        data = json.dumps(message).encode()
        if fds:
            socket.send_fds(self.ctl, [data], fds)
        else:
            self.ctl.send(data)

    def _receive(self, timeout: float) -> dict | None:
        if not _readable(self.ctl, timeout):
            return None
        data = self.ctl.recv(1 << 16)
        if not data:
            raise SandboxError(f"the grading sandbox stopped: {self._stderr()}")
        message = json.loads(data)
        if message.get("op") == "imported":
            self.profile.mark("later imports loaded")
        elif message.get("op") in ("walked", "ready"):  # the zygote's CPU: a profile figure
            self.profile.add_zygote(str(message.get("walk", "imports and warm-up")), message.get("cpu"))
        elif message.get("op") == "exited":
            self.exited[int(message["pid"])] = int(message["status"])
        elif message.get("op") in ("forked", "fork_failed"):
            if message.get("op") == "forked":
                # when the first child exists: the zygote answers a request only between walks
                self.profile.mark("first child forked")
            self.forked[int(message["serial"])] = message.get("pid")
            # an "exited" of an earlier process with this pid came first: it is not this child's
            self.exited.pop(message.get("pid"), None)
        return message

    def _await(self, wanted: Callable[[dict], bool], seconds: float, what: str) -> dict:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            message = self._receive(min(1.0, max(0.0, end - time.monotonic())))
            if message is not None and wanted(message):
                return message
            if self.process.poll() is not None:
                raise SandboxError(f"the grading sandbox could not {what}: {self._stderr()}")
        raise SandboxError(f"the grading sandbox did not {what} within {seconds:g} s")

    def _stderr(self) -> str:
        if self.process.poll() is None or self.process.stderr is None:
            return "(still running)"
        return self.process.stderr.read().decode(errors="replace")[-2000:].strip() or \
            f"exit status {self.process.returncode}"

    def close(self) -> None:
        if self.profile.enabled and self.process.poll() is None:
            self.profile.zygote_cpu_s = _cpu_seconds(self.process.pid)
        with contextlib.suppress(OSError):
            self.ctl.close()
        if not self.ready:  # still warming up (nothing to grade after all): it forked nothing
            self.process.kill()
        with contextlib.suppress(Exception):
            self.process.wait(timeout=10)
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.tree, ignore_errors=True)

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # --- children ---

    def _start(self, key: Any, job: Job) -> _Running:
        """``job`` handed to a spare child (forked, placed in its group, its set-up under way or
        done: no student byte has reached it), or to one forked now when none is left. Its
        notebook deadline starts here."""
        run = self.spares.pop(0) if self.spares else self._fork()
        self._settle(run, wait=True)
        now = time.monotonic()
        run.outcome.key, run.started, run.deadline = key, now, now + self.limits.notebook_seconds
        run.expected = {eid: len(spec.setups) for eid, spec in job.specs.items()}
        if not run.outcome.not_graded and run.job_w is not None:
            with self.profile.step("job encode"):
                data = encode_job(job)
            with self.profile.step("job write"):
                written = _write_all(run.job_w, data, JOB_WRITE_SECONDS)
            if written is not None:
                run.outcome.not_graded = f"the sandbox child {written} before it was set up"
                self._kill(run)
        _close_job_pipe(run)
        os.set_blocking(run.rfd, False)
        return run

    def _fork(self) -> _Running:
        """Ask the zygote for a child, with its two pipes and its own uid; the answer is taken in
        by ``_settle``, meanwhile the parent goes on."""
        serial, self.serial = self.serial, self.serial + 1
        uid = self.uid_base + serial % UIDS_PER_BATCH
        job_r, job_w = os.pipe()
        ans_r, ans_w = os.pipe()
        self.profile.mark("first fork requested")
        with self.profile.step("fork request"):
            try:
                self._send({"op": "fork", "serial": serial, "uid": uid}, [job_r, ans_w])
            finally:
                os.close(job_r)
                os.close(ans_w)
        return _Running(serial, uid, ans_r, Outcome(None), {}, 0.0, 0.0, job_w=job_w)

    def _settle(self, run: _Running, *, wait: bool) -> None:
        """The zygote's answer for ``run`` (waited for when ``wait``); a forked child goes into a
        cgroup of its own before anything else is written to it."""
        if run.settled or (not wait and run.serial not in self.forked):
            return
        if run.serial not in self.forked:
            with self.profile.step("fork wait"):
                self._await(lambda m: m.get("serial") == run.serial and
                            m.get("op") in ("forked", "fork_failed"), 30, "fork a child")
        run.settled = True
        run.pid = self.forked.pop(run.serial)
        if run.pid is None:
            run.outcome.not_graded = "the sandbox could not fork a child for it"
        elif not self._place(run):
            run.outcome.not_graded = "the grader could not give it a cgroup of its own"
        elif self.root:
            with contextlib.suppress(OSError):  # gone already: so is its namespace
                run.pidfd = os.pidfd_open(run.pid)

    def _spares(self, wanted: int) -> None:
        """Keep ``wanted`` children forked ahead, and settle those the zygote has answered for:
        their fork, namespaces, mounts, limits and cgroup happen while the others run. Each is
        still one fresh fork for one submission; it waits for its job with nothing of any."""
        while len(self.spares) < wanted:
            self.spares.append(self._fork())
        for run in self.spares:
            self._settle(run, wait=False)

    def _drop_spares(self) -> None:
        """Spares no job came for: their job pipes close (a child still setting up reads an
        empty job and exits before any student code), and each is killed with its group."""
        for run in self.spares:
            _close_job_pipe(run)
            self._kill(run)
            _close_pidfd(run)
            os.close(run.rfd)
        self.spares.clear()

    def grade_all(self, jobs: Iterable[tuple[Any, Job]], *, workers: int,
                  on_done: Callable[[Outcome], None], count: int | None = None) -> None:
        """Run every job in its own child, ``workers`` at a time; ``on_done`` gets each outcome.
        ``count`` (at most how many jobs ``jobs`` yields, when it is read lazily) bounds the
        children forked ahead."""
        self.wait_ready()
        if self.groups is None:
            with self.profile.step("start: cgroups"):
                self.groups, note = cgroups.open_groups(self.limits, workers, root=self.root)
            if note:
                print(note, file=sys.stderr)
        pending = _Pending(jobs, count)
        running: dict[int, _Running] = {}
        sel = selectors.DefaultSelector()

        def fill() -> list[Outcome]:
            failed = []
            while pending and len(running) < max(1, workers):
                run = self._start(*pending.pop())
                if run.outcome.not_graded and run.pid is None:
                    os.close(run.rfd)
                    failed.append(run.outcome)
                    continue
                running[run.rfd] = run
                sel.register(run.rfd, selectors.EVENT_READ)
            self._spares(min(len(pending), max(1, workers)))
            return failed

        try:
            while pending or running:
                finished = fill()
                with self.profile.step("wait for children"):
                    ready = sel.select(timeout=0.02)
                with self.profile.step("read messages"):
                    for key, _ in ready:
                        _read(running[key.fd], sel)
                with self.profile.step("poll and reap"), contextlib.suppress(OSError):
                    while self._receive(0) is not None:
                        pass
                self._spares(min(len(pending), max(1, workers)))
                for run in list(running.values()):
                    with self.profile.step("poll and reap"):
                        self._poll(run, sel)
                    if run.eof and run.status is not None:
                        del running[run.rfd]
                        os.close(run.rfd)
                        _close_pidfd(run)
                        self.exited.pop(run.pid, None)
                        run.outcome.duration_s = time.monotonic() - run.started
                        self._profile_child(run)
                        if not run.outcome.started and not run.outcome.not_graded:
                            run.outcome.not_graded = ("the sandbox child stopped before it was set up "
                                                      f"({_exit_reason(run.status) or 'no reason'})")
                        finished.append(run.outcome)
                finished += fill()  # the next children run while the finished ones are recorded
                for outcome in finished:
                    on_done(outcome)
        finally:
            self._drop_spares()
            for run in running.values():
                self._kill(run)
                _close_pidfd(run)
                with contextlib.suppress(OSError):
                    os.close(run.rfd)
            if self.groups is not None:
                self.groups.close()
                self.groups = None

    def _profile_child(self, run: _Running) -> None:
        """The child's own steps, as it reported them, and the parent's view of its set-up."""
        if not self.profile.enabled:
            return
        chapter = str(getattr(run.outcome.key, "assignment", ""))  # a Submission's, in a batch
        for kind in (Ready, Done):  # the first of each: a child may send more
            first = next((m for m in run.outcome.messages if isinstance(m, kind)), None)
            if first is not None:
                self.profile.add_child(first.spent, first.usage, chapter=chapter)
        if run.ready_at is not None:
            self.profile.add("child: job to ready (parent's view)", run.ready_at - run.started, child=True)
        if run.cpu_s is not None:  # the kernel's count, whatever the child reports
            self.profile.add(CGROUP_CPU, run.cpu_s, child=True)
            if chapter:
                self.profile.add_chapter(chapter, CGROUP_CPU, run.cpu_s)
        self.profile.add("child: job to end (parent's view)", time.monotonic() - run.started, child=True)

    def _poll(self, run: _Running, sel: selectors.BaseSelector) -> None:
        if run.done and run.status is None:
            # it said its last word: free the slot now rather than wait while the kernel tears
            # down its memory; whatever it left running dies with its namespace's init, and
            # its group goes with it
            self._kill(run)
            run.status = 0
        if run.status is None and run.pid not in self.exited and self._out_of_memory(run):
            self._kill(run)  # one of its processes went over the submission's memory: all go
            run.status = -1
        if run.status is None and run.pid in self.exited:
            # init has exited, so the kernel has killed its whole namespace (as root); what it
            # wrote before is in the pipe, maybe not read yet (its "done" and its exit can arrive
            # between one read and the zygote's word): read first, then judge how it ended
            _drain(run, sel)
            run.status = self.exited.pop(run.pid)
            out_of_memory = self._out_of_memory(run)
            self._end(run)
            if not run.outcome.ended and not run.done and not out_of_memory:
                run.outcome.ended = _exit_reason(run.status) or "the notebook's process stopped before the end"
        elif run.status is None and time.monotonic() > run.deadline:
            seconds = int(run.deadline - run.started)
            run.outcome.ended = f"the whole notebook took longer than the limit ({seconds} s)"
            self._kill(run)
            run.status = -1
        if run.status is not None and not run.eof and (run.done or time.monotonic() > run.deadline + 5):
            run.eof = True  # done, or a grandchild we could not kill holds the pipe: give up on it
            sel.unregister(run.rfd)
        if run.eof and run.status is None and run.pid is not None and time.monotonic() > run.deadline + 5:
            run.status = -1

    def _kill(self, run: _Running) -> None:
        """One SIGKILL to the child. As root it is init of its PID namespace, and the kernel
        then kills every process in it; nothing of the submission is asked anything."""
        if run.pidfd is not None:
            with contextlib.suppress(OSError):  # already gone
                signal.pidfd_send_signal(run.pidfd, signal.SIGKILL)
        elif run.pid is not None and not self.root:  # no namespace without root: its group
            for kill in (os.killpg, os.kill):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    kill(run.pid, signal.SIGKILL)
        self._end(run)

    # --- cgroups (gradtutor.grading.cgroups): limits per submission ---

    def _place(self, run: _Running) -> bool:
        """The child in a group of its own, before it reads its job (no student code yet)."""
        if self.groups is None or run.pid is None:
            return True
        with self.profile.step("cgroup placement"):
            return self._join(run)

    def _join(self, run: _Running) -> bool:
        try:
            run.group = self.groups.create(f"s{run.serial}")
            run.group.join(run.pid)
        except OSError:
            self._kill(run)
            return False
        return True

    def _out_of_memory(self, run: _Running) -> bool:
        """True (and the reason recorded) when its processes together reached the submission's
        memory limit."""
        if run.group is None or run.group.removed or run.group.over_memory() == 0:
            return False
        if not run.outcome.ended and not run.done:
            run.outcome.ended = describe("memory", self.limits)
        return True

    def _end(self, run: _Running) -> None:
        """Nothing of the submission outlives it: its group killed and removed."""
        if run.group is not None and self.groups is not None:
            if self.profile.enabled and run.cpu_s is None and not run.group.ended:
                run.cpu_s = run.group.cpu_seconds()
            self.groups.retire(run.group)


class _Pending:
    """The jobs not started yet, taken from ``jobs`` one at a time as a worker frees: the
    caller may read each submission only when its child is about to be forked."""

    _END = object()

    def __init__(self, jobs: Iterable[tuple[Any, Job]], count: int | None = None) -> None:
        # at most this many left: a lazy source may skip some (unreadable notebooks)
        self._left = len(jobs) if isinstance(jobs, Sized) else count
        self._jobs = iter(jobs)
        self._next: Any = None

    def __len__(self) -> int:
        """At most how many jobs are left (1 while one is known and the count is not)."""
        if not self:
            return 0
        return 1 if self._left is None else max(1, self._left)

    def __bool__(self) -> bool:
        if self._next is None:
            self._next = next(self._jobs, self._END)
        return self._next is not self._END

    def pop(self) -> tuple[Any, Job]:
        if not self:
            raise IndexError("no job left")
        job, self._next = self._next, None
        if self._left is not None:
            self._left -= 1
        return job


def _cpu_seconds(pid: int) -> float | None:
    """A process's CPU time (user and system) from /proc; None if it cannot be read."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def _readable(sock: socket.socket, timeout: float) -> bool:
    return bool(select.select([sock], [], [], timeout)[0])


def _drain(run: _Running, sel: selectors.BaseSelector) -> None:
    """Everything already in ``run``'s pipe read (bounded as ever by ``MAX_OUTPUT_BYTES``)."""
    while not run.eof:
        before = run.received
        _read(run, sel)
        if run.received == before:
            return


def _read(run: _Running, sel: selectors.BaseSelector) -> None:
    try:
        chunk = os.read(run.rfd, 65536)
    except BlockingIOError:
        return
    if not chunk:
        run.eof = True
        sel.unregister(run.rfd)
        return
    run.received += len(chunk)
    if run.received > MAX_OUTPUT_BYTES:
        run.outcome.ended = "sent more than 8 MiB of answers; stopped"
        run.eof = True
        sel.unregister(run.rfd)
        return
    run.buffer += chunk
    *lines, rest = run.buffer.split(b"\n")
    run.buffer = bytearray(rest)
    for line in lines:
        message = _parse(line, run.expected)
        if message is None:  # dropped; the submission's result says so in the grader's words
            run.outcome.ended = run.outcome.ended or MALFORMED
            continue
        if isinstance(message, Ready) and run.outcome.started:
            continue  # only the first counts
        if not run.outcome.started and not isinstance(message, Ready):
            continue  # nothing counts before the child says it is set up
        if isinstance(message, Ready):
            run.ready_at = time.monotonic()
        run.outcome.messages.append(message)
        run.done = run.done or isinstance(message, Done)
    if len(run.buffer) > 2 * 2**20:
        run.buffer.clear()


def _parse(line: bytes, expected: dict[str, int]) -> Message | None:
    """``parse_message``, which raises nothing by contract; should it ever, the line is one
    more malformed message of this submission, never the batch's failure."""
    try:
        return parse_message(line, expected)
    except Exception:
        return None


def _exit_reason(status: int) -> str:
    if status < 0:
        return ""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        return f"the notebook's process was killed by {name}"
    code = os.WEXITSTATUS(status)
    return "" if code == 0 else f"the notebook's process exited with code {code}"


def _write_all(fd: int, data: bytes, seconds: float) -> str | None:
    """Write ``data`` into a pipe within ``seconds``; None, or what went wrong."""
    end = time.monotonic() + seconds
    os.set_blocking(fd, False)
    while data:
        left = end - time.monotonic()
        if left <= 0 or not select.select([], [fd], [], left)[1]:
            return f"did not read its job within {seconds:g} s"
        try:
            data = data[os.write(fd, data):]
        except BlockingIOError:
            continue
        except OSError:
            return "stopped"
    return None


def _close_job_pipe(run: _Running) -> None:
    if run.job_w is not None:
        os.close(run.job_w)
        run.job_w = None


def _close_pidfd(run: _Running) -> None:
    if run.pidfd is not None:
        os.close(run.pidfd)
        run.pidfd = None
