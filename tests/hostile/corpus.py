"""The corpus: bad and hostile submissions, each with the honest score it must get.

Every case builds one submission from the released notebook and says what an honest grader
gives it: points per exercise (the points its honest answers earn), the status, and words the
reason must contain. Attacks that try to make wrong answers pass are paired with wrong (or no)
answers, so any success shows up as points; defences that must not cost a good student are
paired with right answers, so any collateral damage shows up as lost points.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbformat import NotebookNode
from nbformat.v4 import new_code_cell, new_output

from gradtutor.key.exercise import Exercise

from . import kit


@dataclass(frozen=True)
class Context:
    released: NotebookNode
    exercises: list[Exercise]
    course: Path  # the course being graded (a notebook may try to read it)
    other_student: str  # a classmate whose submission a notebook may try to read


# A classmate graded before the attackers writes this token into every answer cell. It is kept
# in two halves, so that a probe searching memory never holds the whole token itself.
TOKEN = ("kq7-classmate", "-secret-19f3")
# what a child must never find: the solutions and hidden tests of the source notebooks, the
# classmate's cells, the units' own module names (each split the same way)
NEEDLES = [("### BEGIN SOL", "UTION"), ("BEGIN HIDDEN", " TESTS"), TOKEN, ("exercises.ch0", "1_graphs")]
LEAK = "LEAK-" + "7c1e"  # free text a forged message carries: it must reach no result


Points = Callable[[list[Exercise]], list[float]]


def FULL(exs: list[Exercise]) -> list[float]:
    return [ex.points for ex in exs]


def ZERO(exs: list[Exercise]) -> list[float]:
    return [0.0 for _ in exs]


def FIRST_ONLY(exs: list[Exercise]) -> list[float]:
    return [exs[0].points] + [0.0] * (len(exs) - 1)


def ALL_BUT_FIRST(exs: list[Exercise]) -> list[float]:
    return [0.0] + [ex.points for ex in exs[1:]]


@dataclass(frozen=True)
class Case:
    name: str
    what: str  # the attack or accident, in words
    make: Callable[[Context], NotebookNode | bytes]
    points: Points
    status: str = "graded"
    reason: str = ""  # must appear in the result's reason (or the exercise messages)
    message: str = ""  # must appear in the first exercise's message
    tags: tuple[str, ...] = field(default_factory=tuple)
    plant: Callable[[Path, Context], None] | None = None  # changes the submitted folder afterwards
    never: str = ""  # must appear nowhere in the result


# --- building blocks ----------------------------------------------------------------------------

def solved(ctx: Context) -> NotebookNode:
    return kit.answered(ctx.released, kit.solution)


def blank(ctx: Context) -> NotebookNode:
    return copy.deepcopy(ctx.released)


def all_wrong(ctx: Context) -> NotebookNode:
    return kit.answered(ctx.released, lambda ex: kit.wrong(ex, 0))


def each(ctx: Context, code: Callable[[Exercise], str]) -> NotebookNode:
    return kit.answered(ctx.released, code)


def assign(ex: Exercise, expr: str) -> str:
    if ex.is_function:
        return f"def {ex.answer}(*args, **kwargs):\n    return {expr}"
    return f"{ex.answer} = {expr}"


def first_code(nb: NotebookNode) -> int:
    return next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")


def early(nb: NotebookNode, code: str) -> NotebookNode:
    """Insert ``code`` as a cell right after the notebook's first (import) cell."""
    nb.cells.insert(first_code(nb) + 1, new_code_cell(code))
    return nb


def after_first_exercise(ctx: Context, nb: NotebookNode, code: str) -> NotebookNode:
    at = kit.index(nb, ctx.exercises[0].id)
    nb.cells.insert(at + 1, new_code_cell(code))
    return nb


def text(nb: NotebookNode) -> str:
    return nbformat.writes(nb)


# --- the cases ----------------------------------------------------------------------------------

def _stdlib_imports(ctx: Context) -> NotebookNode:
    return each(ctx, lambda ex: "import graphlib, fractions, statistics, heapq, bisect\n"
                                "import torch.nn.functional as F\n" + kit.solution(ex))


