"""The warm parent: import torch once, then fork one isolated child per submission.

A fresh kernel per notebook pays ~2 s for kernel start and ``import torch``; a forked child
pays ~10 ms and shares the parent's memory copy-on-write (reference/fast-isolated-grading.md).
The parent reads each child's JSON lines, kills it at the notebook deadline, and afterwards
kills every process left under the child's uid, so a fork bomb or a stray grandchild holding
the pipe cannot outlive its submission.
"""

from __future__ import annotations

import os

# before numpy/torch load: a forked child must not inherit a thread pool it cannot use
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"
os.environ["MPLBACKEND"] = "Agg"

import contextlib  # noqa: E402
import gc  # noqa: E402
import importlib  # noqa: E402
import json  # noqa: E402
import selectors  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Iterable  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from .submission import Submission  # noqa: E402
from .worker import Limits, Snapshot, run_child, uid_block  # noqa: E402

MAX_OUTPUT_BYTES = 8 * 2**20  # answers are small; a child flooding its pipe is cut off
MAX_LINE_BYTES = 2 * 2**20


@dataclass
class Outcome:
    """What came back from one child: parsed JSON messages and how the process ended."""

    submission: Submission
    messages: list[dict] = field(default_factory=list)
    ended: str = ""  # "" when the child finished normally, else a reason for the student
    duration_s: float = 0.0


# Modules a student's answer cell may import. A child runs as an unprivileged uid, which on
# a machine whose Python lives under /root cannot read the standard library: it must find
# them already imported by the parent.
PRELOAD = (
    "array", "bisect", "cmath", "collections", "collections.abc", "contextlib", "copy",
    "dataclasses", "decimal", "doctest", "enum", "fractions", "functools", "graphlib", "heapq",
    "itertools", "json", "math", "numbers", "operator", "pdb", "pprint", "random", "re",
    "statistics", "string", "textwrap",
    "time", "typing", "warnings", "numpy.linalg", "torch.autograd.functional",
    "torch.autograd.gradcheck", "torch.func", "torch.nn", "torch.nn.functional", "torch.optim",
    "torch.testing",
)


def warm_up(sources: Iterable[Any] = ()) -> Any:
    """Import what notebooks use, single-threaded, and make the shell children will share.

    ``sources`` are the instructor's source notebooks: their import lines run here once, so
    children do not each pay for ``autograder.visual`` or matplotlib's first use.
    """
    start_reaper()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot  # noqa: F401
    import numpy  # noqa: F401
    import torch
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    torch.set_num_threads(1)
    with contextlib.suppress(RuntimeError):  # allowed once per process
        torch.set_num_interop_threads(1)
    import autograder  # noqa: F401

    for name in PRELOAD:
        importlib.import_module(name)
    from ..visual import headless

    headless.ENABLED = True  # nobody sees a grading run's figures and widgets: skip drawing them
    warm_references()
    config = Config()
    config.HistoryManager.enabled = False  # no SQLite history file per child
    shell = InteractiveShell.instance(config=config)
    # nobody reads a worker's output: formatting a 3000-frame RecursionError takes IPython
    # tens of seconds, so errors are recorded (run_cell's result) but never drawn
    shell.showtraceback = _no_display
    shell.showsyntaxerror = _no_display
    shell._format_exception_for_storage = _exception_summary  # IPython >= 8.33 formats each error
    # a cell's result still becomes ``_`` and ``Out[n]``, but its repr is never computed
    shell.displayhook.compute_format_data = _no_format
    shell.displayhook.write_format_data = _no_display
    shell.run_cell("import torch", store_history=False)
    _draw_once()
    for nb in sources:
        _preimport(nb)
    # children share these objects copy-on-write; a full garbage collection in a child walks
    # them all and copies every page it touches (310 ms per child measured, 14 ms once frozen)
    gc.freeze()
    return shell


def warm_references() -> None:
    """Run every exercise's reference at every variant once, in this process.

    The parent judges with them, and running them imports what torch loads lazily on first
    use (SGD needs cProfile, gradcheck needs sympy): a child, once it is a nobody, can no
    longer read the stdlib under /root, so it must find them already imported.
    """
    from .. import registry
    from ..judge import reference

    for eid in registry.ids():
        try:
            for variant in range(len(registry.get(eid).variants())):
                reference(eid, variant)
        except Exception:  # a broken unit fails its own grade cells, not the whole batch
            continue


