"""`gradtutor grade` starts fast and keeps its parent out of the way (issue #28, items 2 and 3).

Behaviour only, never time: the references are computed once per version of the code and read
back after (`keep_checks`, kept in the course folder, private); the zygote is started before
the parent loads torch, and the first child is forked before the references are computed
(only the judge needs them); the gradebook opens only once the first job is read; the zygote
loads before its first fork only the lesson imports of the first children's chapter (and every
import of the runtime), the others' between forks (never before the first fork), each walk
followed by a fresh guard; the recorder's gradebook transaction is all or nothing; the child's
profile figures are read like any other message from the sandbox; the judge's fast comparison
of small tensors gives torch's verdicts; the zygote warms up with the garbage collector off and
every child collects; loading the exercise units runs no costly torch path.
"""

from __future__ import annotations

import gc
import json
import os
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import pytest
import torch
from hostile import kit
from hypothesis import given, settings
from hypothesis import strategies as st
from nbgrader.api import Gradebook

from autograder import kinds
from autograder.checkdata import to_json
from autograder.contract import CellFailed, Done, Job, JobCell, Ready, parse_message
from autograder.sandbox import walks as torch_walks
from autograder.sandbox import zygote
from autograder.sandbox.limits import Limits
from gradtutor.grading import torch_uses
from gradtutor.grading.forkserver import Sandbox
from gradtutor.grading.profile import CGROUP_CPU, Profile
from gradtutor.grading.submission import first_imports
from gradtutor.key import answer_key, registry
from gradtutor.records import gradebook

GRADTUTOR = str(Path(sys.executable).parent / "gradtutor")
FIRST = registry.chapters()[0].exercise_ids()[0]


def test_checks_are_computed_once_then_read_back(tmp_path: Path, monkeypatch) -> None:
    folder = tmp_path / "checks"
    monkeypatch.setattr(answer_key, "_KEPT", {})
    assert answer_key.keep_checks(folder, [FIRST]) == [FIRST]
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700  # grading variants: the grader's alone
    (stored,) = folder.glob(f"{FIRST}-*.json")
    computed = to_json(answer_key.check_for(FIRST))

    monkeypatch.setattr(answer_key, "_KEPT", {})  # a new run of the same code
    assert answer_key.keep_checks(folder, [FIRST]) == []
    assert to_json(answer_key._KEPT[FIRST]) == computed

    stored.write_text('{"id": "' + FIRST + '", "not": "a check"}')  # damaged: computed again
    monkeypatch.setattr(answer_key, "_KEPT", {})
    assert answer_key.keep_checks(folder, [FIRST]) == [FIRST]
    assert to_json(answer_key._KEPT[FIRST]) == computed


