"""Reading answers (``autograder.answers.read_all``) with the collector's thresholds raised: the
garbage of a plain-Python engine is freed in young collections, never in repeated full ones, and
the thresholds are put back whatever the answer does (#28)."""

from __future__ import annotations

import gc

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