def _no_display(*args: Any, **kwargs: Any) -> None:
    return None


def _no_format(result: Any) -> tuple[dict, dict]:
    return {}, {}


def _exception_summary(exception: BaseException, *args: Any, **kwargs: Any) -> dict:
    return {"ename": type(exception).__name__, "evalue": str(exception)[:200], "traceback": []}


def _draw_once() -> None:
    """Load fonts and the Agg renderer now: a child as a new uid would rebuild the font cache."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.set_title("warm-up $x^2$")
    ax.plot([0, 1], [0, 1])
    fig.canvas.draw()
    plt.close(fig)


def _preimport(source: Any) -> None:
    """Run the import statements of trusted source cells in a scratch namespace."""
    import ast

    for cell in source.cells:
        if cell.cell_type != "code":
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:
            continue
        imports = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
        try:
            exec(compile(ast.Module(imports, []), "<imports>", "exec"), {})  # noqa: S102
        except Exception:  # a missing optional module: the child will report it
            continue


@dataclass
class _Running:
    pid: int
    rfd: int
    uid: int  # the worker's own uid, also its slot
    outcome: Outcome
    deadline: float
    started: float
    buffer: bytearray = field(default_factory=bytearray)
    received: int = 0
    eof: bool = False
    status: int | None = None
    done: bool = False  # the child said its last word; its exit need not be waited for


def grade_all(jobs: Iterable[tuple[Submission, Any]], *, workers: int, limits: Limits,
              shell: Any, on_done: Callable[[Outcome], None]) -> None:
    """Run every (submission, source notebook) job in a forked child, ``workers`` at a time."""
    pending = list(jobs)[::-1]
    running: dict[int, _Running] = {}
    exiting: list[int] = []  # children that finished but are still exiting
    free = [uid_block(os.getpid()) + k for k in range(max(1, workers))][::-1]
    sel = selectors.DefaultSelector()
    guard = Snapshot()  # taken once here, inherited by every child
    workroot = Path(tempfile.mkdtemp(prefix="gradtutor-work-"))
    workroot.chmod(0o711)  # children may enter their own folder, not list the others

    def fill_free_slots() -> None:
        while pending and free:
            sub, source = pending.pop()
            run = _start(sub, source, free.pop(), limits, shell, guard, workroot)
            running[run.rfd] = run
            sel.register(run.rfd, selectors.EVENT_READ)

    try:
        while pending or running:
            fill_free_slots()
            for key, _ in sel.select(timeout=0.1):
                _read(running[key.fd], sel)
            finished = []
            for run in list(running.values()):
                if run.done and run.status is None:
                    _release(run, sel)
                    exiting.append(run.pid)
                _poll(run, sel)
                if run.status is not None and run.eof:
                    del running[run.rfd]
                    os.close(run.rfd)
                    free.append(run.uid)
                    run.outcome.duration_s = time.monotonic() - run.started
                    finished.append(run.outcome)
            fill_free_slots()  # the next children run while the finished ones are recorded
            for outcome in finished:
                on_done(outcome)
            exiting[:] = [pid for pid in exiting if not _collected(pid, wait=False)]
    finally:
        for run in running.values():
            _kill(run)
        for pid in exiting:
            _collected(pid, wait=True)
        shutil.rmtree(workroot, ignore_errors=True)


def _release(run: _Running, sel: selectors.BaseSelector) -> None:
    """A child that sent "done" has nothing more to say: free its slot now rather than wait
    while the kernel tears down its copy-on-write memory (3-11 ms); collect it later."""
    _reap_uid(run.uid)  # whatever it left running, and the exiting child itself
    run.status = 0
    if not run.eof:
        run.eof = True
        sel.unregister(run.rfd)


def _collected(pid: int, *, wait: bool) -> bool:
    try:
        return os.waitpid(pid, 0 if wait else os.WNOHANG)[0] != 0
    except ChildProcessError:
        return True


def _start(sub: Submission, source: Any, uid: int, limits: Limits, shell: Any,
           guard: Snapshot, workroot: Path) -> _Running:
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: never returns
        os.close(rfd)
        run_child(sub, source, wfd, uid, limits, shell, guard, workroot)
    os.close(wfd)
    os.set_blocking(rfd, False)
    now = time.monotonic()
    return _Running(pid, rfd, uid, Outcome(sub), now + limits.notebook_seconds, now)


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
        _kill(run)
        return
    run.buffer += chunk
    *lines, rest = run.buffer.split(b"\n")
    run.buffer = bytearray(rest)
    if len(rest) > MAX_LINE_BYTES:
        run.buffer.clear()
    for line in lines:
        message = _parse(line)
        if message is not None:
            run.outcome.messages.append(message)
            run.done = run.done or message.get("type") == "done"


def _parse(line: bytes) -> dict | None:
    # plain JSON only: anything else is dropped here, never interpreted
    if len(line) > MAX_LINE_BYTES:
        return None
    try:
        value = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _poll(run: _Running, sel: selectors.BaseSelector) -> None:
    if run.status is None:
        pid, status = os.waitpid(run.pid, os.WNOHANG)
        if pid:
            run.status = status
            _reap_uid(run.uid)  # stray grandchildren may still hold the pipe open
            if not run.outcome.ended:
                run.outcome.ended = _exit_reason(status)
        elif time.monotonic() > run.deadline:
            seconds = int(run.deadline - run.started)
            run.outcome.ended = f"the whole notebook took longer than the limit ({seconds} s)"
            _kill(run)
    elif not run.eof and time.monotonic() > run.deadline + 5:
        run.eof = True  # a grandchild we could not kill holds the pipe: give up on it
        sel.unregister(run.rfd)


def _exit_reason(status: int) -> str:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        return f"the notebook's process was killed by {name}"
    code = os.WEXITSTATUS(status)
    return "" if code == 0 else f"the notebook's process exited with code {code}"


def _kill(run: _Running) -> None:
    for target in (lambda: os.killpg(run.pid, signal.SIGKILL), lambda: os.kill(run.pid, signal.SIGKILL)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            target()
    if run.status is None:
        try:
            _, run.status = os.waitpid(run.pid, 0)
        except ChildProcessError:
            run.status = 0
    _reap_uid(run.uid)


def _reap_uid(uid: int) -> None:
    """Kill every process of a worker uid (as root; without root there is no uid to clean)."""
    if os.geteuid() != 0:
        return
    if _reaper is None or not _reaper.reap(uid):
        _kill_uid(uid)


def _kill_uid(uid: int) -> None:
    """``kill(-1)`` sent as that uid reaches exactly its processes: it takes a fork to send it."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgid(uid)
            os.setuid(uid)
            for _ in range(3):
                os.kill(-1, signal.SIGKILL)
        except BaseException:  # noqa: BLE001
            pass
        os._exit(0)
    os.waitpid(pid, 0)


