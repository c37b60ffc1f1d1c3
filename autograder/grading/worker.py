"""The forked child: the only place student code runs during ``gradtutor grade``.

Order matters: start a session, close every inherited file descriptor but the answer pipe,
read the notebook as root, move into a private folder, set limits, drop to an unprivileged
uid, scrub the environment; then run the cells. At each grade cell the answers are read with
``autograder.collect`` and written to the pipe as one JSON line, so a crash later keeps them.
The child never judges: a lie told here is still only data to the trusted parent.
"""

from __future__ import annotations

import ast
import contextlib
import json
import operator
import os
import resource
import signal
import sys
import tempfile
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path
from types import ModuleType
from typing import Any

from .submission import Submission, Unreadable, read, sanitise


@dataclass(frozen=True)
class Limits:
    # Per cell, and per answer re-run. CPU time first, so a verdict does not depend on how busy
    # the machine is; the slowest honest cell of the benchmark's class uses 0.5 s of CPU
    # (bench/RESULTS.md).
    cell_cpu_seconds: float = 2
    cell_seconds: float = 5  # wall clock, for a cell that sleeps or waits instead of computing
    notebook_seconds: int = 60  # wall clock for the whole notebook (enforced by the parent)
    memory_mib: int = 1536  # address space on top of the warm parent's
    processes: int = 32  # threads count too; per worker uid
    file_mib: int = 64  # largest file student code may write


UID_BASE = 200_000


def uid_block(batch_pid: int) -> int:
    """The first worker uid of the batch run by ``batch_pid``: worker k runs as this + k.

    Per-uid limits (RLIMIT_NPROC) and the final ``kill(-1)`` reach exactly one worker, and two
    batches on one machine (their pids differ) do not share uids.
    """
    return UID_BASE + (batch_pid % 100_000) * 256


class CellTimeout(BaseException):
    """Raised by a per-cell timer; BaseException so a bare ``except Exception`` can't eat it."""

    def __init__(self, clock: str = "wall") -> None:
        super().__init__(clock)
        self.clock = clock  # "cpu" or "wall": which budget ran out


def run_child(sub: Submission, source: Any, wfd: int, uid: int, limits: Limits,
              shell: Any, guard: Snapshot, workroot: Path) -> None:
    """Never returns: grade one submission in this forked process, then ``os._exit``."""
    code = 0
    send = _sender(wfd)
    try:
        _isolate(wfd)
        try:
            nb = read(sub.path)
        except Unreadable as e:
            send({"type": "rejected", "reason": str(e)})
            os._exit(0)
        home = _private_dir(workroot, sub, uid)
        _limit(limits, uid)
        _scrub_env(home)
        _run(sanitise(nb, source), shell, guard, send, limits)
        send({"type": "done"})
    except BaseException as e:  # noqa: BLE001 - whatever happens, the parent reads what was sent
        code = 3
        with contextlib.suppress(BaseException):  # the pipe itself may be gone
            send({"type": "crash", "error": f"{type(e).__name__}: {str(e)[:300]}"})
    os._exit(code)


def _isolate(wfd: int) -> None:
    os.setsid()  # own process group: the parent kills the whole group
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    # inherited pipes of the other children, the gradebook's SQLite file: all closed
    os.closerange(3, wfd)
    os.closerange(wfd + 1, max(65536, os.sysconf("SC_OPEN_MAX")))
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a too-big file is an OSError, not a death


def _private_dir(workroot: Path, sub: Submission, uid: int) -> Path:
    home = Path(tempfile.mkdtemp(prefix=f"{sub.student[:20]}-", dir=workroot))
    (home / sub.path.name).write_bytes(sub.path.read_bytes())  # its own copy, nothing else
    if os.geteuid() == 0:
        for p in (home, home / sub.path.name):
            os.chown(p, uid, uid)
    home.chmod(0o700)
    os.chdir(home)
    return home


