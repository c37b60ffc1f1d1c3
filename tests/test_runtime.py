"""The student runtime: what a student's kernel gets, checked from the outside.

The wheel is built by `gradtutor runtime`, unpacked, and imported by a fresh interpreter that
sees only it and the site-packages (``python -I -S``, as the grading zygote starts): the full
package and the exercise units are not on its path.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import sysconfig
import warnings
import zipfile
from pathlib import Path

import pytest

from autograder.answers import read_answer
from autograder.judge import judge
from autograder.kinds import canonical_to_json
from gradtutor.authoring import runtime
from gradtutor.key import registry
from gradtutor.key.answer_key import check_for, practice_params, spec, wrong_values

GRADTUTOR = str(Path(sys.executable).parent / "gradtutor")
EXERCISES = registry.all_exercises()
SITE = list(dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib")))


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runtime")
    done = subprocess.run([GRADTUTOR, "runtime", str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    (path,) = out.glob("gradtutor_runtime-*.whl")
    return path


@pytest.fixture(scope="module")
def unpacked(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("unpacked")
    with zipfile.ZipFile(wheel) as z:
        z.extractall(dest)
    return dest


def in_runtime(unpacked: Path, code: str, *args: str) -> str:
    """Run ``code`` in an interpreter whose only ``autograder`` is the runtime's."""
    boot = f"import sys; sys.path[0:0] = {[str(unpacked), *SITE]!r}\n"
    done = subprocess.run([sys.executable, "-I", "-S", "-c", boot + code, *args],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


RUNTIME_SOURCE = Path(runtime.PACKAGE)
RUNTIME_MODULES = sorted(str(p.relative_to(RUNTIME_SOURCE)) for p in RUNTIME_SOURCE.rglob("*.py")
                         if "build" not in p.relative_to(RUNTIME_SOURCE).parts)


def test_wheel_holds_the_student_side_only(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        text = "\n".join(z.read(n).decode(errors="replace") for n in names)
        data = json.loads(z.read("autograder/_data/checks.json"))["exercises"]
    modules = {n for n in names if n.endswith(".py")}
    # the whole student package (the folder is the list), and nothing else
    assert modules == {f"autograder/{m}" for m in RUNTIME_MODULES}
    assert not any(n.startswith(("gradtutor/", "exercises/")) for n in names)
    assert not any(n.startswith(f"autograder/{m}") for n in names
                   for m in ("registry.py", "answer_key.py", "exercise.py", "key.py", "grading/", "builder/"))
    assert not any(n.startswith("exercises") for n in names)
    # no solution, no hidden variant (its setup or its reference), no unit source: the shown
    # values and the practice values only
    assert list(data) == [ex.id for ex in EXERCISES]
    for ex in EXERCISES:
        assert ex.solution.strip() not in text, ex.id
        practice = [ex.setup_code(p) for p in practice_params(ex.id)]
        assert data[ex.id]["spec"]["setups"] == [ex.setup_code(ex.params), *practice]
        assert len(data[ex.id]["variants"]) == 3
        assert not {ex.setup_code(h) for h in ex.hidden} & set(practice) - {ex.setup_code(ex.params)}
    assert "EXERCISE = Exercise(" not in text and "def reference(" not in text


def test_runtime_imports_nothing_of_the_trusted_side(unpacked: Path) -> None:
    code = ("import importlib, json, sys\n"
            f"for m in {RUNTIME_MODULES!r}:\n"
            "    importlib.import_module('autograder.' + m[:-3].replace('/', '.').removesuffix('.__init__'))\n"
            "import autograder\n"
            "print(json.dumps(sorted(n for n in sys.modules if n.split('.')[0] in "
            "('exercises', 'gradtutor', 'nbgrader', 'sympy'))))")
    assert json.loads(in_runtime(unpacked, code)) == []


def test_runtime_check_gives_the_full_packages_verdict(unpacked: Path) -> None:
    """For every exercise, the solution run in the runtime's kernel and every listed wrong
    answer: the same verdict, misconception and message as the full package at the shown values."""
    cases = []
    for ex in EXERCISES:
        ns: dict = {}
        with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")  # the solutions' own anomaly-mode warnings
            exec("import torch\nimport torch.nn.functional as F\n" + ex.setup_code(ex.params), ns)
            exec(ex.solution, ns)
        solution_plain = read_answer(spec(ex, 1), {}, ns[ex.answer]) if not ex.is_function else None
        plains = [canonical_to_json(c) for _, c in wrong_values(ex.id, 0)]
        if solution_plain is not None:
            plains.append(solution_plain)
        expected = [_verdict(judge(ex.id, [p])) for p in plains]
        cases.append({"id": ex.id, "setup": ex.setup_code(ex.params), "solution": ex.solution,
                      "answer": ex.answer, "plains": plains, "expected": expected,
                      "full_solution": _verdict(judge(ex.id, [_shown(ex, ns)]))})
    code = ("import contextlib, io, json, sys\nfrom autograder import check\n"
            "from autograder.judge import judge\n"
            "out = []\n"
            "quiet = contextlib.redirect_stdout(io.StringIO())  # solutions may print\n"
            "quiet.__enter__()\n"
            "for case in json.load(open(sys.argv[1])):\n"
            "    ns = {}\n"
            "    exec('import torch\\nimport torch.nn.functional as F\\n' + case['setup'], ns)\n"
            "    exec(case['solution'], ns)\n"
            "    fb = check(case['id'], ns[case['answer']])\n"
            "    got = [[f.verdict, f.misconception, f.message] for f in\n"
            "           [judge(case['id'], [p]) for p in case['plains']]]\n"
            "    out.append({'id': case['id'], 'solution': [fb.verdict, fb.misconception, fb.message],\n"
            "                'plains': got})\n"
            "quiet.__exit__(None, None, None)\n"
            "print(json.dumps(out))")
    data = unpacked / "cases.json"
    data.write_text(json.dumps(cases))
    got = {c["id"]: c for c in json.loads(in_runtime(unpacked, code, str(data)))}
    assert len(got) == len(EXERCISES) == len(cases)
    wrong_checked = 0
    for case in cases:
        mine = got[case["id"]]
        assert mine["solution"] == case["full_solution"], case["id"]
        assert mine["solution"][0] == "correct", case["id"]
        assert mine["plains"] == case["expected"], case["id"]
        wrong_checked += len(case["plains"])
    assert wrong_checked >= 220  # every listed wrong answer of the course


def _verdict(fb) -> list:
    return [fb.verdict, fb.misconception, fb.message]


def _shown(ex, ns: dict) -> dict:
    from autograder.answers import read_shown

    return read_shown(spec(ex, 1), ns)


@pytest.mark.slow
def test_wheel_installs_beside_torch_alone(wheel: Path, tmp_path: Path) -> None:
    """A fresh venv with the wheel and its declared dependencies (torch, numpy, matplotlib,
    ipywidgets, IPython) and nothing of the trusted side: check() judges from the bundled data."""
    env = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", env], check=True)
    python = env / "bin" / "python"
    constraints = Path(__file__).resolve().parents[1] / "constraints.txt"
    done = subprocess.run([python, "-m", "pip", "install", "--quiet", "-c", constraints, wheel],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    listed = subprocess.run([python, "-m", "pip", "list", "--format=json"], capture_output=True,
                            text=True, check=True)
    names = {p["name"].lower() for p in json.loads(listed.stdout)}
    assert "gradtutor-runtime" in names and "torch" in names
    assert not names & {"gradtutor", "nbgrader", "jupyterlab", "notebook"}  # sympy comes with torch
    code = ("import sys, torch\nfrom autograder import check\nfrom autograder.checkdata import ids\n"
            "x = torch.tensor(2.0, requires_grad=True)\n"
            "print(len(ids()), check('sum_rule', 11.0).verdict, check('sum_rule', 24.0).misconception)\n"
            "import importlib.util\nprint(importlib.util.find_spec('gradtutor'))")
    alone = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the venv's own packages only
    ran = subprocess.run([python, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=300,
                         env=alone)
    assert ran.returncode == 0, ran.stderr[-3000:]
    count, right, invalid, trusted = ran.stdout.split()[-4:]
    assert int(count) == len(EXERCISES)
    assert trusted == "None"
    assert (right, invalid) == ("correct", "value_not_derivative")


def test_a_provider_comes_before_bundled_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The instructor's environment holds the student wheel (shown and practice values) beside
    the trusted package: grading there judges every variant the answer key has."""
    from autograder import checkdata

    data = tmp_path / "checks.json"
    data.write_text(json.dumps(runtime.check_data()))
    caches = (checkdata._bundled, checkdata.get, checkdata.practice, checkdata.is_by_hand)
    for cached in caches:
        cached.cache_clear()
    monkeypatch.setattr(checkdata, "DATA_FILE", data)
    try:
        assert checkdata._bundled() is not None  # the data file is there, and read
        graded = checkdata.to_json(checkdata.get("sum_rule"))
        assert graded == checkdata.to_json(check_for("sum_rule"))  # the hidden variants
        assert graded != runtime.check_data()["exercises"]["sum_rule"]
        monkeypatch.setattr(checkdata, "_registered", [None])  # no provider: the bundled data
        checkdata._provider.cache_clear()
        checkdata.get.cache_clear()
        assert checkdata.to_json(checkdata.get("sum_rule")) == runtime.check_data()["exercises"]["sum_rule"]
    finally:
        monkeypatch.undo()
        checkdata._provider.cache_clear()
        for cached in caches:
            cached.cache_clear()
