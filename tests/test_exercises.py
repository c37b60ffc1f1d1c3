"""Every exercise tests itself (PrairieLearn's test()): three witnesses agree, the solution
scores full marks, each known wrong answer scores 0 and is diagnosed as itself, and invalid
answers get a validity message instead of an exception."""

from __future__ import annotations

import random

import pytest
import torch

from autograder.answers import read_answer
from autograder.judge import answer_names, judge, quietly, redact
from autograder.kinds import Choice, Table
from autograder.plain import to_plain
from gradtutor.key import registry
from gradtutor.key.answer_key import reference, run_at, spec

EXERCISES = registry.all_exercises()
IDS = [ex.id for ex in EXERCISES]
RANDOM_DRAWS = 5


def draws(ex):
    rng = random.Random(f"selftest-{ex.id}")
    return [ex.draw(rng) for _ in range(RANDOM_DRAWS)]


def all_params(ex):
    return ex.variants() + draws(ex)


def canon(ex, value):
    return quietly(ex.kind.of, value)


def same(ex, a, b):
    if a is None or b is None:
        return a is b
    return ex.kind.same(a, b)


def student_namespace(ex, params):
    ns: dict = {}
    exec("import torch\nimport torch.nn.functional as F", ns)
    exec(ex.setup_code(params), ns)
    return ns


@pytest.mark.parametrize("ex", EXERCISES, ids=IDS)
def test_witnesses_agree(ex):
    for params in all_params(ex):
        ref = canon(ex, quietly(ex.reference, **params))
        assert same(ex, canon(ex, ex.analytic(**params)), ref), f"analytic != torch at {params}"
        if ex.finite_diff is not None:
            assert same(ex, canon(ex, ex.finite_diff(**params)), ref), f"finite diff != torch at {params}"


def _float_dtypes(value, depth=0) -> set:
    if isinstance(value, torch.Tensor):
        return {value.dtype} if value.is_floating_point() else set()
    if isinstance(value, dict | list | tuple) and depth < 6:
        items = value.values() if isinstance(value, dict) else value
        return set().union(*(_float_dtypes(v, depth + 1) for v in items))
    return set()


@pytest.mark.parametrize("ex", EXERCISES, ids=IDS)
def test_reference_is_float64_and_answer_independent_of_global_rng(ex):
    raw = quietly(ex.reference, **ex.params)
    assert _float_dtypes(raw) <= {torch.float64}, _float_dtypes(raw)  # Python floats are float64
    torch.manual_seed(0)
    first = canon(ex, quietly(ex.reference, **ex.params))
    torch.manual_seed(123)
    assert same(ex, canon(ex, quietly(ex.reference, **ex.params)), first)


@pytest.mark.parametrize("ex", EXERCISES, ids=IDS)
def test_solution_scores_full_marks_on_every_variant(ex):
    ns = student_namespace(ex, ex.params)
    quietly(exec, ex.solution, ns)
    answers = [read_answer(spec(ex), ns)] + [run_at(ex, ns, ex.solution, p) for p in ex.hidden]
    fb = judge(ex.id, answers)
    assert fb.score == 1.0 and fb.verdict == "correct", str(fb)
    for params in draws(ex):  # the solution computes from the parameters, it does not type numbers
        got = ex.kind.canonical(run_at(ex, ns, ex.solution, params))
        assert same(ex, got, canon(ex, quietly(ex.reference, **params))), params


@pytest.mark.parametrize("ex", EXERCISES, ids=IDS)
def test_each_wrong_answer_scores_zero_and_is_diagnosed_as_itself(ex):
    assert ex.wrong, "every exercise needs at least one diagnosed wrong answer"
    for i, w in enumerate(ex.wrong):
        answers = [to_plain(quietly(w.value, **p)) for p in ex.variants()]
        fb = judge(ex.id, answers)
        assert fb.score == 0.0, f"wrong answer {i} ({w.misconception}) scored {fb.score}"
        # the unit's own explanation, with the right answer's error or grad_fn names withheld
        shown = redact(w.explanation, answer_names(ex.kind, reference(ex.id, 0)))
        assert fb.misconception == w.misconception and fb.explanation == shown, (
            f"wrong answer {i} diagnosed as {fb.misconception}")
        assert fb.hint and fb.explanation


@pytest.mark.parametrize("ex", EXERCISES, ids=IDS)
def test_no_wrong_answer_coincides_with_the_reference(ex):
    for params in all_params(ex):
        ref = canon(ex, quietly(ex.reference, **params))
        blind = ex.blind_at(params)  # a region the unit declares blind to it (tests/test_regions.py)
        for i, w in enumerate(ex.wrong):
            if i in blind:
                continue
            assert not same(ex, canon(ex, quietly(w.value, **params)), ref), (
                f"{w.misconception} equals the reference at {params}")


@pytest.mark.parametrize("ex", EXERCISES, ids=IDS)
def test_wrong_answers_are_told_apart(ex):
    """Wrong answers differ at the shown values, or else (a seed's numbers can make two
    mistakes coincide) a grading variant and every practice value tell them apart."""
    from gradtutor.key.answer_key import coinciding, practice_params

    for a, b in coinciding(ex.id):
        wa, wb = ex.wrong[a], ex.wrong[b]
        apart = [not same(ex, canon(ex, quietly(wa.value, **p)), canon(ex, quietly(wb.value, **p)))
                 for p in ex.hidden]
        assert any(apart), f"wrong answers {a} and {b} coincide at every grading variant"
        for p in practice_params(ex.id):
            assert not same(ex, canon(ex, quietly(wa.value, **p)), canon(ex, quietly(wb.value, **p))), p


class AlwaysEqual:
    def __eq__(self, other):
        return True

    def __float__(self):
        return 1e9


def invalid_answers(ex):
    bad = ["a string", (i for i in range(3)), AlwaysEqual(), object(), [1, "x", None]]
    if isinstance(ex.kind, Choice):
        bad = [3.5, (i for i in range(3)), AlwaysEqual(), {"a": 1}]
    if not isinstance(ex.kind, Choice | Table):
        bad.append(None)
    return bad


@pytest.mark.parametrize("ex", EXERCISES, ids=IDS)
def test_invalid_answers_get_a_validity_message(ex):
    from autograder import check

    for bad in invalid_answers(ex):
        fb = check(ex.id, bad)
        assert fb.verdict in ("invalid", "error") and fb.score == 0.0, (bad, str(fb))
        assert fb.message
    assert check(ex.id, ...).verdict == "not_answered"


def test_ids_are_unique_and_match_files():
    assert len(IDS) == len(set(IDS))
    for ex in EXERCISES:
        assert registry.get(ex.id) is ex
        assert ex.chapter == int(registry._module_paths()[ex.id].split(".")[1][2:4])


def test_every_exercise_has_a_hidden_variant_and_renders():
    for ex in EXERCISES:
        assert ex.hidden, ex.id
        assert ex.prompt_text().strip()
        compile(ex.solution, ex.id, "exec")
        compile(ex.setup_code(ex.params), ex.id, "exec")
