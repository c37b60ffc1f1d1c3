"""Student side: the zygote, the warm process every grading child is forked from.

The trusted parent starts it as a fresh interpreter (``python -I -S``) whose path holds the
student runtime and the site-packages, never the full package: it imports torch, IPython and the
runtime, and nothing of the answer key, the source notebooks, the roster or any submission ever
enters its memory. It forks one child per request; the parent hands the child's two pipes over
with the request (``SCM_RIGHTS``) and writes the job straight into the child, so the zygote never
sees a cell either. A fork costs ~10 ms and shares the zygote's memory copy-on-write. As root,
each child is forked as init of a PID namespace of its own, so the parent's one SIGKILL to it
ends every process of that submission, whatever they do.

Control messages (JSON datagrams on a SOCK_SEQPACKET socket)::

    parent -> zygote  {"op": "config", "limits": {...}, "hide": [...], "imports": [...], "root": bool,
                       "walks_told": bool}
                      {"op": "imports", "imports": [...]}   when the config said "imports": null:
                                        the parent starts the zygote before it has read the lessons;
                                        the first such message is run before "ready", any later one
                                        between forks (the chapters whose children come later)
                      {"op": "walks", "walks": [name, ...]}  only these of torch's lazy paths
                                        (``autograder.sandbox.walks``), those the chapters' code takes,
                                        are walked between forks; without it, all are (none at all
                                        while a config that said "walks_told" waits for it)
                      {"op": "fork", "serial": n, "uid": u}   + the child's job and answer pipes
    zygote -> parent  {"op": "ready", "cpu": s}             s: its CPU time so far
                      {"op": "imported"}                    a later "imports" message was run
                      {"op": "walked", "walk": name, "cpu": s}   a walk (or later imports) was run
                      {"op": "forked", "serial": n, "pid": p}  or {"op": "fork_failed", "serial": n}
                      {"op": "exited", "pid": p, "status": s}
"""

from __future__ import annotations

import os

# before numpy/torch load: a forked child must not inherit a thread pool it cannot use
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"
os.environ["MPLBACKEND"] = "Agg"

import contextlib  # noqa: E402
import ctypes  # noqa: E402
import gc  # noqa: E402
import importlib  # noqa: E402
import json  # noqa: E402
import operator  # noqa: E402
import select  # noqa: E402
import socket  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from itertools import repeat  # noqa: E402
from types import ModuleType  # noqa: E402
from typing import Any  # noqa: E402

from autograder import byhand  # noqa: E402 - light: it imports torch only when a guard is built
from autograder.sandbox import walks as torch_walks  # noqa: E402 - light: torch loads in the walks

# Modules a student's answer cell may import, loaded once here so that children do not each pay
# for them (a child can still import others: the interpreter's folders stay readable to it).
PRELOAD = (
    "array", "bisect", "cmath", "collections", "collections.abc", "contextlib", "copy",
    "dataclasses", "decimal", "doctest", "enum", "fractions", "functools", "graphlib", "heapq",
    "itertools", "json", "math", "numbers", "operator", "pdb", "pprint", "random", "re",
    "statistics", "string", "textwrap", "time", "typing", "warnings", "cProfile",
    "numpy", "numpy.linalg", "matplotlib.pyplot", "torch", "torch.autograd.functional",
    "torch.autograd.gradcheck", "torch.autograd.forward_ad", "torch.autograd.graph", "torch.func",
    "torch.nn", "torch.nn.functional", "torch.nn.utils", "torch.optim", "torch.testing",
    "torch.utils.checkpoint", "ipywidgets",
    # the student runtime itself
    "autograder", "autograder.selfcheck", "autograder.answers", "autograder.visual.graph",
    "autograder.visual.widgets", "autograder.sandbox.child", "autograder.harness",
    "autograder.tensor_harness", "autograder.backprop_harness", "autograder.visual.broadcast",
)
MAX_CONTROL_BYTES = 1 << 20
WALK_GRACE = 0.1  # seconds without a request before the zygote walks on (see ``serve``)