def test_one_transaction_stores_all_or_nothing(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")  # alembic
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gb:
        with gradebook.one_transaction(gb):
            gb.update_or_create_student("ann")  # nbgrader commits inside: only a flush here
            gb.update_or_create_student("bob")
        with pytest.raises(RuntimeError), gradebook.one_transaction(gb):
            gb.update_or_create_student("cid")
            raise RuntimeError("the grader failed mid-batch")
        gb.update_or_create_student("dan")  # commits as nbgrader's own again
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gb:
        assert sorted(s.id for s in gb.students) == ["ann", "bob", "dan"]


def test_a_childs_profile_figures_are_bounded_and_named() -> None:
    line = json.dumps({"type": "ready", "spent": {"child: mounts": 0.004, "child: isolate": 1e300,
                                                  "rm -rf": 1.0, "child: seccomp": "fast"}})
    assert parse_message(line.encode(), {}) == Ready((("child: mounts", 0.004),))
    assert parse_message(b'{"type": "done", "spent": [1, 2]}', {}) == Done(())
    assert parse_message(b'{"type": "done", "spent": {"child: cells": -1}}', {}) == Done(())
    # CPU seconds and minor and major page faults per step: whole, bounded numbers or nothing
    usage = {"child: cells": [0.05, 3200, 0], "child: answer re-runs": [0.01, 1.5, 0],
             "child: guard restore": [-1, 0, 0]}
    line = json.dumps({"type": "done", "usage": usage})
    assert parse_message(line.encode(), {}) == Done((), (("child: cells", 0.05, 3200, 0),))
    line = json.dumps({"type": "done", "usage": {"child: cells": [0.05, 3200, 0], "child: mounts": [0, 1, 0]}})
    assert parse_message(line.encode(), {}) == Done((), (("child: cells", 0.05, 3200, 0),))  # not a run step
    for bad in ([0.1, True, 0], [0.1, 2**41, 0], [0.1, 1], "0.1 1 0", None):
        assert parse_message(json.dumps({"type": "done", "usage": {"child: cells": bad}}).encode(),
                             {}) == Done(())
    line = json.dumps({"type": "ready", "usage": {"child: after fork": [0.002, 400, 1]}})
    assert parse_message(line.encode(), {}) == Ready((), (("child: after fork", 0.002, 400, 1),))


def test_the_profile_adds_up_each_childs_cpu_and_faults_by_assignment() -> None:
    prof = Profile(enabled=True)
    for chapter, faults in (("ch01", 3000), ("ch01", 5000), ("ch11", 70000)):
        prof.add_child((("child: cells", 0.2),), (("child: cells", 0.1, faults, 0),
                                                   ("child: after fork", 0.002, 400, 0)), chapter=chapter)
        prof.add_chapter(chapter, CGROUP_CPU, 0.12)
    assert prof.child["child: cells"].minflt == 78000 and prof.child["child: after fork"].count == 3
    assert prof.chapters["ch01"]["child: cells"].minflt == 8000
    assert prof.chapters["ch01"][CGROUP_CPU].count == 2
    saved = prof.to_json()
    assert saved["chapters"]["ch11"]["child: cells"]["minflt"] == 70000
    table = prof.table()
    assert "minflt/sub" in table and any(line.split()[:2] == ["ch01", "2"] for line in table.splitlines())


def _walks(*cells: str, solution: str = "") -> list[str]:
    return torch_uses.walks_for({"chX": {"nb": _notebook(*cells, solution=solution)}})


def test_the_zygote_walks_only_the_torch_paths_the_chapters_code_takes() -> None:
    """Chosen from what the lessons' cells (never a solution's) and the runtime functions they
    reach call or hand to a call; an import alone, or a module handed on, takes no path."""
    assert _walks("x = torch.ones(2, requires_grad=True)\nx.sum().backward()") == []
    assert _walks("import torch.autograd.forward_ad as fwAD", "import torch.func\nhasattr(torch.func, 'grad')",
                  solution="torch.optim.SGD([w], lr=0.1).step()") == []
    assert _walks("%matplotlib inline\nfrom torch import optim as o\no.Adam(params)") == ["optim"]
    assert _walks("from torch.func import grad\ngrad(f)(x)") == ["func"]
    assert _walks("import torch.autograd.forward_ad as fwAD",
                  "with fwAD.dual_level():\n    fwAD.make_dual(x, v)") == ["forward_ad"]
    assert _walks("torch.utils.checkpoint.checkpoint(f, x)", "torch.autograd.functional.jacobian(f, x)") \
        == ["functional", "checkpoint"]
    # a runtime function that hands torch's gradcheck to a helper (autograder.harness), reached
    # by name and through __import__ as the exercises' calls reach it
    assert _walks("from autograder.harness import function_report\nfunction_report(f, [x], g)") \
        == ["gradcheck", "grad_outputs"]
    assert _walks("__import__('autograder.harness', fromlist=['function_report']).function_report(f, [x], g)") \
        == ["gradcheck", "grad_outputs"]
    # the self-check machinery names torch.func's functions only to switch them off: no walk
    assert _walks("from autograder import check\ncheck(1, x)") == []
    # a backward pass given its output's gradient checks its shape symbolically (sympy)
    assert _walks("y.backward()", "torch.autograd.grad(y, x)", "y.backward(retain_graph=True)") == []
    for call in ("y.backward(torch.ones(3))", "y.backward(gradient=v)", "torch.autograd.grad(y, x, v)",
                 "from torch.autograd import grad\ngrad(y, [x], grad_outputs=v)",
                 "torch.autograd.backward([y], [v])"):
        assert _walks(call) == ["grad_outputs"], call
    # a widget does nothing in a grading child (headless): what it would call is not walked
    assert _walks("from autograder import chain_rule_stepper\nchain_rule_stepper()") == []
    assert _walks("from autograder.visual.widgets import _chain_numbers\n_chain_numbers(1.0, 2.0)") \
        == ["grad_outputs"]
    assert list(torch_walks.COVERS) == [name for name, _ in torch_walks.WALKS.items()]


def test_chapter_one_walks_nothing_and_the_course_every_walk() -> None:
    root = Path(__file__).resolve().parent.parent / "notebooks"
    chapters = sorted(p.stem for p in root.glob("ch*.ipynb"))
    sources = {ch: {ch: nbformat.read(root / f"{ch}.ipynb", as_version=4)} for ch in chapters}
    assert torch_uses.walks_for({"ch01_graphs": sources["ch01_graphs"]}) == []
    assert torch_uses.walks_for(sources) == list(torch_walks.WALKS)


def _course() -> Path:
    root = Path(tempfile.mkdtemp(prefix="gradtutor-start-"))
    root.chmod(0o755)
    course = root / "course"
    chapter = kit.first_chapter()
    released = kit.make_course(course, chapter)
    for student in ("ann", "bob"):
        kit.submit(course, student, chapter, kit.answered(released, kit.solution))
    return course


def _grade(course: Path, *extra: str) -> dict:
    done = subprocess.run([GRADTUTOR, "grade", str(course), "--workers", "2", "--profile", *extra],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "references computed" in done.stderr and "child: cells" in done.stderr  # the table
    return json.loads((course / "gradtutor" / "grade-profile.json").read_text())


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="gradtutor grade needs root")
def test_second_run_computes_no_reference_and_the_zygote_starts_first() -> None:
    course = _course()
    first = _grade(course)
    exercises = len(kit.exercises_of(kit.released(course, kit.first_chapter())))
    assert first["counts"]["references computed"] == exercises
    kept = course / "gradtutor" / "cache" / "checks"
    assert len(list(kept.glob("*.json"))) == exercises
    # the zygote was started before this process loaded torch; the children do not wait for
    # the references (only the judge needs them): the first is forked before they are computed
    marks = first["marks_s"]
    assert marks["zygote spawned"] < marks["first fork requested"] <= marks["first child forked"] \
        < marks["references ready"]
    # the gradebook (nbgrader's import and opening) waits for the first job to be read
    assert marks["first job read"] < marks["gradebook opened"]
    results = {p.name: json.loads(p.read_text())["score"]
               for p in (course / "gradtutor" / "results").glob("*/*.json")}

    again = _grade(course, "--force")
    assert again["counts"]["references computed"] == 0
    assert {p.name: json.loads(p.read_text())["score"]
            for p in (course / "gradtutor" / "results").glob("*/*.json")} == results
    assert again["submissions"] == 2 and again["child"]["child: cells"]["count"] == 2


def test_loading_every_unit_runs_no_costly_torch_path_until_a_prompt_is_written() -> None:
    """The judge's process loads every unit of a course it grades. A unit that ran torch at
    import to show what torch prints (an optimizer's refusal first imports torch._dynamo: 1.5 s)
    cost each such process that much; the message is now made when the prompt is written."""
    probe = ("import sys\n"
             "from gradtutor.key import registry\n"
             "units = [registry.get(i) for i in registry.ids()]\n"
             "loaded = 'torch._dynamo' in sys.modules\n"
             "prompt = registry.get('nonleaf_optimizer_error').prompt_text()\n"
             "print(loaded, 'torch._dynamo' in sys.modules, prompt.count('can\\'t optimize'))\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True", "1"]
    assert "{{" not in registry.get("nonleaf_optimizer_error").prompt_text()


def _notebook(*sources: str, solution: str = "") -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    if solution:
        cell = nbformat.v4.new_code_cell(solution)
        cell.metadata["nbgrader"] = {"solution": True, "grade": False, "locked": False,
                                     "grade_id": "answer", "schema_version": 3}
        nb.cells.append(cell)
    return nb


def test_the_zygote_loads_the_first_chapters_imports_before_forking_and_the_others_after() -> None:
    sources = {
        "ch01": {"a.ipynb": _notebook("import math\nfrom autograder import check\nx = 1",
                                      solution="import secrets_of_the_answer")},
        "ch11": {"b.ipynb": _notebook("from sklearn.datasets import load_digits",
                                      "from autograder.tensor_harness import band\nimport math")},
    }
    now, later = first_imports(sources, "ch01")
    # the runtime's imports come first whatever their chapter: every child's guard covers them
    assert now == ["from autograder import check", "from autograder.tensor_harness import band",
                   "import math"]
    assert later == ["from sklearn.datasets import load_digits"]
    assert first_imports(sources, "ch11") == (
        ["from autograder import check", "from autograder.tensor_harness import band",
         "from sklearn.datasets import load_digits", "import math"], [])


def test_a_child_forked_after_a_walk_has_a_guard_taken_after_it() -> None:
    """A walk may write to a module the guard watches (or load one): the guard the zygote
    hands to later children must hold the module as the walk left it, or student code could
    change what the walk put there and the guard would not put it back."""
    old_guard = zygote.Snapshot()
    try:
        walks = [lambda: setattr(json, "_walked", "by the zygote"), lambda: None]
        guard = zygote._walk_next(walks, old_guard)
        assert walks and guard is not old_guard  # more walks to come: a fresh guard already
        json._walked = "by student code"
        guard.restore()
        assert json._walked == "by the zygote"
    finally:
        gc.unfreeze()
        if hasattr(json, "_walked"):
            del json._walked


_DIGITS_IN_ZYGOTE = """
import json, socket, sys
from autograder import tensor_harness
from autograder.sandbox import zygote
seen = []
def state():
    seen.append(["sklearn" in sys.modules, tensor_harness.digits_data.cache_info().currsize])
zygote.harness_data()  # no lesson imported scikit-learn: nothing loaded, nothing imported
state()
ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
zygote._LaterImports(["from sklearn.datasets import load_digits"], ours)()  # a later chapter's
state()
seen.append(json.loads(theirs.recv(1024)))
before = tensor_harness.digits(3)[0]
zygote.child_caches()  # loaded once: the same tensors, not read again
state()
seen.append(bool((tensor_harness.digits(3)[0] == before).all()))
print(json.dumps(seen))
"""


def test_the_zygote_loads_the_digits_once_a_lesson_imported_scikit_learn() -> None:
    """Chapter 11's harness reads scikit-learn's digits at every grading variant: the zygote
    loads them once its lessons' imports (the first chapter's or a later walk's) loaded
    scikit-learn, so no child parses them again; without scikit-learn it imports nothing."""
    out = subprocess.run([sys.executable, "-c", _DIGITS_IN_ZYGOTE], capture_output=True, text=True,
                         timeout=300, env={**os.environ, "PYTHONPATH": str(Path(zygote.__file__).parents[2])})
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.splitlines()[-1]) == [
        [False, 0], [True, 1], {"op": "imported"}, [True, 1], True]


