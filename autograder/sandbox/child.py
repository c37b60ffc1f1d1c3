"""Student side: one submission in one forked child of the zygote, where student code runs.

Order matters: the zygote forked this process as init of its own PID namespace; start a session
and close every inherited descriptor but the two pipes; enter mount, network, IPC and UTS
namespaces of its own (size-limited, empty /tmp, /var/tmp and /dev/shm of its own; the course,
the exercise units, the package checkout and /run hidden; /proc of its namespace; every other
mount read-only); set limits; become the submission's own uid; ``no_new_privs`` and a seccomp
filter against new user namespaces (``autograder.sandbox.seal``); scrub the environment. Only
then is the job read from its pipe: the sanitised cells and, per exercise, the setup code of
each variant to run. The child answers in typed messages (``autograder.contract``); it never
judges, and a lie told here is only data to the parent.
"""

from __future__ import annotations

import ast
import ctypes
import os
import resource
import select
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from autograder.answers import read_all, syntax_tree
from autograder.byhand import autograd_off
from autograder.contract import Job, decode_job, encode_message
from autograder.sandbox import seal
from autograder.sandbox.limits import CellTimeout, CellTimers, Limits

MAX_JOB_BYTES = 64 * 2**20

# exit codes: the parent records a child that never said "ready" as not graded (not its fault)
EXIT_SETUP_FAILED = 4

_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_BIND, _MS_REC, _MS_PRIVATE = 0x1000, 0x4000, 0x40000


@dataclass(frozen=True)
class SandboxConfig:
    limits: Limits
    hide: tuple[str, ...]  # folders (and files) that must look empty to student code
    keep: tuple[str, ...]  # folders inside hidden ones that stay as they are (the interpreter's)
    root: bool  # True when children can switch uid and mount (the grader runs as root)


def run(job_fd: int, answer_fd: int, uid: int, config: SandboxConfig, shell: Any,
        guard: Any) -> NoReturn:
    """Grade one submission in this forked process, then ``os._exit``."""
    send = _sender(answer_fd)
    clock = _Clock()  # its first reading: what the fork itself cost this process ("after fork")
    try:
        _isolate(job_fd, answer_fd)
        clock.lap("child: isolate")
        if config.root:
            _private_mounts(config, uid, clock)
        _limit(config.limits, uid, config.root)
        clock.lap("child: limits and uid")
        seal.lock_down()
        _scrub_env()
        clock.lap("child: seccomp")
        waiting = select.poll()  # a spare waits here until the parent has a job for it
        waiting.register(job_fd, select.POLLIN)
        waiting.poll()
        clock.lap("child: wait for job")
        job = decode_job(_read_all(job_fd))
        os.close(job_fd)
        clock.lap("child: read job")
    except BaseException:
        os._exit(EXIT_SETUP_FAILED)
    code = 0
    try:
        send({"type": "ready", "spent": clock.spent, "usage": clock.usage})
        spent = {"child: cells": 0.0, "child: answer re-runs": 0.0, "child: guard restore": 0.0}
        usage: dict[str, list] = {}
        run_job(job, shell, guard, send, config.limits, spent, usage)
        send({"type": "done", "spent": spent, "usage": usage})
    except BaseException:
        code = 3
    os._exit(code)


class _Clock:
    """Wall time, CPU and page faults of each set-up step, for the parent's profile
    (``gradtutor grade --profile``)."""

    def __init__(self) -> None:
        self.now = time.perf_counter  # bound now, before any student code
        self.last = self.now()
        self.usage: dict[str, list] = {}
        self.meter = _Usage(self.usage)
        self.meter.lap("child: after fork")  # a fork's child starts with its counts at zero
        self.spent: dict[str, float] = {}

    def lap(self, step: str) -> None:
        now = self.now()
        self.spent[step] = self.spent.get(step, 0.0) + now - self.last
        self.last = now
        self.meter.lap(step)


class _Usage:
    """CPU seconds and minor and major page faults of this process since the last ``lap``,
    added up per step into ``into`` (``[cpu_s, minflt, majflt]``). A minor fault in a forked
    child is mostly a page of the zygote copied on first write: the price of sharing it."""

    def __init__(self, into: dict[str, list]) -> None:
        self.into = into
        self.read = resource.getrusage  # bound now, before any student code
        self.last = (0.0, 0, 0)

    def start(self) -> None:
        r = self.read(resource.RUSAGE_SELF)
        self.last = (r.ru_utime + r.ru_stime, r.ru_minflt, r.ru_majflt)

    def lap(self, step: str) -> None:
        # right after student code: no builtin it could have replaced, and a profile figure
        # never stops the job
        try:
            r = self.read(resource.RUSAGE_SELF)
            row = self.into.setdefault(step, [0.0, 0, 0])
            cpu, minor, major = self.last
            row[0] += r.ru_utime + r.ru_stime - cpu
            row[1] += r.ru_minflt - minor
            row[2] += r.ru_majflt - major
            self.last = (r.ru_utime + r.ru_stime, r.ru_minflt, r.ru_majflt)
        except Exception:
            pass