def main(control_fd: int) -> None:
    # everything up to the freeze below is imports and warm-up, whose objects live for good: the
    # collector's passes over them are a tenth to a fifth of the warm-up (measured) and free
    # little (14,000 of 358,000 objects: those are frozen with the rest)
    gc.disable()
    ctl = socket.socket(fileno=control_fd)
    config_msg = json.loads(ctl.recv(MAX_CONTROL_BYTES))
    # ordered on purpose: child brings torch (through answers), which loads here, after the thread
    # variables at the top; importing this module stays light (the benchmark, the tests)
    from autograder.sandbox.child import SandboxConfig
    from autograder.sandbox.limits import Limits  # with child, as above

    config = SandboxConfig(limits=Limits.from_json(config_msg["limits"]),
                           hide=tuple(str(p) for p in config_msg["hide"]),
                           keep=tuple(str(p) for p in config_msg["keep"]), root=bool(config_msg["root"]))
    imports = config_msg.get("imports", [])
    # torch's lazy paths are walked after "ready", after the first fork and between requests:
    # the first children start 1.6 s sooner, and only one of them that takes such a path loads
    # it itself
    shell = warm_up(imports if imports is not None else [], walks_later=True)
    if imports is None:  # sent once the parent has read the lessons, while this warmed up
        lesson_imports(_imports_message(ctl))
    child_caches()
    guard = Snapshot()  # taken once here, inherited by every child
    # children share these objects copy-on-write; a full garbage collection in a child walks
    # them all and copies every page it touches (310 ms per child measured, 14 ms once frozen)
    gc.freeze()
    gc.enable()  # for the children, and the walks' own garbage
    # its CPU so far (imports, warm-up, the first lessons' imports): a profile figure
    ctl.send(json.dumps({"op": "ready", "cpu": time.process_time()}).encode())
    # all of torch's walks, unless told fewer ("walks"); none until told, when the parent said
    # it will tell ("walks_told": it reads them from the chapters after its first fork request)
    told = bool(config_msg.get("walks_told"))
    serve(ctl, config, shell, guard, [] if told else torch_walks.chosen(None), walks_told=told)


def serve(ctl: socket.socket, config: Any, shell: Any, guard: Any, walks: list | None = None, *,
          walks_told: bool = False) -> None:
    """Fork a child per request; ``walks``: warm-up left to do while no request waits
    (``walks_told``: torch's walks come with a "walks" message, none before it)."""
    from autograder.sandbox import child, seal  # loaded by main already; local to keep this module light

    own_pid_ns = os.open("/proc/self/ns/pid", os.O_RDONLY) if config.root else -1
    children: set[int] = set()
    walks = list(walks or ())
    forked = False
    while True:
        # a walk cannot be interrupted (the first optimizer alone: 1.8 s of CPU): none before
        # the first fork, and none until the parent has been quiet for WALK_GRACE, so that the
        # first children (one per worker, asked for back to back) never wait for one
        readable, _, _ = select.select([ctl], [], [], WALK_GRACE if walks and forked else 0.02)
        if not readable and walks and forked:
            guard = _walk_next(walks, guard, ctl)
        if readable:
            try:
                data, fds, _, _ = socket.recv_fds(ctl, MAX_CONTROL_BYTES, 2)
            except OSError:
                data, fds = b"", []
            if not data:  # the parent is gone: so is the reason to exist
                os._exit(0)
            request = json.loads(data)
            serial = request.get("serial")
            if request.get("op") == "walks" and not fds:
                # only the walks the chapters take (``gradtutor.grading.torch_uses``): drop the
                # others not walked yet; lesson imports stay
                keep = torch_walks.chosen([str(n) for n in request.get("walks", [])])
                if walks_told:  # the first word on them: these, once
                    walks += keep
                    walks_told = False
                else:  # fewer than all: those not walked yet
                    walks[:] = [w for w in walks if isinstance(w, _LaterImports) or w in keep]
                continue
            if request.get("op") == "imports" and not fds:
                # ahead of torch's walks, after earlier imports: the lessons' own lines come first
                at = sum(1 for w in walks if isinstance(w, _LaterImports))
                walks.insert(at, _LaterImports([str(line) for line in request.get("imports", [])], ctl))
                continue
            if request.get("op") != "fork" or len(fds) != 2:
                for fd in fds:
                    os.close(fd)
                ctl.send(json.dumps({"op": "fork_failed", "serial": serial}).encode())
                continue
            try:
                pid = seal.fork_as_init(own_pid_ns) if config.root else os.fork()
            except OSError:
                pid = -1
            if pid == 0:
                child.run(fds[0], fds[1], int(request["uid"]), config, shell, guard)
            for fd in fds:
                os.close(fd)
            if pid < 0:
                ctl.send(json.dumps({"op": "fork_failed", "serial": serial}).encode())
            else:
                children.add(pid)
                forked = True
                ctl.send(json.dumps({"op": "forked", "serial": serial, "pid": pid}).encode())
        for pid in list(children):
            try:
                done, status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done, status = pid, 0
            if done:
                children.discard(pid)
                ctl.send(json.dumps({"op": "exited", "pid": pid, "status": status}).encode())