def _clean(sandbox: Sandbox, source: str) -> bool:
    """Did ``source`` run without an error in a fresh child?"""
    out: list = []
    sandbox.grade_all([(0, Job(cells=(JobCell("code", source, None),), specs={}))], workers=1,
                      on_done=out.append)
    assert out[0].started and not out[0].not_graded
    return not any(isinstance(m, CellFailed) for m in out[0].messages)


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox's children need root")
def test_later_chapters_imports_load_after_ready_and_reach_later_children() -> None:
    with Sandbox(limits=Limits(), course_dir=None, imports=None) as sandbox:
        ops: list = []
        receive = sandbox._receive

        def logged(timeout: float) -> dict | None:
            message = receive(timeout)
            if message is not None:
                ops.append(message.get("op"))
            return message

        sandbox._receive = logged
        sandbox.send_imports(["import json"], later=["import xml.dom.minidom", "import json"])
        sandbox.wait_ready()
        time.sleep(1)  # a parent slower than its zygote: the zygote still walks on only later
        # the first child is forked before any walk: the later imports are not in it yet
        assert _clean(sandbox, "import sys\nassert 'xml.dom.minidom' not in sys.modules")
        # the zygote walks once the parent is quiet for a grace: often while that child still
        # runs, so its "imported" may have come already (it is in ``ops``), or comes now
        end = time.monotonic() + 120
        while "imported" not in ops and time.monotonic() < end:
            sandbox._receive(0.5)
        assert "imported" in ops, "the zygote did not load the later imports within 120 s"
        assert ops.index("ready") < ops.index("forked") < ops.index("imported")
        assert _clean(sandbox, "import sys\nassert 'xml.dom.minidom' in sys.modules")
        assert not _clean(sandbox, "import sys\nassert 'xml.dom.pulldom' in sys.modules")  # control


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox's children need root")
def test_children_collect_garbage_though_the_zygote_warms_up_without_collecting() -> None:
    """The zygote turns the collector off while it imports and walks (a tenth to a fifth of its
    warm-up): every child, forked before a walk or after one, must have it on again, or a
    student's cycles would never be freed."""
    collecting = "import gc\nassert gc.isenabled() and gc.get_freeze_count() > 100_000"
    with Sandbox(limits=Limits(), course_dir=None, imports=None, walks_told=True) as sandbox:
        sandbox.send_imports([])
        sandbox.wait_ready()
        assert _clean(sandbox, collecting)
        assert not _clean(sandbox, "import gc\nassert not gc.isenabled()")  # control
        sandbox.send_walks(["gradcheck"])
        walked = sandbox._await(lambda m: m.get("op") == "walked", 120, "walk")
        assert walked["walk"] == "walk_gradcheck"
        assert _clean(sandbox, collecting)


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox's children need root")
def test_the_zygote_walks_only_what_it_is_told_and_a_child_reports_its_page_faults() -> None:
    walked: list = []

    def logged(sandbox: Sandbox) -> None:
        receive = sandbox._receive

        def log(timeout: float) -> dict | None:
            message = receive(timeout)
            if message is not None and message.get("op") == "walked":
                walked.append(message["walk"])
            return message

        sandbox._receive = log

    def quiet(sandbox: Sandbox) -> None:  # any walk would start within a grace or two
        end = time.monotonic() + 20 * zygote.WALK_GRACE
        while time.monotonic() < end:
            sandbox._receive(0.1)

    def until(sandbox: Sandbox, count: int) -> None:  # each walk reported, however loaded the machine
        end = time.monotonic() + 120
        while len(walked) < count and time.monotonic() < end:
            sandbox._receive(0.1)
        quiet(sandbox)  # and nothing more

    job = Job(cells=(JobCell("code", "x = [str(i) for i in range(10**5)]", None),), specs={})
    # as `gradtutor grade` starts it: no walk until the parent has named the chapters' walks
    with Sandbox(limits=Limits(), course_dir=None, imports=None, walks_told=True) as sandbox:
        logged(sandbox)
        sandbox.send_imports([])
        out: list = []
        sandbox.grade_all([(0, job)], workers=1, on_done=out.append)
        done = next(m for m in out[0].messages if isinstance(m, Done))
        usage = {name: (cpu, minor) for name, cpu, minor, _ in done.usage}
        assert usage["child: cells"][0] > 0 and usage["child: cells"][1] > 100  # 100,000 new strings
        quiet(sandbox)
        assert walked == []
        sandbox.send_walks(["gradcheck", "no such walk"])
        until(sandbox, 1)
        assert walked == ["walk_gradcheck"]
    # told nothing, the zygote walks every path; told fewer, only those not walked yet
    walked.clear()
    with Sandbox(limits=Limits(), course_dir=None, imports=None) as sandbox:
        logged(sandbox)
        sandbox.send_imports([])
        sandbox.send_walks(["functional", "checkpoint"])
        sandbox.grade_all([(0, job)], workers=1, on_done=lambda outcome: None)
        until(sandbox, 2)
        assert walked == ["walk_functional", "walk_checkpoint"]