class Reaper:
    """A small process, forked before torch loads, that runs ``_kill_uid`` for the parent.

    Forking the warm parent (torch and everything, ~500 MiB mapped) to send one signal costs
    about 15 ms per submission; forking this small process costs a fraction of that.
    """

    def __init__(self) -> None:
        ask_r, self.ask = os.pipe()
        self.answer, answer_w = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # the reaper: serve until the parent closes the pipe, then leave
            try:  # never return into the parent's code, whatever fails here
                signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the parent
                os.close(self.ask)
                os.close(self.answer)
                while len(request := os.read(ask_r, 4)) == 4:
                    _kill_uid(int.from_bytes(request, "little"))
                    os.write(answer_w, b"k")
            finally:
                os._exit(0)
        os.close(ask_r)
        os.close(answer_w)

    def reap(self, uid: int) -> bool:
        """True when the reaper did it; False if it is gone (the caller then does it itself)."""
        try:
            os.write(self.ask, uid.to_bytes(4, "little"))
            return os.read(self.answer, 1) == b"k"
        except OSError:
            return False


_reaper: Reaper | None = None


def start_reaper() -> None:
    """Call while the process is still small (before ``warm_up`` imports torch)."""
    global _reaper
    if os.geteuid() == 0 and _reaper is None:
        _reaper = Reaper()
