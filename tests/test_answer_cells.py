"""#26, must-show 6: names that exercises of one chapter share, and review() in a kernel.

Setups bind ``x0`` as a float, then as a list; two exercises both ask for ``grads``. The
finder below lists every name two setups of a chapter bind with a different meaning; the kernel
binds each answer cell to its exercise (``autograder/answer_cells.py``): its setup runs again
before it, and its value stays the exercise's. These tests run every chapter's setups and
solutions in a real kernel, in order, then go back to each exercise a collision touches.
"""

from __future__ import annotations

import contextlib
import io
import json
import types
from typing import Any

import pytest
import torch
from test_by_hand import _kernel_run

from autograder import checkdata, selfcheck
from autograder.answers import assigns
from autograder.contract import spec_to_json
from gradtutor.authoring.lesson import parse
from gradtutor.key import answer_key, registry
from gradtutor.key.registry import Chapter


def _first_cell(chapter: Chapter) -> str:
    return next(b.text for b in parse(chapter.lesson.read_text()) if b.kind == "code")


def _meaning(value: Any) -> str:
    """What a name stands for, comparable across two runs of two setups."""
    if isinstance(value, types.ModuleType):
        return f"module {value.__name__}"
    if isinstance(value, torch.Tensor):
        return f"tensor {value.dtype} {value.tolist()}"
    if callable(value):
        code = getattr(value, "__code__", None)
        return f"{type(value).__name__} {getattr(value, '__qualname__', '')} " + \
            (repr((code.co_code, code.co_consts)) if code is not None else repr(value))
    return f"{type(value).__name__} {value!r}"


def setup_collisions(chapter: Chapter) -> dict[str, dict[str, str]]:
    """Every name bound by two exercise setups of the chapter at their shown values with a
    different type or value: name -> {exercise id: meaning}."""
    first = _first_cell(chapter)
    seen: dict[str, dict[str, str]] = {}
    for exercise_id in chapter.exercise_ids():
        ex = registry.get(exercise_id)
        setup = ex.setup_code(ex.params)
        ns: dict[str, Any] = {}
        with contextlib.redirect_stdout(io.StringIO()):
            exec(first, ns)
            before = dict(ns)
            exec(setup, ns)
        for name, value in ns.items():  # what the setup binds anew (re-importing a module does not)
            if not name.startswith("__") and before.get(name, ns) is not value:
                seen.setdefault(name, {})[exercise_id] = _meaning(value)
    return {name: by for name, by in seen.items() if len(set(by.values())) > 1}


def shared_answers(chapter: Chapter) -> dict[str, list[str]]:
    """Answer names that another exercise's solution binds too: name -> exercise ids."""
    out: dict[str, list[str]] = {}
    exercises = [registry.get(e) for e in chapter.exercise_ids()]
    for ex in exercises:
        binders = [o.id for o in exercises
                   if assigns(o.solution, ex.answer) or assigns(o.setup_code(o.params), ex.answer)]
        if len(binders) > 1:
            out[ex.answer] = binders
    return out


def test_the_finder_names_the_collisions_the_issue_found() -> None:
    """x0 a float in 3.1 and a list in 3.9; h = 5 in mlp_backward and 6 in train_engine; grads
    asked for twice in chapter 10 (the finders can fail: these are there)."""
    chapters = {ch.number: ch for ch in registry.chapters()}
    ch03 = setup_collisions(chapters[3])
    assert ch03["x0"]["accumulate_three"].startswith("float")
    assert ch03["x0"]["retain_grad_values"].startswith("list")
    assert {"mlp_backward", "train_engine"} <= set(setup_collisions(chapters[10])["h"])
    assert shared_answers(chapters[10])["grads"] == ["neuron_by_hand", "fanout_by_hand"]


def test_no_lesson_cell_binds_an_answer_name() -> None:
    """A demo cell run again would rebind an exercise's answer, and nothing tells the self-check
    it is not the student's: lesson cells use names of their own."""
    for chapter in registry.chapters():
        answers = {registry.get(e).answer: e for e in chapter.exercise_ids()}
        for block in parse(chapter.lesson.read_text()):
            if block.kind == "code":
                bound = [name for name in answers if assigns(block.text, name)]
                assert not bound, f"{chapter.slug}: a lesson cell binds {bound}, an answer name"


# --- in a real kernel ----------------------------------------------------------------------------

def _run(kc, code: str, cell_id: str | None = None) -> str:
    """Run a cell; its stdout, or the error it raised."""
    out = []
    for m in _kernel_run(kc, code, cell_id=cell_id):
        if m["msg_type"] == "stream" and m["content"]["name"] == "stdout":
            out.append(m["content"]["text"])
        elif m["msg_type"] == "error":
            out.append(f"ERROR {m['content']['ename']}: {m['content']['evalue']}")
    return "".join(out)


READ = ("import json as _json\nfrom autograder.answers import read_shown as _read_shown\n"
        "from autograder.contract import spec_from_json as _spec\n"
        "print(_json.dumps(_read_shown(_spec(_json.loads({spec!r})), globals()), sort_keys=True, default=str))")


def _read(kc, ex) -> str:
    """The answer at the shown values as the self-check reads it (plain data, as JSON)."""
    return _run(kc, READ.format(spec=json.dumps(spec_to_json(answer_key.spec(ex, 1)))))