def _torch_close(a, b, rtol: float, atol: float) -> bool:
    """``numbers_close`` as torch computes it (the path for large tensors)."""
    nan_a, nan_b = torch.isnan(a), torch.isnan(b)
    inf_a, inf_b = torch.isinf(a), torch.isinf(b)
    if not torch.equal(nan_a, nan_b) or not torch.equal(inf_a, inf_b) or \
            not torch.equal(a[inf_a], b[inf_b]):
        return False
    finite = ~(nan_a | inf_a)
    return bool(torch.all(torch.abs(a[finite] - b[finite]) <= atol + rtol * torch.abs(b[finite])))


_numbers = st.one_of(st.floats(allow_nan=True, allow_infinity=True, width=64),
                     st.sampled_from([0.0, -0.0, 1.0, 1.0 + 1e-4, 1.0 - 1e-6, 1e-6, -1e-6, 2.0000001]))


@given(pairs=st.lists(st.tuples(_numbers, _numbers), min_size=1, max_size=kinds.SMALL),
       rtol=st.sampled_from([1e-4, 1e-6, 2.5, 0.0]), atol=st.sampled_from([1e-6, 1e-8, 0.0, 0.5]),
       same=st.booleans())
@settings(max_examples=200, deadline=None)
def test_small_tensors_compare_in_python_as_torch_does(pairs, rtol, atol, same) -> None:
    """The judge compares up to SMALL float64 numbers in Python (a torch call costs more than
    the comparison): the verdict must be torch's, bit for bit, NaN and infinities included."""
    a = torch.tensor([x for x, _ in pairs], dtype=torch.float64)
    b = a.clone() if same else torch.tensor([y for _, y in pairs], dtype=torch.float64)
    assert kinds.numbers_close(a, b, rtol, atol) == _torch_close(a, b, rtol, atol)


def test_references_are_the_same_bits_on_any_number_of_threads() -> None:
    """A reduction split over threads adds in another order: references are computed on one
    thread wherever they are computed (grade, regrade, the build, any machine), so a unit's
    fingerprint does not depend on where it was computed (batchnorm_backward's did)."""
    ex = registry.get("batchnorm_backward")
    before = torch.get_num_threads()
    seen = []
    try:
        for threads in (1, 2, 4):
            torch.set_num_threads(threads)
            seen.append([_bits(answer_key.variant_at(ex, params)) for params in ex.variants()])
            assert torch.get_num_threads() == threads  # given back
    finally:
        torch.set_num_threads(before)
    assert seen[0] == seen[1] == seen[2]


def _bits(variant) -> str:
    """Every float of a variant, as the cache stores it (all 17 digits)."""
    return json.dumps([kinds.canonical_to_json(variant.reference),
                       [[i, kinds.canonical_to_json(c)] for i, c in variant.wrong]])
