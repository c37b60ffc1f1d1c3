"""Reading answers (``autograder.answers.read_all``) with the collector's thresholds raised: the
garbage of a plain-Python engine is freed in young collections, never in repeated full ones, and
the thresholds are put back whatever the answer does (#28)."""

from __future__ import annotations

import gc
import sys

import pytest

from autograder import answers
from autograder.answers import READ_GC_THRESHOLD, read_all
from autograder.contract import AnswerSpec

# a function answer that makes many objects in reference cycles (a node and its closure, as an
# engine written in plain Python does), read at the shown values and at two other variants
CYCLES = """def make(k):
    class Node:
        def __init__(self, prev):
            self.prev = prev
            self.back = lambda: self
    node = None
    for _ in range(k):
        node = Node(node)
        node = None if _ % 1000 == 0 else node
    return k
"""


def _spec(setups: tuple[str, ...]) -> AnswerSpec:
    return AnswerSpec(answer="make", setups=setups, call="make(k)")


def _read(source: str, setups: tuple[str, ...]) -> list[dict]:
    ns: dict = {}
    exec(setups[0], ns)
    exec(source, ns)
    return read_all(_spec(setups), ns, ["", source, "check()"])


@pytest.fixture
def collections():
    """(generation, collected) of each collection while the test runs."""
    seen: list[tuple[int, int]] = []

    def note(phase: str, info: dict) -> None:
        if phase == "stop":
            seen.append((info["generation"], info["collected"]))

    gc.callbacks.append(note)
    yield seen
    gc.callbacks.remove(note)


def test_the_garbage_of_a_read_is_freed_by_young_collections(collections) -> None:
    gc.collect()
    collections.clear()
    got = _read(CYCLES, ("k = 200_000", "k = 250_000", "k = 300_000"))
    assert [a.get("v") for a in got] == [200_000, 250_000, 300_000]
    assert any(g == 0 and n > 0 for g, n in collections), collections  # freed while reading
    assert all(g != 2 for g, _ in collections), collections  # no full collection in between
    # a few passes over ~3,000,000 objects (the default thresholds would make thousands)
    assert len(collections) <= 10, len(collections)


# a function answer whose few objects hold memory (an engine on tensors): each call leaves one
# object in a cycle behind and says how many of the earlier calls' are still alive
FEW_BIG = """import sys, weakref
def make(k):
    class Holder:
        pass
    seen = sys.__dict__.setdefault("_gradtutor_test_seen", [])
    held = Holder()
    held.data, held.me = bytearray(k), held  # a cycle: only the collector frees it
    alive = sum(ref() is not None for ref in seen)
    seen.append(weakref.ref(held))
    return alive
"""


def test_each_variant_s_garbage_is_freed_before_the_next_variant_runs() -> None:
    """A few objects far under the threshold's million may hold much memory: each variant's
    cycles are collected before the next variant runs, so a read holds one variant's at most."""
    gc.collect()
    try:
        got = _read(FEW_BIG, ("k = 1_000_000", "k = 2_000_000", "k = 3_000_000"))
    finally:
        sys.__dict__.pop("_gradtutor_test_seen", None)
    assert [a.get("v") for a in got] == [0, 0, 0]


def test_the_thresholds_are_put_back_after_a_read() -> None:
    before = gc.get_threshold()
    assert before != READ_GC_THRESHOLD
    _read(CYCLES, ("k = 10", "k = 20"))
    assert gc.get_threshold() == before
    _read("def make(k):\n    raise ValueError('no')\n", ("k = 1", "k = 2"))  # an answer that raises
    assert gc.get_threshold() == before


def test_an_answer_that_changes_the_collector_does_not_keep_its_change() -> None:
    before = gc.get_threshold()
    got = _read("import gc\ndef make(k):\n    gc.set_threshold(5)\n    return k\n", ("k = 1", "k = 2"))
    assert [a.get("v") for a in got] == [1, 2]
    assert gc.get_threshold() == before