def _truncated(ctx: Context) -> bytes:
    data = text(solved(ctx)).encode()
    return data[: len(data) * 2 // 3]


def _invalid_json(ctx: Context) -> bytes:
    return text(solved(ctx)).replace('"cells": [', '"cells": [,', 1).encode()


def _wrong_version(ctx: Context) -> bytes:
    data = json.loads(text(solved(ctx)))
    data["nbformat"] = 5
    return json.dumps(data).encode()


def _non_utf8(ctx: Context) -> bytes:
    return text(solved(ctx)).encode().replace(b"# Setup", b"# Setup \xff\xfe", 1)


def _enormous(ctx: Context) -> bytes:
    nb = solved(ctx)
    nb.cells[first_code(nb)].outputs = [new_output("stream", name="stdout", text="x" * (21 * 2**20))]
    return text(nb).encode()


def _not_a_notebook(ctx: Context) -> bytes:
    return b'["cells", 1, 2, 3]'


def _large_outputs(ctx: Context) -> NotebookNode:
    nb = solved(ctx)  # 8 MiB of stored outputs: under the size limit, and ignored
    nb.cells[first_code(nb)].outputs = [new_output("stream", name="stdout", text="y" * (8 * 2**20))]
    return nb


def _drop(nb: NotebookNode, grade_ids: list[str]) -> NotebookNode:
    doomed = {kit.index(nb, g) for g in grade_ids}
    nb.cells = [c for i, c in enumerate(nb.cells) if i not in doomed]
    return nb


def _deleted_grade_cells(ctx: Context) -> NotebookNode:
    return _drop(solved(ctx), [ex.id for ex in ctx.exercises])


def _duplicated_grade_cells(ctx: Context) -> NotebookNode:
    nb = solved(ctx)  # a copy of each grade cell, edited to return full marks, placed early
    for ex in ctx.exercises:
        fake = copy.deepcopy(nb.cells[kit.index(nb, ex.id)])
        fake.source = "1.0"
        nb.cells.insert(first_code(nb) + 1, fake)
    return nb


def _duplicated_answer_cells(ctx: Context) -> NotebookNode:
    nb = solved(ctx)  # an earlier wrong copy of each answer cell: the last copy counts
    for ex in ctx.exercises:
        at = kit.index(nb, f"{ex.id}-answer")
        wrong = copy.deepcopy(nb.cells[at])
        wrong.source = kit.wrong(ex, 0) or "pass"
        nb.cells.insert(at, wrong)
    return nb


def _reordered(ctx: Context) -> NotebookNode:
    nb = solved(ctx)  # the first exercise's grade cell moved above its answer cell
    ex = ctx.exercises[0]
    grade = nb.cells.pop(kit.index(nb, ex.id))
    nb.cells.insert(kit.index(nb, f"{ex.id}-answer"), grade)
    return nb


def _retyped_grade_cells(ctx: Context) -> NotebookNode:
    nb = solved(ctx)
    for ex in ctx.exercises:
        cell = nb.cells[kit.index(nb, ex.id)]
        cell.cell_type = "markdown"
        cell.pop("outputs", None)
        cell.pop("execution_count", None)
    return nb


def _edited_grade_cells(ctx: Context) -> NotebookNode:
    nb = all_wrong(ctx)
    for ex in ctx.exercises:
        nb.cells[kit.index(nb, ex.id)].source = f"# trust me\n{float(ex.points)!r}"
    return nb


def _grade_metadata_stripped(ctx: Context) -> NotebookNode:
    nb = all_wrong(ctx)  # grade cells made ordinary, printing full points; points raised too
    for ex in ctx.exercises:
        cell = nb.cells[kit.index(nb, ex.id)]
        cell.metadata = {}
        cell.source = f"{float(ex.points)!r}"
    return nb


def _points_raised(ctx: Context) -> NotebookNode:
    nb = solved(ctx)
    for ex in ctx.exercises:
        nb.cells[kit.index(nb, ex.id)].metadata["nbgrader"]["points"] = 100
    return nb


def _answer_cells_removed(ctx: Context) -> NotebookNode:
    return _drop(solved(ctx), [f"{ex.id}-answer" for ex in ctx.exercises])


def _forged_outputs(ctx: Context) -> NotebookNode:
    nb = blank(ctx)  # grade cells "already ran" and printed full points
    for ex in ctx.exercises:
        cell = nb.cells[kit.index(nb, ex.id)]
        cell.outputs = [new_output("stream", name="stdout", text="✔ Correct\n"),
                        new_output("execute_result", data={"text/plain": f"{ex.points!r}"},
                                   execution_count=3)]
    return nb


def _infinite_loop(ctx: Context) -> NotebookNode:
    return early(solved(ctx), "while True:\n    pass")


def _stubborn_loop(ctx: Context) -> NotebookNode:
    code = ("while True:  # swallows the per-cell alarm\n    try:\n        while True:\n"
            "            pass\n    except BaseException:\n        pass")
    return after_first_exercise(ctx, solved(ctx), code)


def _alarm_disabled(ctx: Context) -> NotebookNode:
    # both per-cell timers switched off: only the parent's notebook deadline is left
    code = ("import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nsignal.alarm(0)\n"
            "signal.signal(signal.SIGPROF, signal.SIG_IGN)\n"
            "signal.setitimer(signal.ITIMER_PROF, 0)\nwhile True:\n    pass")
    return after_first_exercise(ctx, solved(ctx), code)


def _wall_alarm_ignored(ctx: Context) -> NotebookNode:
    # the wall-clock alarm ignored, the CPU-time timer still stops the loop
    code = "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nwhile True:\n    pass"
    return early(solved(ctx), code)


def _sleeper(ctx: Context) -> NotebookNode:
    # waits instead of computing: the wall-clock limit stops it
    return early(solved(ctx), "import time\ntime.sleep(3600)")


def _memory_bomb(ctx: Context) -> NotebookNode:
    return early(solved(ctx), "hog = bytearray(16 * 2**30)")


def _torch_memory_bomb(ctx: Context) -> NotebookNode:
    return early(solved(ctx), "import torch\nhog = torch.ones(2**31, dtype=torch.float64)")


def _slow_memory_bomb(ctx: Context) -> NotebookNode:
    # bytes(n) is calloc'd: untouched zero pages, so the address-space limit is reached after a
    # few steps whatever the machine's speed (a bytearray is zeroed by hand, and on a busy
    # machine the per-cell CPU limit could stop that first: the same points, another reason)
    return early(solved(ctx), "hog = []\nwhile True:\n    hog.append(bytes(2**28))")


def _fork_bomb(ctx: Context) -> NotebookNode:
    code = ("import os, time\nkids = 0\nfor _ in range(500):\n    try:\n        pid = os.fork()\n"
            "    except OSError:\n        break\n    if pid == 0:\n        time.sleep(60)\n"
            "        os._exit(0)\n    kids += 1")
    return early(solved(ctx), code)


def _thread_bomb(ctx: Context) -> NotebookNode:
    code = ("import threading, time\nfor _ in range(1000):\n    try:\n"
            "        threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"
            "    except RuntimeError:\n        break")
    return early(solved(ctx), code)


def _sys_exit(ctx: Context) -> NotebookNode:
    return early(solved(ctx), "import sys\nsys.exit('bye')")


def _os_exit(ctx: Context) -> NotebookNode:
    return after_first_exercise(ctx, solved(ctx), "import os\nos._exit(1)")


def _segfault(ctx: Context) -> NotebookNode:
    return after_first_exercise(ctx, solved(ctx), "import ctypes\nctypes.string_at(0)")


def _kill_parent(ctx: Context) -> NotebookNode:
    code = ("import os, signal\nfor target in (os.getppid(), 1, -1):\n    try:\n"
            "        os.kill(target, signal.SIGKILL)\n    except OSError:\n        pass")
    return early(solved(ctx), code)


def _huge_output(ctx: Context) -> NotebookNode:
    return early(solved(ctx), "print('z' * 50_000_000)\nfor i in range(100_000):\n    print(i)")


def _stderr_noise(ctx: Context) -> NotebookNode:
    code = ("import sys, warnings, torch\nprint('E' * 1000, file=sys.stderr)\n"
            "warnings.warn('careful')\n_t = torch.ones(1, requires_grad=True) * 2\n_t.grad")
    return early(solved(ctx), code)


def _big_file(ctx: Context) -> NotebookNode:
    code = "try:\n    open('big.bin', 'wb').write(b'0' * 200 * 2**20)\nexcept OSError:\n    pass"
    return early(solved(ctx), code)


def _recursion(ctx: Context) -> NotebookNode:
    return early(solved(ctx), "def f(n):\n    return f(n + 1)\nf(0)")


def _patch_allclose(ctx: Context) -> NotebookNode:
    code = ("import torch, numpy\ntorch.allclose = lambda *a, **k: True\n"
            "torch.equal = lambda *a, **k: True\ntorch.isclose = lambda *a, **k: torch.tensor(True)\n"
            "torch.testing.assert_close = lambda *a, **k: None\nnumpy.allclose = lambda *a, **k: True")
    return _in_answers(ctx, all_wrong(ctx), code)


def _patch_tensor_eq(ctx: Context) -> NotebookNode:
    code = ("import torch\ntorch.Tensor.__eq__ = lambda self, other: True\n"
            "torch.Tensor.__ne__ = lambda self, other: False\n"
            "torch.Tensor.tolist = lambda self: 'patched'\ntorch.Tensor.detach = lambda self: self")
    return _in_answers(ctx, all_wrong(ctx), code)


def _patch_builtins(ctx: Context) -> NotebookNode:
    code = ("import builtins\nbuiltins.isinstance = lambda obj, cls: True\n"
            "builtins.float = lambda *a: 1.0\nbuiltins.type = lambda *a: dict\n"
            "builtins.len = lambda obj: 0")
    return _in_answers(ctx, all_wrong(ctx), code)


def _in_answers(ctx: Context, nb: NotebookNode, code: str) -> NotebookNode:
    """Append ``code`` to every answer cell: the patch is live while the grader reads the
    answer, and again when it re-runs the cell at the hidden values."""
    for ex in ctx.exercises:
        cell = nb.cells[kit.index(nb, f"{ex.id}-answer")]
        cell.source = cell.source + "\n" + code
    return nb


def _patch_autograder(ctx: Context) -> NotebookNode:
    code = ("import autograder, autograder.selfcheck, autograder.judge, autograder.collect, "
            "autograder.plain\nautograder.selfcheck.grade = lambda *a, **k: 1.0\n"
            "autograder.grade = autograder.selfcheck.grade\n"
            "autograder.judge.judge = lambda *a, **k: None\n"
            "autograder.plain.to_plain = lambda *a, **k: {'t': 'ellipsis'}\n"
            "autograder.collect.read_answer = lambda *a, **k: {'t': 'array', 'shape': [], "
            "'dtype': 'float', 'v': 1.0}\nautograder.collect.at_params = autograder.collect.read_answer")
    return _in_answers(ctx, all_wrong(ctx), code)


def _patch_display(ctx: Context) -> NotebookNode:
    code = ("import sys\nfrom IPython import get_ipython\nip = get_ipython()\n"
            "ip.showtraceback = lambda *a, **k: None\nsys.displayhook = lambda value: None\n"
            "ip.display_pub.publish = lambda *a, **k: None\n"
            "ip.events.register('post_run_cell', lambda *a: print(1.0))")
    return early(blank(ctx), code)


_LIAR = '''import torch

class Liar(torch.Tensor):
    """Equal to everything, and every torch function on it claims success."""

    def __eq__(self, other):
        return True

    def __bool__(self):
        return True

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func in (torch.allclose, torch.equal, torch.Tensor.__eq__):
            return True
        return super().__torch_function__(func, types, args, kwargs or {})
'''


def _tensor_subclass(ctx: Context) -> NotebookNode:
    nb = each(ctx, lambda ex: assign(ex, "torch.tensor([-123.0, 456.0]).as_subclass(Liar)"))
    return early(nb, _LIAR)


def _torch_function_override(ctx: Context) -> NotebookNode:
    code = ('import torch\n\nclass Mimic:\n    """Pretends to be the right tensor to any torch call."""\n'
            "    def __init__(self, real):\n        self.real = real\n\n    @classmethod\n"
            "    def __torch_function__(cls, func, types, args=(), kwargs=None):\n"
            "        return True if func in (torch.allclose, torch.equal) else torch.tensor(1.0)\n")
    nb = each(ctx, lambda ex: assign(ex, "Mimic(torch.tensor(-99.0))"))
    return early(nb, code)


def _always_equal(ctx: Context) -> NotebookNode:
    code = ("class Yes:\n    def __eq__(self, other):\n        return True\n    __hash__ = object.__hash__\n"
            "    def __bool__(self):\n        return True\n    def __len__(self):\n        return 1\n"
            "    def __getitem__(self, key):\n        return self\n")
    return early(each(ctx, lambda ex: assign(ex, "Yes()")), code)


def _lying_float(ctx: Context) -> NotebookNode:
    code = ("class Number(float):\n    def __float__(self):\n        return 42.0\n"
            "    def __eq__(self, other):\n        return True\n    __hash__ = float.__hash__\n")
    return early(each(ctx, lambda ex: assign(ex, "Number(-7.5)")), code)


def _detect_grading(ctx: Context) -> NotebookNode:
    # cheat only when graded: right answers appear only if a grading run is detected
    nb = blank(ctx)
    probe = ("import os, sys\ngrading = bool(os.environ.get('NBGRADER_EXECUTION')) or any(\n"
             "    'GRAD' in k.upper() or 'COURSE' in k.upper() for k in os.environ)\n")
    nb = early(nb, probe)
    for ex in ctx.exercises:
        at = kit.index(nb, f"{ex.id}-answer")
        body = "\n".join("    " + line for line in kit.solution(ex).splitlines())
        nb.cells[at].source = f"if grading:\n{body}\nelse:\n    {ex.answer} = ..."
    return nb


def _snoop(ctx: Context) -> NotebookNode:
    # right answers only if the notebook can read something it must not
    course = ctx.course
    targets = [course / "gradebook.db", course / "source", course / "submitted" / ctx.other_student,
               course / "gradtutor" / "results", course]
    probe = ("import os\nfound = []\nfor p in %r:\n    try:\n        if os.path.isdir(p):\n"
             "            found += os.listdir(p)\n        else:\n"
             "            found.append(open(p, 'rb').read(16))\n"
             "    except OSError:\n        pass\nstole = bool(found)\n") % [str(t) for t in targets]
    nb = early(blank(ctx), probe)
    for ex in ctx.exercises:
        at = kit.index(nb, f"{ex.id}-answer")
        body = "\n".join("    " + line for line in kit.solution(ex).splitlines())
        nb.cells[at].source = f"if stole:\n{body}\nelse:\n    {ex.answer} = ..."
    return nb


def _huge_answer(ctx: Context) -> NotebookNode:
    return each(ctx, lambda ex: assign(ex, "__import__('torch').zeros(5_000_000)"))


def _generator_answer(ctx: Context) -> NotebookNode:
    return each(ctx, lambda ex: assign(ex, "(i for i in range(3))"))


def _raise_limits(ctx: Context) -> NotebookNode:
    code = ("import resource\nfor r in (resource.RLIMIT_AS, resource.RLIMIT_NPROC, resource.RLIMIT_CPU):\n"
            "    try:\n        resource.setrlimit(r, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))\n"
            "    except (ValueError, OSError):\n        pass\n")
    return early(solved(ctx), code)


# --- what student code must not reach: probes that earn the first exercise only if they ran ------
#
# Each probe runs early and sets ``stole`` when it found anything of the trusted side. The first
# exercise is answered only when the probe ran to its end (``probe_done``): a probe that crashed
# or was stopped would show as a lost first point, so a FIRST_ONLY score proves both that the
# probe really searched and that it found nothing. A probe that found something answers every
# exercise with the solution, so any leak shows as full marks.

def _find(ctx: Context) -> str:
    """The probes' search: every needle, and the name of a classmate (the roster), split."""
    needles = [*NEEDLES, (ctx.other_student[:4], ctx.other_student[4:])]
    return (f"NEEDLES = {needles!r}\n"
            "def found_in(s):\n"
            "    for a, b in NEEDLES:\n"
            "        i = s.find(a)\n"
            "        while i >= 0:\n"
            "            if s[i + len(a):i + len(a) + len(b)] == b:\n"
            "                return True\n"
            "            i = s.find(a, i + 1)\n"
            "    return False\n")


def _probed(ctx: Context, probes: list[str]) -> NotebookNode:
    nb = blank(ctx)
    at = first_code(nb) + 1
    cells = [new_code_cell(_find(ctx) + "stole = False\nprobe_done = False")]
    cells += [new_code_cell(p) for p in probes]
    cells.append(new_code_cell("probe_done = True"))
    nb.cells[at:at] = cells
    for k, ex in enumerate(ctx.exercises):
        at = kit.index(nb, f"{ex.id}-answer")
        body = "\n".join("    " + line for line in kit.solution(ex).splitlines())
        flag = "probe_done" if k == 0 else "stole"
        nb.cells[at].source = f"if {flag}:\n{body}\nelse:\n    {ex.answer} = ..."
    return nb


def _frames_and_objects(ctx: Context) -> NotebookNode:
    # attack 1: the frames up the stack (the old child was a fork of the grader: run_child's
    # ``source`` held every solution and hidden test, other frames the roster and the queue)
    frames = ("import sys\nf = sys._getframe()\nwhile f is not None:\n"
              "    for scope in (f.f_locals, f.f_globals):\n"
              "        for v in list(scope.values()):\n"
              "            if isinstance(v, str) and found_in(v) or type(v).__name__ in (\n"
              "                    'NotebookNode', 'Exercise', 'Submission', 'Source'):\n"
              "                stole = True\n"
              "    for c in f.f_code.co_consts:\n"
              "        if isinstance(c, str) and found_in(c):\n"
              "            stole = True\n"
              "    f = f.f_back\ndel f")
    # every object the collector tracks, and the strings they hold
    objects = ("import gc\nfor o in gc.get_objects():\n    t = type(o)\n"
               "    if t.__name__ in ('NotebookNode', 'Exercise', 'Submission', 'Wrong'):\n"
               "        stole = True\n"
               "    elif t is dict:\n"
               "        if any(type(v) is str and found_in(v) for v in o.values()):\n"
               "            stole = True\n"
               "    elif t in (list, tuple):\n"
               "        if any(type(v) is str and found_in(v) for v in o):\n"
               "            stole = True\n"
               "del o")
    return _probed(ctx, [frames, objects])


def _key_in_modules(ctx: Context) -> NotebookNode:
    # attack 2: the answer key among loaded modules, importable, or on disk next to the package
    code = ("import sys, importlib, os\n"
            "for name in list(sys.modules):\n"
            "    if name.split('.')[0] == 'exercises' or name in ('gradtutor.key.registry',\n"
            "            'gradtutor.key.answer_key', 'gradtutor.key.exercise', 'gradtutor.grading.batch'):\n"
            "        stole = True\n"
            "for name in ('exercises', 'gradtutor', 'gradtutor.key.answer_key', 'gradtutor.key.registry',\n"
            "             'gradtutor.key.listing'):\n"
            "    try:\n"
            "        importlib.import_module(name)\n"
            "        stole = True\n"
            "    except Exception:\n"
            "        pass\n"
            "import autograder.checkdata as cd\n"
            "if cd.ids():\n"
            "    stole = True  # not even the shown values: the sandbox holds no check data\n"
            "def content(path):\n"
            "    try:\n"
            "        with open(path, 'rb') as f:\n"
            "            return f.read(1)\n"
            "    except OSError:\n"
            "        return b''\n"
            f"for folder in {[str(p) for p in _trusted_folders(ctx)]!r}:\n"
            "    try:\n"
            "        names = os.listdir(folder)\n"
            "    except OSError:\n"
            "        continue\n"
            "    if any(content(os.path.join(folder, n)) for n in names):\n"
            "        stole = True  # a file with something in it (names alone tell nothing)\n")
    return _probed(ctx, [code])


def _trusted_folders(ctx: Context) -> list[Path]:
    import autograder
    import exercises

    units = Path(exercises.__file__).parent
    return [units, units / "ch01_graphs", units.parent, units.parent / "solutions",
            units.parent / ".git", Path(autograder.__file__).parent, ctx.course,
            ctx.course / "source", ctx.course / "submitted", Path.home()]


def _raw_memory(ctx: Context) -> NotebookNode:
    # attack 3: the process's own writable memory, read raw (freed memory included): what a fork
    # of a process that once held a classmate's notebook would still carry
    setup = ("import ctypes, time\nregions = []\nfor line in open('/proc/self/maps'):\n"
             "    parts = line.split()\n"
             "    if parts[1] == 'rw-p' and (len(parts) < 6 or not parts[5].startswith('[v')):\n"
             "        lo, hi = (int(x, 16) for x in parts[0].split('-'))\n"
             "        regions.append([lo, hi])\n"
             "BYTES = [(a.encode(), b.encode()) for a, b in NEEDLES]\n"
             "def found_in_bytes(s):\n"
             "    for a, b in BYTES:\n"
             "        i = s.find(a)\n"
             "        while i >= 0:\n"
             "            if s[i + len(a):i + len(a) + len(b)] == b:\n"
             "                return True\n"
             "            i = s.find(a, i + 1)\n"
             "    return False\n"
             "scanned = 0")
    # each cell scans for at most 1 s of CPU and leaves the rest to the next one
    step = ("start = time.process_time()\n"
            "while regions and time.process_time() - start < 1.0:\n"
            "    lo, hi = regions[0]\n"
            "    size = min(hi - lo, 8 << 20)\n"
            "    if found_in_bytes(ctypes.string_at(lo, size + 64 if lo + size + 64 <= hi else size)):\n"
            "        stole = True\n"
            "    scanned += size\n"
            "    regions[0][0] += size\n"
            "    if regions[0][0] >= hi:\n"
            "        regions.pop(0)")
    done = "assert not regions and scanned > 16 << 20, (len(regions), scanned)"
    return _probed(ctx, [setup, *[step] * 12, done])


def _tmp_writer(ctx: Context) -> NotebookNode:
    # leaves files in the shared scratch folders for a classmate graded after it
    code = ("import os\nfor d in ('/tmp', '/dev/shm', '/var/tmp', os.getcwd()):\n    try:\n"
            f"        open(os.path.join(d, 'gradtutor-leak-{TOKEN[1]}'), 'w').write('hello')\n"
            "    except OSError:\n        pass")
    return early(solved(ctx), code)


def _tmp_reader(ctx: Context) -> NotebookNode:
    # graded after the writer (names sort so): finds its files only if scratch space is shared
    code = ("import os, time\nend = time.time() + 2\nwhile time.time() < end and not stole:\n"
            "    for d in ('/tmp', '/dev/shm', '/var/tmp'):\n"
            "        try:\n"
            "            if any('gradtutor-leak' in n for n in os.listdir(d)):\n"
            "                stole = True\n"
            "        except OSError:\n"
            "            pass\n"
            "    time.sleep(0.05)")
    return _probed(ctx, [code])


def _disk_filler(ctx: Context) -> NotebookNode:
    # 64 MiB files in a loop, in every folder it can write, until the space runs out
    code = ("import os\nblock = b'0' * (16 << 20)\nwritten = 0\n"
            "for d in (os.getcwd(), '/tmp', '/dev/shm', '/var/tmp', os.path.expanduser('~')):\n"
            "    for k in range(40):\n"
            "        try:\n"
            "            with open(os.path.join(d, f'gradtutor-fill-{k}'), 'wb') as f:\n"
            "                for _ in range(4):\n"
            "                    f.write(block)\n"
            "            written += 64\n"
            "        except OSError:\n"
            "            break")
    return early(solved(ctx), code)


_PIPES = ("import os, stat, json\npipes = []\nfor fd in range(3, 256):\n    try:\n"
          "        if stat.S_ISFIFO(os.fstat(fd).st_mode):\n            pipes.append(fd)\n"
          "    except OSError:\n        pass\n"
          "def forge(message):\n    for fd in pipes:\n        try:\n"
          "            os.write(fd, (json.dumps(message) + '\\n').encode())\n"
          "        except OSError:\n            pass\n")


def _forged_messages(ctx: Context) -> NotebookNode:
    # writes messages of its own onto the answer pipe: free text, forged reasons, a crash report
    first = ctx.exercises[0]
    answers = [{"t": "error", "v": LEAK, "text": LEAK}] * len(first.variants())
    code = _PIPES + (
        f"forge({{'type': 'cell', 'cell': 0, 'error': {LEAK!r}}})\n"
        f"forge({{'type': 'cell', 'cell': 1, 'why': {LEAK!r}}})\n"
        f"forge({{'type': 'rejected', 'reason': {LEAK!r}}})\n"
        f"forge({{'type': 'crash', 'error': {LEAK!r}}})\n"
        f"forge({{'type': 'answers', 'exercise': {first.id!r}, 'cell': 0, 'answers': {answers!r}}})\n"
        f"forge({{'type': 'answers', 'exercise': {first.id!r}, 'cell': 0, "
        f"'answers': [{{'t': 'missing', 'why': {LEAK!r}}}] * {len(first.variants())}}})\n")
    return early(blank(ctx), code)


def _forged_done(ctx: Context) -> NotebookNode:
    # says "done" itself, switches both timers off and sleeps: it must still be stopped
    code = _PIPES + ("forge({'type': 'done'})\nimport signal, time\n"
                     "signal.setitimer(signal.ITIMER_REAL, 0)\nsignal.setitimer(signal.ITIMER_PROF, 0)\n"
                     "signal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
                     "signal.signal(signal.SIGPROF, signal.SIG_IGN)\ntime.sleep(3600)")
    return after_first_exercise(ctx, solved(ctx), code)


def _outliver(ctx: Context) -> NotebookNode:
    # a double-forked process that outlives the child, then tries to rewrite the gradebook
    targets = [str(ctx.course / "gradebook.db"), str(ctx.course / "gradtutor" / "results")]
    code = ("import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
            "        time.sleep(1)\n"
            f"        for t in {targets!r}:\n"
            "            try:\n                open(t, 'wb').write(b'0')\n            except OSError:\n"
            "                pass\n"
            "    os._exit(0)\ntime.sleep(0.1)")
    return early(solved(ctx), code)


def _deep_notebook(ctx: Context) -> bytes:
    # 100 000 levels of nesting inside the metadata: a parser without a depth bound recurses away
    nb = json.loads(nbformat.writes(solved(ctx)))
    nb["metadata"]["x"] = "@@DEEP@@"
    text = json.dumps(nb)
    return text.replace('"@@DEEP@@"', "[" * 100_000 + "]" * 100_000).encode()


def _link(target: Callable[[Path, Context], Path]) -> Callable[[Path, Context], None]:
    def plant(path: Path, ctx: Context) -> None:
        path.unlink()
        path.symlink_to(target(path, ctx))
    return plant


def _classmate_notebook(path: Path, ctx: Context) -> Path:
    return ctx.course / "submitted" / ctx.other_student / path.parent.name / path.name


def _fifo_notebook(path: Path, ctx: Context) -> None:
    path.unlink()
    os.mkfifo(path)


def _stamp(kind: str) -> Callable[[Path, Context], None]:
    def plant(path: Path, ctx: Context) -> None:
        stamp = path.parent / "timestamp.txt"
        if kind == "fifo":
            os.mkfifo(stamp)
        else:
            stamp.symlink_to(kind)
    return plant


def _linked_folder(path: Path, ctx: Context) -> None:
    folder = path.parent
    for p in folder.iterdir():
        p.unlink()
    folder.rmdir()
    folder.symlink_to(_classmate_notebook(path, ctx).parent)


CASES: list[Case] = [
    Case("invalid_json", "a stray comma: not JSON", _invalid_json, ZERO, "failed", "not valid JSON"),
    Case("truncated", "upload cut off two thirds in", _truncated, ZERO, "failed", "truncated"),
    Case("wrong_nbformat", "nbformat 5 (no such version)", _wrong_version, ZERO, "failed",
         "format version 5"),
    Case("non_utf8", "bytes that are not UTF-8", _non_utf8, ZERO, "failed", "not UTF-8"),
    Case("enormous", "21 MiB of stored output", _enormous, ZERO, "failed", "the limit is 20 MiB"),
    Case("not_a_notebook", "a JSON list", _not_a_notebook, ZERO, "failed", "not a notebook"),
    Case("large_outputs", "8 MiB of stored outputs, answers right", _large_outputs, FULL),
    Case("stdlib_imports", "right answers that import stdlib modules in the sandbox",
         _stdlib_imports, FULL),
    Case("deleted_grade_cells", "every grade cell deleted", _deleted_grade_cells, FULL),
    Case("duplicated_grade_cells", "forged copies of grade cells", _duplicated_grade_cells, FULL),
    Case("duplicated_answer_cells", "a wrong copy above each answer", _duplicated_answer_cells, FULL),
    Case("reordered", "grade cell moved above its answer", _reordered, ALL_BUT_FIRST,
         message="There is no variable"),
    Case("retyped_grade_cells", "grade cells turned into markdown", _retyped_grade_cells, FULL),
    Case("edited_grade_cells", "grade cells replaced by full points, answers wrong",
         _edited_grade_cells, ZERO),
    Case("grade_metadata_stripped", "grade cells made ordinary, answers wrong",
         _grade_metadata_stripped, ZERO),
    Case("points_raised", "points in metadata raised to 100", _points_raised, FULL),
    Case("answer_cells_removed", "every answer cell deleted", _answer_cells_removed, ZERO,
         message="There is no variable"),
    Case("forged_outputs", "grade cell outputs claiming full marks, no answers", _forged_outputs, ZERO),
    Case("infinite_loop", "while True: pass", _infinite_loop, FULL, reason="time limit per cell"),
    Case("stubborn_loop", "a loop that swallows the alarm", _stubborn_loop, FIRST_ONLY,
         reason="longer than the limit"),
    Case("alarm_disabled", "switches off both per-cell timers, then loops", _alarm_disabled,
         FIRST_ONLY, reason="longer than the limit"),
    Case("wall_alarm_ignored", "ignores SIGALRM, then loops", _wall_alarm_ignored, FULL,
         reason="of computing (time limit per cell)"),
    Case("sleeper", "time.sleep(3600) in a cell", _sleeper, FULL,
         reason="still running after"),
    Case("memory_bomb", "16 GiB bytearray", _memory_bomb, FULL, reason="ran out of memory"),
    Case("torch_memory_bomb", "16 GiB tensor", _torch_memory_bomb, FULL),
    Case("slow_memory_bomb", "grows a list until memory runs out", _slow_memory_bomb, FULL,
         reason="ran out of memory"),
    Case("fork_bomb", "up to 500 sleeping children", _fork_bomb, FULL),
    Case("thread_bomb", "up to 1000 threads", _thread_bomb, FULL),
    Case("sys_exit", "sys.exit() in a cell", _sys_exit, FULL),
    Case("os_exit", "os._exit(1) after the first exercise", _os_exit, FIRST_ONLY,
         reason="exited with code 1"),
    Case("segfault", "dereferences NULL after the first exercise", _segfault, FIRST_ONLY,
         reason="SIGSEGV"),
    Case("kill_parent", "SIGKILL to its parent, init and everyone", _kill_parent, FULL),
    Case("raise_limits", "tries to lift its own limits", _raise_limits, FULL),
    Case("huge_output", "prints 50 MB and 100000 lines", _huge_output, FULL),
    Case("stderr_noise", "stderr output and torch warnings", _stderr_noise, FULL),
    Case("big_file", "writes a 200 MiB file", _big_file, FULL),
    Case("recursion", "infinite recursion", _recursion, FULL),
    Case("patch_allclose", "torch.allclose etc. always True, answers wrong", _patch_allclose, ZERO),
    Case("patch_tensor_eq", "Tensor.__eq__/tolist/detach patched, answers wrong", _patch_tensor_eq,
         ZERO),
    Case("patch_builtins", "isinstance/float/type/len patched, answers wrong", _patch_builtins, ZERO),
    Case("patch_autograder", "grade/judge/to_plain/read_answer patched, answers wrong",
         _patch_autograder, ZERO),
    Case("patch_display", "display hooks and tracebacks hijacked, no answers", _patch_display, ZERO),
    Case("tensor_subclass", "a Tensor subclass equal to everything", _tensor_subclass, ZERO),
    Case("torch_function", "a __torch_function__ impostor", _torch_function_override, ZERO),
    Case("always_equal", "an object whose __eq__ is always True", _always_equal, ZERO),
    Case("lying_float", "a float subclass with a lying __float__", _lying_float, ZERO),
    Case("detect_grading", "right answers only when a grader is detected", _detect_grading, ZERO),
    Case("snoop", "right answers only if it can read the gradebook or classmates", _snoop, ZERO),
    Case("huge_answer", "a 5-million-element tensor as every answer", _huge_answer, ZERO),
    Case("generator_answer", "a generator as every answer", _generator_answer, ZERO),
    # the sandbox holds nothing of the trusted side (each probe earns the first point if it ran)
    Case("frames_and_objects", "searches the stack's frames and gc.get_objects() for solutions, "
         "hidden tests, the roster, a classmate's cells", _frames_and_objects, FIRST_ONLY),
    Case("key_in_modules", "looks for the answer key in sys.modules, by import, and on disk",
         _key_in_modules, FIRST_ONLY),
    Case("raw_memory", "reads its own writable memory raw (freed memory too) for the same",
         _raw_memory, FIRST_ONLY),
    Case("tmp_leak_a_writer", "leaves files in /tmp, /dev/shm and /var/tmp", _tmp_writer, FULL),
    Case("tmp_leak_b_reader", "looks for a classmate's files in /tmp, /dev/shm, /var/tmp",
         _tmp_reader, FIRST_ONLY),
    Case("disk_filler", "writes 64 MiB files in a loop into every folder it can", _disk_filler, FULL),
    Case("forged_messages", "writes messages of its own, with free text, onto the answer pipe",
         _forged_messages, ZERO, never=LEAK),
    Case("forged_done", "says 'done' itself, switches the timers off and sleeps", _forged_done,
         FIRST_ONLY),
    Case("outliver", "a double-forked process that later writes to the gradebook", _outliver, FULL),
    # special files in submitted/, as git, tar or rsync -a keep them
    Case("deep_notebook", "100 000 levels of nesting inside its metadata", _deep_notebook, ZERO,
         "failed", "nested too deeply"),
    Case("symlink_to_classmate", "the notebook is a symbolic link to a classmate's", solved, ZERO,
         "failed", "symbolic link", plant=_link(_classmate_notebook)),
    Case("fifo_notebook", "the notebook is a named pipe", solved, ZERO, "failed",
         "not a regular file", plant=_fifo_notebook),
    Case("linked_folder", "the assignment folder is a symbolic link to a classmate's", solved, ZERO,
         "failed", "symbolic link", plant=_linked_folder),
    Case("fifo_timestamp", "timestamp.txt is a named pipe", solved, FULL, plant=_stamp("fifo")),
    Case("devzero_timestamp", "timestamp.txt links to /dev/zero", solved, FULL, plant=_stamp("/dev/zero")),
    Case("shadow_timestamp", "timestamp.txt links to /etc/shadow", solved, FULL,
         plant=_stamp("/etc/shadow")),
]