def child_caches() -> None:
    """What every child would otherwise work out again on its own, done once here: where the
    check data's provider would come from (entry points found, never loaded: the zygote holds no
    answer key; a chapter's ``review`` asks, 14 ms a child), and a module torch imports lazily
    under the self-checks."""
    from autograder import checkdata  # loaded by warm_up already; local to keep this module light

    checkdata.provider_points()
    importlib.import_module("torch._subclasses.schema_check_mode")
    harness_data()


def harness_data() -> None:
    """Data a harness of the runtime reads in every child of its chapter, loaded once here once
    the lessons' imports have loaded its library: scikit-learn's 8x8 digits (chapter 11's
    ``digits_report``, at each grading variant; parsing the CSV shipped with scikit-learn cost
    each child 26-33 ms of CPU). Public data, the same for every student, that the child could
    read from the library itself; a child that changes its copy changes only its own."""
    if "sklearn.datasets" in sys.modules:  # never imported here for it: the zygote stays light
        from autograder import tensor_harness  # loaded by warm_up already

        with contextlib.suppress(Exception):  # a child then loads the data itself, as before
            tensor_harness.digits_data()


def _imports_message(ctl: socket.socket) -> list[str]:
    message = json.loads(ctl.recv(MAX_CONTROL_BYTES) or b"{}")
    if message.get("op") != "imports":
        os._exit(2)  # the parent is gone or out of step: nothing to serve
    return [str(line) for line in message.get("imports", [])]


def lesson_imports(imports: list[str]) -> None:
    """The lessons' own import lines (never a solution cell's), run once so that children find
    the modules loaded."""
    for line in imports:
        with contextlib.suppress(Exception):
            exec(compile(line, "<imports>", "exec"), {})


def warm_up(imports: list[str], *, walks_later: bool = False) -> Any:
    """Import what notebooks use, single-threaded, and make the shell children will share.
    ``walks_later``: leave torch's lazy paths (``autograder.sandbox.walks``) to the caller."""
    import matplotlib

    matplotlib.use("Agg")
    import torch
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    torch.set_num_threads(1)
    with contextlib.suppress(RuntimeError):  # allowed once per process
        torch.set_num_interop_threads(1)
    for name in PRELOAD:
        importlib.import_module(name)
    # after PRELOAD, which loads the runtime in its order, torch single-threaded first
    from autograder.visual import headless

    headless.ENABLED = True  # nobody sees a grading run's figures and widgets: skip drawing them
    lesson_imports(imports)
    if not walks_later:
        _exercise_torch()
    config = Config()
    config.HistoryManager.enabled = False  # no SQLite history file per child
    shell = InteractiveShell.instance(config=config)
    # nobody reads a grading child's output: formatting a 3000-frame RecursionError takes IPython
    # tens of seconds, so errors are recorded (run_cell's result) but never drawn
    shell.showtraceback = _no_display
    shell.showsyntaxerror = _no_display
    shell._format_exception_for_storage = _exception_summary  # IPython >= 8.33 formats each error
    # a cell's result still becomes ``_`` and ``Out[n]``, but its repr is never computed
    shell.displayhook.compute_format_data = _no_format
    shell.displayhook.write_format_data = _no_display
    shell.run_cell("import torch", store_history=False)
    _draw_once()
    return shell


def _exercise_torch() -> None:
    """Walk every one of torch's lazily loaded paths once (``autograder.sandbox.walks``): a
    child, once a nobody, could not read the files to load them, or would load them again
    itself (first calls, measured: an optimizer step or a ``torch.func`` transform 1.2 s,
    gradcheck 0.3 s; each again a millisecond)."""
    for walk in torch_walks.chosen(None):
        walk()