def test_an_answer_that_replaces_the_collectors_functions_is_still_read(monkeypatch) -> None:
    """The reader bound gc's functions when it was imported: student code that replaces them
    in the gc module cannot make the read fail."""
    def refuse(*args: object) -> None:
        raise RuntimeError("patched")

    monkeypatch.setattr(gc, "get_threshold", refuse)
    monkeypatch.setattr(gc, "set_threshold", refuse)
    got = _read("def make(k):\n    return k + 1\n", ("k = 1", "k = 2"))
    assert [a.get("v") for a in got] == [2, 3]
    assert answers.READ_GC_THRESHOLD == READ_GC_THRESHOLD


# --- the answer cell compiled and parsed once per read, not once per variant and reader ---------

# an answer cell re-run at each variant: it defines a function and a class, and counts its runs
RERUN = """runs.append(k)
def make(k):
    return Box(k).k * 2
class Box:
    def __init__(self, k):
        self.k = k
"""


def test_an_answer_cell_compiled_once_still_runs_afresh_at_every_variant() -> None:
    ns: dict = {"runs": []}
    exec("k = 1", ns)
    exec(RERUN, ns)
    got = read_all(AnswerSpec(answer="make", setups=("k = 1", "k = 2", "k = 3"), call="make(k)"),
                   ns, ["", RERUN, "check()"])
    assert [a.get("v") for a in got] == [2, 4, 6]
    assert ns["runs"] == [1, 2, 3]  # the cell ran at the two other variants, in copies of ns
    assert answers.compile_answer(RERUN) is answers.compile_answer(RERUN)  # one code object


def test_each_run_of_a_compiled_answer_makes_its_own_functions_and_classes() -> None:
    code = answers.compile_answer(RERUN)
    a, b = {"runs": [], "k": 1}, {"runs": [], "k": 2}
    exec(code, a)
    exec(code, b)
    assert a["make"] is not b["make"] and a["Box"] is not b["Box"]
    a["Box"].k = "changed in one run"  # a class patched in one run is not the other's
    assert not hasattr(b["Box"], "k")


def test_an_error_names_the_line_of_the_cell_read_last_even_when_compiled_before() -> None:
    """``compile_answer`` keeps the cell it is asked for where tracebacks look, cached or not:
    an error at a variant names the line of that cell, not of one compiled before it."""
    raising = "y = 1\ndef make(k):\n    return 1 / (k - 2)\n"
    for source in (raising, RERUN, raising):  # compiled, another cell, then the first again
        answers.compile_answer(source)
    ns: dict = {}
    exec("k = 1", ns)
    exec(raising, ns)
    got = read_all(AnswerSpec(answer="make", setups=("k = 1", "k = 2"), call="make(k)"), ns,
                   ["", raising, "check()"])
    assert got[0].get("v") == -1.0
    assert got[1]["t"] == "error" and got[1]["v"] == "ZeroDivisionError"
    assert got[1].get("line") == "line 3: return 1 / (k - 2)", got[1]


def test_a_cell_that_parses_but_does_not_compile_is_an_error_at_every_variant() -> None:
    broken = "def make(k):\n    return k\nbreak\n"  # parses; 'break' outside a loop does not compile
    got = read_all(AnswerSpec(answer="make", setups=("k = 1", "k = 2", "k = 3"), call="make(k)"),
                   {"k": 1}, ["", broken, "check()"], cell_errors={broken: "SyntaxError"})
    assert got[0]["why"] == "answer_cell_raised"
    assert [a["v"] for a in got[1:]] == ["SyntaxError", "SyntaxError"]