def _isolate(job_fd: int, answer_fd: int) -> None:
    os.setsid()  # own process group: the parent kills the whole group
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    keep = sorted({0, 1, 2, job_fd, answer_fd})
    for low, high in zip(keep, [*keep[1:], max(65536, os.sysconf("SC_OPEN_MAX"))], strict=True):
        os.closerange(low + 1, high)  # the zygote's control socket, anything else inherited
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a too-big file is an OSError, not a death


def _libc() -> Any:
    return ctypes.CDLL(None, use_errno=True)


def _mount(libc: Any, source: str, target: str, fstype: str | None, flags: int, data: str | None) -> None:
    if libc.mount(source.encode(), target.encode(), fstype.encode() if fstype else None, flags,
                  data.encode() if data else None) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"mount {target}: {os.strerror(errno)}")


def _private_mounts(config: SandboxConfig, uid: int, clock: _Clock) -> None:
    """Namespaces of its own: private scratch space, the trusted side's folders hidden, the
    interpreter's folders bound back in place inside them, everything else read-only."""
    libc = _libc()
    seal.own_namespaces()
    clock.lap("child: namespaces")
    _mount(libc, "none", "/", None, _MS_REC | _MS_PRIVATE, None)  # nothing propagates back
    keep = {path: os.open(path, os.O_PATH | os.O_DIRECTORY) for path in config.keep if os.path.isdir(path)}
    inside_keep = [p for p in config.hide if any(_under(p, k) for k in keep)]
    outside = [p for p in config.hide if p not in inside_keep]
    for path in outside:
        _hide(libc, path, holds_kept=any(_under(k, path) for k in keep))
    flags = _MS_NOSUID | _MS_NODEV
    owner = f"uid={uid},gid={uid},mode=0700"
    scratch = ["/tmp", *(p for p in ("/var/tmp", "/dev/shm") if os.path.isdir(p))]
    for path in scratch:
        size = config.limits.scratch_mib if path == "/tmp" else 16
        _mount(libc, "gradtutor-tmp", path, "tmpfs", flags, f"size={size}m,{owner}")
    # the interpreter's folders back in place, wherever they were covered: a venv inside a
    # hidden checkout, Python in a hidden home, a checkout under /tmp
    for path, fd in keep.items():
        if any(_under(path, h) for h in [*outside, *scratch]):
            os.makedirs(path, exist_ok=True)
            _mount(libc, f"/proc/self/fd/{fd}", path, None, _MS_BIND | _MS_REC, None)
        os.close(fd)
    for path in inside_keep:  # e.g. the exercise units installed in the venv's site-packages
        _hide(libc, path, holds_kept=False)

    def mount(source: str, target: str, fstype: str, flags: int, data: str | None) -> None:
        _mount(libc, source, target, fstype, flags, data)

    seal.mount_proc(mount)
    seal.mount_mqueue(mount)
    seal.read_only_except(scratch)
    os.chdir("/tmp")
    clock.lap("child: mounts")


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _hide(libc: Any, path: str, *, holds_kept: bool) -> None:
    """An empty folder over a folder (root's, traversable when a kept folder is bound inside
    it, never writable by the child), an empty file over a file."""
    if os.path.isdir(path):
        mode = "0755" if holds_kept else "0555"
        flags = _MS_NOSUID | _MS_NODEV | _MS_NOEXEC | (0 if holds_kept else _MS_RDONLY)
        _mount(libc, "gradtutor-hidden", path, "tmpfs", flags, f"size=64k,mode={mode}")
    elif os.path.isfile(path):
        _mount(libc, "/dev/null", path, None, _MS_BIND, None)


def _limit(limits: Limits, uid: int, root: bool) -> None:
    mib = 2**20
    resource.setrlimit(resource.RLIMIT_AS, (_vm_size() + limits.memory_mib * mib,) * 2)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_mib * mib,) * 2)
    resource.setrlimit(resource.RLIMIT_CPU, (limits.notebook_seconds + 5,) * 2)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if root:  # RLIMIT_NPROC does not bind root: become the submission's own nobody first
        resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes,) * 2)
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)


def _vm_size() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    return 4 * 2**30


def _scrub_env() -> None:
    # nothing says "grading": no NBGRADER_EXECUTION, no course paths, no tokens of the parent
    keep = {k: os.environ[k] for k in ("PATH", "LANG", "LC_ALL") if k in os.environ}
    os.environ.clear()
    os.environ.update(keep, HOME="/tmp", MPLBACKEND="Agg", MPLCONFIGDIR="/tmp", OMP_NUM_THREADS="1")


def _read_all(fd: int) -> bytes:
    chunks, size = [], 0
    while chunk := os.read(fd, 1 << 20):
        size += len(chunk)
        if size > MAX_JOB_BYTES:
            raise ValueError("job too large")
        chunks.append(chunk)
    return b"".join(chunks)