class _LaterImports:
    """A walk: lesson import lines the parent sent after "ready" (the chapters whose children
    come later), run between forks; the parent is told when they are loaded."""

    def __init__(self, lines: list[str], ctl: socket.socket) -> None:
        self.lines, self.ctl = lines, ctl

    def __call__(self) -> None:
        try:
            lesson_imports(self.lines)
            harness_data()
        finally:
            self.ctl.send(json.dumps({"op": "imported"}).encode())


def _walk_next(walks: list, guard: Any, ctl: socket.socket | None = None) -> Any:
    """One more of ``walks`` (the zygote's, after it said ready); after each, the heap is
    frozen again and the guard taken again, so that every later child inherits both as the
    modules it inherits are (a walk may load a module the guard watches, or write to one).
    A walk that fails only leaves its path to be loaded by the children that take it. The
    parent is told what it cost (its profile: ``gradtutor grade --profile``)."""
    walk = walks.pop(0)
    cpu = time.process_time()
    gc.disable()  # mostly imports, as in ``main``
    with contextlib.suppress(Exception):
        walk()
    gc.freeze()
    gc.enable()
    guard = Snapshot()
    if ctl is not None:
        name = "lesson imports" if isinstance(walk, _LaterImports) else getattr(walk, "__name__", "walk")
        ctl.send(json.dumps({"op": "walked", "walk": name, "cpu": time.process_time() - cpu}).encode())
    return guard


def _no_display(*args: Any, **kwargs: Any) -> None:
    return None


def _no_format(result: Any) -> tuple[dict, dict]:
    return {}, {}


def _exception_summary(exception: BaseException, *args: Any, **kwargs: Any) -> dict:
    return {"ename": type(exception).__name__, "evalue": "", "traceback": []}