EVIDENCE_CASES = [  # (cell, setup, namespace, the codes): every branch of evidence()
    ("y = -3.0 * x0", "x0 = -3.0", {}, ["literal"]),  # a signed number of the setup
    ("y = 3.0 * x0", "x0 = -3.0", {}, ["literal"]),  # the setup's -3.0 holds a 3.0 too
    ("y = 2.0 * x0", "x0 = -3.0", {}, []),  # a number not in the setup, and x0 read
    ("y = 1 + 0 * 2.5", "x0 = 2.0\nw = 4", {}, ["literal"]),  # numbers, no name of the setup read
    ("y = 2 * w", "x0 = 2.0\nw = 4", {}, ["literal"]),  # 2.0 == 2
    ("y = w", "w = 4", {}, []),
    ("import torch\ny = torch.zeros(2, dtype=torch.float32) + w", "w = 4", {}, ["float32"]),
    ("t = w + 0", "w = 4", {"t": "not a tensor"}, []),
    ("loss.backward(gradient=g)\nz = torch.where(m, a, b)", "w = 4", {}, ["seed", "backward", "where"]),
    ("g = torch.autograd.grad(y, x, v)", "w = 4", {}, ["seed", "backward"]),
    ("def f(:\n    pass", "w = 4", {}, []),  # does not parse: nothing to show
    ("flag = True\ny = -w", "w = 4", {}, []),  # True is not a number typed in
]


@pytest.mark.parametrize("cell, setup, ns, codes", EVIDENCE_CASES)
def test_evidence_from_one_walk_of_the_cell(cell: str, setup: str, ns: dict, codes: list[str]) -> None:
    import torch

    ns = {k: torch.zeros(1) if v == "float32 tensor" else v for k, v in ns.items()}
    assert answers.evidence(cell, setup, ns) == codes
    assert answers.evidence(cell, setup, ns) == codes  # the second time, from the parsed cell


def test_a_float32_tensor_bound_by_the_cell_is_evidence_and_a_float64_one_is_not() -> None:
    import torch

    assert answers.evidence("t = x * 2", "x = 1.0", {"t": torch.zeros(2)}) == ["float32"]
    assert answers.evidence("t = x * 2", "x = 1.0", {"t": torch.zeros(2, dtype=torch.float64)}) == []


def test_the_readers_share_one_parse_and_none_changes_it() -> None:
    import ast

    source = "a = 2.5 * x\nb = a.float()\ndef f(u):\n    return u + a\n"
    dumped = ast.dump(answers.syntax_tree(source))
    assert answers.bound_names(source) == frozenset({"a", "b", "f"})
    assert answers.evidence(source, "x = 2.5", {}) == ["literal", "float32"]
    assert "u" in answers.names_read(source)
    assert answers.syntax_tree(source) is answers.syntax_tree(source)
    assert ast.dump(answers.syntax_tree(source)) == dumped
    numbers, names = answers._setup_facts("x = 2.5\ny = -1")
    assert (numbers, names) == (frozenset({2.5}), frozenset({"x", "y"}))  # ±1 is no evidence


def test_the_grading_child_runs_a_cell_from_the_parse_the_readers_share() -> None:
    """The child parses each cell once (``sandbox.child._as_python``); the readers of the
    answers look at that same tree, and running the cell leaves it as it was."""
    import ast

    from IPython.core.interactiveshell import InteractiveShell

    from autograder.sandbox import child

    shell = InteractiveShell.instance()
    source = "a_h31 = 2.5\nb_h31 = a_h31 * 2\nb_h31"
    parsed = child._as_python(shell, source)
    assert parsed is not None and parsed[1] is answers.syntax_tree(source)
    dumped = ast.dump(parsed[1])
    assert child._execute(shell, source, parsed) is None
    assert shell.user_ns["b_h31"] == 5.0 and shell.user_ns["_"] == 5.0  # the last line shown
    assert child._execute(shell, source, child._as_python(shell, source)) is None  # again
    assert ast.dump(answers.syntax_tree(source)) == dumped
    assert answers.bound_names(source) == frozenset({"a_h31", "b_h31"})
    magic = "%time x_h31 = 1"  # not Python: IPython's transform, parsed apart
    assert child._as_python(shell, magic)[0] != magic