def _sender(fd: int):
    write = os.write  # bound now: student code cannot swap it out

    def send(message: dict) -> None:
        data = encode_message(message)
        while data:
            data = data[write(fd, data):]

    return send


def run_job(job: Job, shell: Any, guard: Any, send, limits: Limits, spent: dict[str, float],
            usage: dict[str, list] | None = None) -> None:
    """Run the cells; ``spent`` gets the wall time of cells, answer re-runs and guard restores,
    ``usage`` (if given) their CPU and page faults (a profile only: student code runs in
    between and could change it). Public for the benchmark's floor (bench/floor.py), which runs
    the same loop in one warm process."""
    now = time.perf_counter
    meter = _Usage(usage if usage is not None else {})
    meter.start()  # from here: what the job's steps cost
    lap = meter.lap if usage is not None else _no_lap
    history: list[str] = [""]
    errors: dict[str, str] = {}  # a failed cell's source -> the exception's class name
    for index, cell in enumerate(job.cells):
        start = now()
        if cell.exercise is not None:
            guard.restore()
            restored = now()
            spec = job.specs[cell.exercise]
            answers = read_all(spec, shell.user_ns, history + [cell.source],
                               around=lambda: CellTimers(limits), cell_errors=errors)
            send({"type": "answers", "exercise": cell.exercise, "cell": index, "answers": answers})
            spent["child: guard restore"] += restored - start
            spent["child: answer re-runs"] += now() - restored
            lap("child: answer re-runs")
            continue
        if cell.kind != "code" or not cell.source.strip():
            continue
        parsed = _as_python(shell, cell.source)
        history.append(parsed[0] if parsed is not None else cell.source)
        try:
            with CellTimers(limits), autograd_off(cell.by_hand):
                error = _execute(shell, cell.source, parsed)
        except CellTimeout as timeout:
            error = timeout
        spent["child: cells"] += now() - start
        lap("child: cells")
        if error is not None:  # report with the grader's own tools, whatever the cell patched
            start = now()
            guard.restore()
            spent["child: guard restore"] += now() - start
            lap("child: guard restore")
            errors[history[-1]] = type(error).__name__
            why = _limit_code(error)
            if why is not None:
                send({"type": "cell", "cell": index, "why": why})
            else:  # for the teaching assistant's view of the notebook: which error, never its text
                send({"type": "cell", "cell": index, "why": "error", "error": type(error).__name__})


def _no_lap(step: str) -> None:
    return None


def _limit_code(error: BaseException) -> str | None:
    if isinstance(error, CellTimeout):
        return error.why
    if isinstance(error, MemoryError):
        return "memory"
    if isinstance(error, RecursionError):
        return "recursion"
    return None


def _as_python(shell: Any, source: str) -> tuple[str, ast.Module] | None:
    """The cell as Python and its syntax tree: itself when it parses (most cells; IPython's
    token-level transforms cost 0.25 ms a cell), else what IPython makes of its magics; None
    if neither parses (IPython's ``run_cell`` then reports the error)."""
    try:
        return source, syntax_tree(source)  # the readers of the answers find it parsed
    except (SyntaxError, ValueError):
        pass
    try:
        code = shell.transform_cell(source)
        return code, ast.parse(code)
    except Exception:  # a syntax error is the student's: IPython reports it when run
        return None


def _execute(shell: Any, source: str, parsed: tuple[str, ast.Module] | None) -> BaseException | None:
    """Run a cell as IPython's ``run_cell`` does, without the machinery nobody reads here.

    ``parsed`` is the cell as Python and its tree (``_as_python``: magics become
    ``get_ipython()`` calls). The statements run in the shell's namespace with its builtins
    (``display``, ``get_ipython``), and a final expression goes through the display hook, so
    ``_``, ``In`` and ``Out`` are set as in a kernel; events, AST transformers and tracebacks
    are skipped (20-40 ms per notebook). A syntax error or top-level ``await`` goes to
    ``run_cell``.
    """
    if parsed is None:
        return _run_cell(shell, source)
    code, tree = parsed
    body = list(tree.body)
    last = body.pop() if body and isinstance(body[-1], ast.Expr) else None
    try:
        statements = compile(ast.Module(body, []), "<cell>", "exec")
        shown = compile(ast.Interactive([last]), "<cell>", "single") if last else None
    except (SyntaxError, ValueError):  # e.g. top-level await, which run_cell supports
        return _run_cell(shell, source)
    # as run_cell does: In, _i (and the ';' that silences a result) see this cell, Out[n] its result
    shell.history_manager.store_inputs(shell.execution_count, code, source)
    try:
        with shell.builtin_trap, shell.display_trap:
            exec(statements, shell.user_ns)
            if shown is not None:
                exec(shown, shell.user_ns)
    except CellTimeout:
        raise
    except BaseException as e:
        return e
    finally:
        shell.execution_count += 1
    return None


def _run_cell(shell: Any, source: str) -> BaseException | None:
    result = shell.run_cell(source, store_history=True, silent=False)
    return result.error_in_exec or result.error_before_exec