@pytest.fixture(scope="module")
def kernel():
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3")
    yield kc
    kc.stop_channels()
    km.shutdown_kernel(now=True)


def _in_order(kc, chapter: Chapter, *, checks: bool = False, ids: bool = True) -> dict[str, str]:
    """A fresh namespace, the lesson's first cell, then each exercise's setup and solution (and
    its check cell), every cell with its notebook id (as JupyterLab sends it; nbclient, which
    the build and nbgrader use, sends none); each answer as read right after its cell."""
    _run(kc, "%reset -f\nimport autograder.answer_cells as _cells\n_cells._RAN.clear()")
    assert "ERROR" not in _run(kc, _first_cell(chapter))
    read = {}
    for exercise_id in chapter.exercise_ids():
        ex = registry.get(exercise_id)
        assert "ERROR" not in _run(kc, ex.setup_code(ex.params), cell_id=f"{ex.id}-setup" if ids else None)
        assert "ERROR" not in _run(kc, ex.solution, cell_id=f"{ex.id}-answer" if ids else None), ex.id
        if checks:
            _run(kc, f'check("{ex.id}", {ex.answer})', cell_id=ex.id if ids else None)
        read[ex.id] = _read(kc, ex)
    return read


def _touched(chapter: Chapter) -> list[str]:
    names = setup_collisions(chapter)
    shared = shared_answers(chapter)
    return [e for e in chapter.exercise_ids() if any(e in by for by in names.values())
            or registry.get(e).answer in shared]


@pytest.mark.slow
@pytest.mark.parametrize("number", [ch.number for ch in registry.chapters()])
def test_going_back_to_an_exercise_finds_its_own_inputs(kernel, number: int) -> None:
    """After the whole chapter ran, each exercise a shared name touches, its answer cell run
    again alone (as JupyterLab runs it, by its id), gives the answer it gave in order."""
    chapter = next(ch for ch in registry.chapters() if ch.number == number)
    touched = _touched(chapter)
    if not touched:
        pytest.skip(f"{chapter.slug}: no name two exercises bind differently")
    first = _in_order(kernel, chapter)
    for exercise_id in touched:
        ex = registry.get(exercise_id)
        ran = _run(kernel, ex.solution, cell_id=f"{ex.id}-answer")
        assert "ERROR" not in ran, f"{ex.id}, run again: {ran}"
        assert _read(kernel, ex) == first[ex.id], ex.id


def test_without_its_id_an_answer_cell_sees_the_last_setup(kernel) -> None:
    """The control: the same cell run without its id (no hook) after the chapter computes with
    3.9's list for x0 (``n * (2 * x0)`` repeats the list), where 3.1's float was meant."""
    chapter = next(ch for ch in registry.chapters() if ch.number == 3)
    first = _in_order(kernel, chapter)
    ex = registry.get("accumulate_three")
    _run(kernel, ex.solution)
    assert _read(kernel, ex) != first[ex.id]
    _run(kernel, ex.solution, cell_id=f"{ex.id}-answer")
    assert _read(kernel, ex) == first[ex.id]


@pytest.mark.parametrize("ids", [True, False], ids=["with cell ids", "without"])
def test_review_judges_each_exercise_by_its_own_cell(kernel, ids: bool) -> None:
    """Chapter 8 asks for meta_grad twice (a number in 8.5, a function in 8.8): after the
    chapter ran with its checks, review() lists every exercise right, in order, with its number,
    and shows the checks again without computing a practice check. Without cell ids, the cell a
    check("maml_one_step") follows is that exercise's."""
    chapter = next(ch for ch in registry.chapters() if ch.number == 8)
    assert "meta_grad" in shared_answers(chapter)
    _in_order(kernel, chapter, checks=True, ids=ids)
    out = _run(kernel, "from gradtutor.key import answer_key as _key\n"
                       "def _no(*a, **k): raise AssertionError('review() computed a practice check')\n"
                       "_key._practice_check = _key._practice = _no\n"
                       "from autograder import review\nprint(review(8, globals()))")
    rows = [line.split() for line in out.splitlines()[1:]]
    count = len(chapter.exercise_ids())
    assert out.splitlines()[0] == f"{count} of {count} exercises right", out
    assert [r[1] for r in rows] == [f"8.{n}" for n in range(1, len(rows) + 1)]
    assert [r[-1].strip("[]") for r in rows] == chapter.exercise_ids()


def test_review_computes_nothing_when_the_practice_cache_is_warm(tmp_path, monkeypatch) -> None:
    """The practice checks come from the cache folder (``make lab`` and the build fill it): a
    first review() in a new process reads them and computes none."""
    monkeypatch.setenv("GRADTUTOR_CACHE", str(tmp_path))
    chapter = registry.chapters()[0]
    answer_key.practice_check.cache_clear()  # computed earlier in this session: write them here
    for exercise_id in chapter.exercise_ids():
        answer_key.practice_check(exercise_id)
    answer_key.practice_check.cache_clear()
    checkdata.practice.cache_clear()

    def computed(exercise_id: str) -> None:
        raise AssertionError(f"review() computed the practice check of {exercise_id}")

    monkeypatch.setattr(answer_key, "_practice_check", computed)
    try:
        out = selfcheck.review(chapter.number, {})
        assert [fb.exercise for fb in out] == chapter.exercise_ids()
    finally:
        answer_key.practice_check.cache_clear()
        checkdata.practice.cache_clear()