def _limit(limits: Limits, uid: int) -> None:
    mib = 2**20
    vm = _vm_size()
    resource.setrlimit(resource.RLIMIT_AS, (vm + limits.memory_mib * mib,) * 2)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_mib * mib,) * 2)
    resource.setrlimit(resource.RLIMIT_CPU, (limits.notebook_seconds + 5,) * 2)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if os.geteuid() == 0:  # RLIMIT_NPROC does not bind root: become a nobody first
        resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes,) * 2)
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)


def _vm_size() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    return 4 * 2**30


def _scrub_env(home: Path) -> None:
    # nothing says "grading": no NBGRADER_EXECUTION, no course paths, no tokens of the parent
    keep = {k: os.environ[k] for k in ("PATH", "LANG", "LC_ALL") if k in os.environ}
    os.environ.clear()
    os.environ.update(keep, HOME=str(home), MPLBACKEND="Agg", MPLCONFIGDIR=str(home),
                      OMP_NUM_THREADS="1")


def _sender(wfd: int):
    write, dumps = os.write, json.dumps  # bound now: student code cannot swap them out

    def send(message: dict) -> None:
        data = (dumps(message, allow_nan=False) + "\n").encode()
        while data:
            data = data[write(wfd, data):]

    return send


class CellTimers:
    """Two timers around a cell: CPU time (SIGPROF) and wall clock (SIGALRM), each raising
    ``CellTimeout``. The benchmark's floor uses them too, so both stop a cell alike."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits

    def __enter__(self) -> None:
        signal.signal(signal.SIGPROF, _on_cpu_timer)
        signal.signal(signal.SIGALRM, _on_wall_timer)
        signal.setitimer(signal.ITIMER_PROF, self.limits.cell_cpu_seconds)
        signal.setitimer(signal.ITIMER_REAL, self.limits.cell_seconds)

    def __exit__(self, *exc: Any) -> None:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)


def _on_cpu_timer(signum: int, frame: Any) -> None:
    raise CellTimeout("cpu")


def _on_wall_timer(signum: int, frame: Any) -> None:
    raise CellTimeout("wall")


def _run(cells: list, shell: Any, guard: Snapshot, send, limits: Limits) -> None:
    from .. import collect, registry, selfcheck  # loaded by the warm parent already

    tools = (collect, registry, selfcheck)
    history: list[str] = [""]
    for index, cell in enumerate(cells):
        if cell.exercise is not None:
            guard.restore()
            send(_collect(tools, cell.exercise, shell, history + [cell.source], limits, index))
            continue
        if cell.kind != "code" or not cell.source.strip():
            continue
        parsed = _as_python(shell, cell.source)
        history.append(parsed[0] if parsed is not None else cell.source)
        try:
            with CellTimers(limits):
                error = _execute(shell, cell.source, parsed)
        except CellTimeout as timeout:
            error = timeout
        if error is not None:  # report with the grader's own tools, whatever the cell patched
            guard.restore()
            if isinstance(error, CellTimeout | MemoryError | RecursionError):
                send({"type": "cell", "cell": index, "error": _why(error, limits)})


def _as_python(shell: Any, source: str) -> tuple[str, ast.Module] | None:
    """The cell as Python and its syntax tree: itself when it parses (most cells; IPython's
    token-level transforms cost 0.25 ms a cell), else what IPython makes of its magics; None
    if neither parses (IPython's ``run_cell`` then reports the error)."""
    try:
        return source, ast.parse(source)
    except (SyntaxError, ValueError):
        pass
    try:
        code = shell.transform_cell(source)
        return code, ast.parse(code)
    except Exception:  # a syntax error is the student's: IPython reports it when run
        return None


def _execute(shell: Any, source: str, parsed: tuple[str, ast.Module] | None
             ) -> BaseException | None:
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
            exec(statements, shell.user_ns)  # noqa: S102 - the student's cell, in the sandbox
            if shown is not None:
                exec(shown, shell.user_ns)  # noqa: S102
    except CellTimeout:
        raise
    except BaseException as e:  # noqa: BLE001 - like run_cell: SystemExit, errors all recorded
        return e
    finally:
        shell.execution_count += 1
    return None


def _run_cell(shell: Any, source: str) -> BaseException | None:
    result = shell.run_cell(source, store_history=True, silent=False)
    return result.error_in_exec or result.error_before_exec


def _why(error: BaseException, limits: Limits) -> str:
    if isinstance(error, CellTimeout) and error.clock == "cpu":
        return f"stopped after {limits.cell_cpu_seconds:g} s of computing (time limit per cell)"
    if isinstance(error, CellTimeout):
        return f"stopped: still running after {limits.cell_seconds:g} s (time limit per cell)"
    if isinstance(error, MemoryError):
        return f"ran out of memory (limit {limits.memory_mib} MiB)"
    return "recursed too deeply"


def _collect(tools: tuple, exercise_id: str, shell: Any, history: list[str], limits: Limits,
             index: int) -> dict:
    """What the grade cell's ``grade()`` would read: the shown answer and each hidden re-run."""
    collect, registry, selfcheck = tools
    ex = registry.get(exercise_id)
    ns = shell.user_ns
    answers: list[dict] = []
    try:
        with CellTimers(limits):
            if ex.answer in ns:
                answers += selfcheck._public_answer(exercise_id, ns[ex.answer])
            else:
                answers.append({"t": "missing", "reason": f"There is no variable {ex.answer!r}: "
                                "was the answer cell deleted, renamed or not run?"})
        source = collect.answer_cell_from_history(ex, history)
        for params in ex.hidden:
            if source is None:
                answers.append({"t": "missing", "reason": "the answer cell was not found"})
                continue
            with CellTimers(limits):
                answers.append(collect.at_params(ex, ns, source, params))
    except CellTimeout as timeout:
        answers.append({"t": "error", "v": "Timeout", "text": _why(timeout, limits)})
    except BaseException as e:  # noqa: BLE001 - student objects can raise anything
        answers.append({"t": "error", "v": type(e).__name__[:40], "text": str(e)[:200]})
    answers += [{"t": "missing", "reason": "not reached"}] * (1 + len(ex.hidden) - len(answers))
    return {"type": "answers", "exercise": exercise_id, "cell": index, "answers": answers}


class Snapshot:
    """The grader's own tools as they were at fork time, put back before answers are read.

    Student code shares this process, so it can monkeypatch ``autograder``, ``json``,
    ``torch.Tensor`` methods or builtins to change what the reader sees; restoring them
    before each grade cell is read (and after a cell fails) undoes that (new module attributes
    it added stay, and do no harm). The warm parent takes it once; each child only compares,
    at C speed, and repairs what changed.
    """

    MODULES = ("builtins", "contextlib", "json", "torch", "torch._C", "numpy", "math", "types")

    def __init__(self) -> None:
        import torch

        mods = [m for name, m in sys.modules.items()
                if isinstance(m, ModuleType) and (name in self.MODULES or name == "autograder"
                                                  or name.startswith(("autograder.", "exercises")))]
        self.saved = [_Saved(m.__dict__) for m in mods]
        self.types = [(t, _Saved(vars(t))) for t in (torch.Tensor,)]

    def restore(self) -> None:
        for saved in self.saved:
            if saved.changed():
                for k, v in saved.items.items():
                    if saved.live.get(k, _MISSING) is not v:
                        saved.live[k] = v
        for t, saved in self.types:
            if not saved.changed() and saved.live.keys() == saved.items.keys():
                continue
            for k, v in saved.items.items():
                if k != "__dict__" and vars(t).get(k, _MISSING) is not v:
                    with contextlib.suppress(AttributeError, TypeError):
                        setattr(t, k, v)
            for k in [k for k in vars(t) if k not in saved.items]:
                with contextlib.suppress(AttributeError, TypeError):
                    delattr(t, k)


class _Saved:
    """A namespace's entries, and a check that any of them is no longer the same object."""

    def __init__(self, live: Any) -> None:
        self.live = live
        self.items = dict(live)
        self.keys, self.values = tuple(self.items), tuple(self.items.values())

    def changed(self) -> bool:
        # identity, never ==: a student's object may claim to equal anything
        return any(map(operator.is_not, map(self.live.get, self.keys, repeat(_MISSING)),
                       self.values))


_MISSING = object()