def _draw_once() -> None:
    """Load fonts and the Agg renderer now: a child as a new uid would rebuild the font cache."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.set_title("warm-up $x^2$")
    ax.plot([0, 1], [0, 1])
    fig.canvas.draw()
    plt.close(fig)


class Snapshot:
    """The grader's own tools as they were at fork time, put back before answers are read.

    Student code shares the child with the reader, so it can monkeypatch ``autograder``,
    ``json``, ``torch.Tensor`` methods or builtins to change what the reader sees; restoring them
    before each grade cell is read (and after a cell fails) undoes that (new module attributes
    it added stay, and do no harm). Not only the modules' namespaces: the grader's own state
    is in its classes and in the objects its modules hold (the by-hand guard's depth, its
    dispatch mode's method), so every class defined in ``autograder`` and every instance of one
    that a module holds is put back too, entry for entry (entries it added removed). What it can
    still forge is only answer values: the verdict is made in the parent. Taken once in the
    zygote; each child only compares, at C speed, and only the namespaces written to since
    they were last found intact (``version_tag``).
    """

    MODULES = ("builtins", "contextlib", "json", "torch", "torch._C", "numpy", "math", "types", "os",
               "functools", "torch.utils._python_dispatch", "torch.overrides", "torch.autograd",
               "torch.autograd.forward_ad", "torch.autograd.functional", "torch.func")

    def __init__(self) -> None:
        import torch

        byhand.guard_classes()  # built lazily elsewhere: built now, so their entries are kept
        mods = [m for name, m in sys.modules.items()
                if isinstance(m, ModuleType) and (name in self.MODULES or _ours(name))]
        self.saved = [_Saved(m.__dict__) for m in mods]
        classes, objects = _owned(mods)
        self.types = [(t, _Saved(vars(t), exact_keys=True))
                      for t in (torch.Tensor, *classes, *byhand.guard_classes())]
        self.objects = [_Saved(vars(o), exact_keys=True) for o in objects]

    def restore(self) -> None:
        for saved in self.saved:
            if saved.changed():
                for k, v in saved.items.items():
                    if saved.live.get(k, _MISSING) is not v:
                        saved.live[k] = v
        for saved in self.objects:
            if saved.changed():
                for k in [k for k in saved.live if k not in saved.items]:
                    del saved.live[k]
                for k, v in saved.items.items():
                    if saved.live.get(k, _MISSING) is not v:
                        saved.live[k] = v
        for t, saved in self.types:
            if not saved.changed():
                continue
            for k, v in saved.items.items():
                if k != "__dict__" and vars(t).get(k, _MISSING) is not v:
                    with contextlib.suppress(AttributeError, TypeError):
                        setattr(t, k, v)
            for k in [k for k in vars(t) if k not in saved.items]:
                with contextlib.suppress(AttributeError, TypeError):
                    delattr(t, k)


def _ours(name: str) -> bool:
    return name == "autograder" or name.startswith("autograder.")


def _owned(mods: list[ModuleType]) -> tuple[list[type], list[Any]]:
    """The classes defined in ``autograder`` that its modules hold, and the instances of them
    (with a ``__dict__``) that its modules hold: the grader's state outside module namespaces."""
    classes: dict[int, type] = {}
    objects: dict[int, Any] = {}
    for m in mods:
        if not _ours(m.__name__):
            continue
        for value in list(vars(m).values()):
            if isinstance(value, type):
                if _ours(str(getattr(value, "__module__", ""))):
                    classes[id(value)] = value
            elif _ours(str(getattr(type(value), "__module__", ""))) and \
                    isinstance(getattr(value, "__dict__", None), dict):
                objects[id(value)] = value
    return list(classes.values()), list(objects.values())


class _Saved:
    """A namespace's entries, and a check that any of them is no longer the same object
    (``exact_keys``: or that it has gained an entry)."""

    def __init__(self, live: Any, *, exact_keys: bool = False) -> None:
        self.live = live
        self.items = dict(live)
        self.keys, self.values = tuple(self.items), tuple(self.items.values())
        self.exact_keys = exact_keys
        self.version = version_tag(live)
        self.intact = self.version[0] if self.version is not None else None

    def changed(self) -> bool:
        # the dict's version the same as when it was last found intact: nothing was written to
        # it, and its values need not be read (reading them writes their reference counts,
        # which copies every page they sit on into the child: ~10 ms of each child's first check)
        now = self.version[0] if self.version is not None else None
        if now is not None and now == self.intact:
            return False
        # identity, never ==: a student's object may claim to equal anything
        differs = any(map(operator.is_not, map(self.live.get, self.keys, repeat(_MISSING)),
                          self.values)) or (self.exact_keys and self.live.keys() != self.items.keys())
        if not differs:
            self.intact = now  # read before the comparison: a write during it shows next time
        return differs


def version_tag(live: Any) -> memoryview | None:
    """A read-only view of CPython's version tag of the dict behind ``live`` (a module's
    ``__dict__``, or a class's mappingproxy): PEP 509's ``ma_version_tag``, a fresh value after
    every write to the dict by any route (item or attribute assignment, ``del``, ``update``,
    ``clear``), read in place without touching the entries. The view is made here, in the
    zygote: reading it later looks nothing up that student code could replace. None where this
    interpreter does not keep the tag as ``_versions_work`` found: compared entry by entry."""
    d = live if type(live) is dict else next((r for r in gc.get_referents(live) if type(r) is dict), None)
    if d is None or not _VERSIONS_WORK:
        return None
    return _tag_view(d)


def _tag_view(d: dict) -> memoryview:
    # after the object header and ma_used; the view holds no reference: ``live`` keeps ``d``
    cell = (ctypes.c_uint64 * 1).from_address(id(d) + object.__basicsize__ + ctypes.sizeof(ctypes.c_ssize_t))
    return memoryview(cell).cast("B").cast("Q").toreadonly()


def _versions_work() -> bool:
    """Does every kind of write give a dict a new version tag, where ``_tag_view`` reads it?
    Checked once, on a dict of each layout a namespace can have (str keys only, then any)."""
    if sys.implementation.name != "cpython" or sys.version_info[:2] not in ((3, 11), (3, 12)):
        return False
    d: dict = {"a": 1}
    tag = _tag_view(d)
    seen = {tag[0]}
    for write in (lambda: d.__setitem__("a", 2), lambda: d.__setitem__(1, 3), lambda: d.pop(1),
                  lambda: d.update(b=1), lambda: d.setdefault("c", 1), d.clear):
        write()
        seen.add(tag[0])
    return len(seen) == 7


_VERSIONS_WORK = _versions_work()
_MISSING = object()
