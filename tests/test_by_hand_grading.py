"""By hand is enforced by `gradtutor grade`, against references to the engine saved earlier.

Every by-hand exercise of the course, in one batch: a submission whose earlier cell saves
references to the engine (``torch.autograd.grad``, ``Tensor.backward``, the engine's
``run_backward``, ``torch.func`` kept as a module, ``torch._C._functorch`` entry points, forward
mode) and whose answer cell is the solution plus one use of them scores 0 with the by-hand
message; the plain solution scores full marks. Without the source-level guard the saved
references reach the engine and the solution's value would earn everything.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest
from hostile import kit

from gradtutor.authoring import build
from gradtutor.course import Course
from gradtutor.key import registry

# one batch of 14 notebooks (every chapter with a by-hand exercise, twice): about 10 minutes on a
# loaded two-core machine, over the default 600 s
pytestmark = [pytest.mark.slow, pytest.mark.timeout(2400)]

# the earlier cell: references to every way into the engine, under names the guard cannot know
STASH = """\
import torch as _T
import torch.autograd.forward_ad as _FWD
_SAVED = {
    "grad": _T.autograd.grad, "backward": _T.Tensor.backward, "func": _T.func,
    "func_grad": _T.func.grad, "jacfwd": _T.func.jacfwd, "run_backward": _T._C._ImperativeEngine.run_backward,
    "engine": _T.autograd.Variable._execution_engine, "dual_level": _FWD.dual_level,
    "make_dual": _FWD.make_dual, "unpack_dual": _FWD.unpack_dual,
    "functorch": _T._C._functorch, "fwd_on": _T._C._set_fwd_grad_enabled,
    "enter_dual": _T._C._enter_dual_level, "exit_dual": _T._C._exit_dual_level,
}
"""

# one gradient through the saved references, after the solution (its value is left untouched)
ROUTES = {
    "autograd.grad": "_x = _T.tensor(2.0, requires_grad=True)\n_g = _SAVED['grad'](_x * _x, _x)",
    "Tensor.backward": "_x = _T.tensor(2.0, requires_grad=True)\n_SAVED['backward'](_x * _x)",
    "run_backward": "_x = _T.tensor(2.0, requires_grad=True)\n"
                    "_g = _SAVED['run_backward'](_SAVED['engine'], (_x * _x,), (_T.tensor(1.0),), "
                    "False, False, (_x,), True, False)",
    "func module": "_g = _SAVED['func'].grad(lambda v: v * v)(_T.tensor(2.0))",
    "func.grad": "_g = _SAVED['func_grad'](lambda v: v * v)(_T.tensor(2.0))",
    "jacfwd": "_g = _SAVED['jacfwd'](lambda v: v * v)(_T.tensor(2.0))",
    "forward_ad": "with _SAVED['dual_level']():\n"
                  "    _g = _SAVED['unpack_dual'](_SAVED['make_dual'](_T.tensor(2.0), _T.tensor(1.0)) ** 2)",
    "functorch C": "_f = _SAVED['functorch']\n_x0 = _T.tensor(2.0)\n_lvl = _f._grad_increment_nesting()\ntry:\n"
                   "    _f.set_inplace_requires_grad_allowed(True)\n"
                   "    _x = _f._wrap_for_grad(_x0, _lvl).requires_grad_()\n"
                   "    _f.set_inplace_requires_grad_allowed(False)\n"
                   "    _g = _SAVED['grad'](_x * _x, _x)\nfinally:\n    _f._grad_decrement_nesting()",
    # its own dual level, or (where the guard holds the only one) the guard's
    "raw dual": "_SAVED['fwd_on'](True)\ntry:\n    _lvl = _SAVED['enter_dual']()\nexcept RuntimeError:\n"
                "    _lvl = 0\n_d = _T._make_dual(_T.tensor(2.0), _T.tensor(1.0), _lvl)\n"
                "_g = _T._unpack_dual(_d * _d, _lvl)[1]",
}
CHEAT = "cheat"
HONEST = "honest"


def _chapters() -> list[registry.Chapter]:
    return [ch for ch in registry.chapters()
            if any(ex.by_hand and ex.chapter == ch.number for ex in registry.all_exercises())]


def _cheat(released: nbformat.NotebookNode, routes: dict[str, str]) -> nbformat.NotebookNode:
    """The solution in every answer cell; before each by-hand one, the stash cell, and after its
    solution one use of a saved reference (``routes``: exercise id -> route)."""
    nb = kit.answered(released, kit.solution)
    for ex_id, route in routes.items():
        at = kit.index(nb, f"{ex_id}-answer")
        nb.cells[at].source = f"{kit.solution(registry.get(ex_id))}\n{ROUTES[route]}"
        nb.cells.insert(at, nbformat.v4.new_code_cell(STASH))
    return nb


@pytest.fixture(scope="module")
def graded() -> dict:
    root = Path(tempfile.mkdtemp(prefix="gradtutor-byhand-"))
    course = root / "course"
    plan: dict[str, str] = {}
    names = sorted(ROUTES)
    for chapter in _chapters():
        build.write_source(chapter, course)
        released = nbformat.read(build.release(chapter, course), as_version=4)
        by_hand = [ex.id for ex in kit.exercises_of(released) if ex.by_hand]
        routes = {ex_id: names[(len(plan) + i) % len(names)] for i, ex_id in enumerate(by_hand)}
        plan.update(routes)
        kit.submit(course, CHEAT, chapter, _cheat(released, routes))
        kit.submit(course, HONEST, chapter, kit.answered(released, kit.solution))
    code = ("import sys; from pathlib import Path\nfrom gradtutor.grading.batch import grade_cli\n"
            f"sys.exit(grade_cli(course_dir=Path({str(course)!r}), assignment=None, workers=2, "
            "csv=None, force=False))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=2300)
    assert done.returncode == 0, done.stderr[-3000:]
    yield {"course": Course.at(course), "plan": plan}
    shutil.rmtree(root, ignore_errors=True)


def _exercises(graded: dict, student: str) -> dict[str, dict]:
    out = {}
    for chapter in _chapters():
        result = json.loads(graded["course"].results_path(chapter.slug, student).read_text())
        out.update({e["id"]: e for e in result["exercises"]})
    return out


def test_every_by_hand_exercise_and_every_route_is_tried(graded: dict) -> None:
    assert set(graded["plan"]) == {ex.id for ex in registry.all_exercises() if ex.by_hand}
    assert set(graded["plan"].values()) == set(ROUTES)


def test_saved_references_to_the_engine_earn_nothing_by_hand(graded: dict) -> None:
    got = _exercises(graded, CHEAT)
    for ex_id, route in graded["plan"].items():
        e = got[ex_id]
        assert e["points"] == 0, (ex_id, route, e)
        assert "done by hand" in e["message"], (ex_id, route, e["message"])


def test_the_cheats_other_exercises_score_as_the_honest_classmates(graded: dict) -> None:
    # the other exercises of the same notebooks score as the honest classmate's (the stash cells
    # change nothing there). The "raw dual" route once left a dual level open for the rest of the
    # notebook: the sandbox ran answer cells unguarded, where the kernel's hook guards them (its
    # level held, so the route's own one fails); now the sandbox guards them too (JobCell.by_hand)
    got = _exercises(graded, CHEAT)
    honest = _exercises(graded, HONEST)
    others = {i: (e["points"], honest[i]["points"]) for i, e in got.items() if i not in graded["plan"]}
    differ = {i: (pts, got[i]["message"][:200]) for i, pts in others.items() if pts[0] != pts[1]}
    assert others and not differ, differ


def test_the_solutions_still_earn_full_marks(graded: dict) -> None:
    got = _exercises(graded, HONEST)
    for ex_id in graded["plan"]:
        assert got[ex_id]["points"] == got[ex_id]["max_points"], got[ex_id]
