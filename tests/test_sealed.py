"""The student runtime holds nothing that earns credit by being copied.

Answers that are the same at every grading variant (grad_fn names, error names, tables of
flags) ship sealed (``autograder/sealed.py``): a copy of the runtime's check data typed into a
blank notebook earns at most what typing the shown values of the parameter-dependent exercises
earns, while the self-check still tells right, wrong, which entries and which listed mistake.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import warnings
from typing import Any

import pytest

from autograder import checkdata, sealed
from autograder.answers import read_shown
from autograder.judge import answer_names, judge
from autograder.kinds import canonical_to_json
from gradtutor.authoring import runtime
from gradtutor.grading import scoring
from gradtutor.key import registry
from gradtutor.key.answer_key import check_for, practice_check, spec, wrong_values

EXERCISES = registry.all_exercises()


@functools.cache
def constant() -> list[str]:
    """The exercises whose answer ships sealed. Computed when a test first asks, not at import:
    it evaluates every grading variant (most of a minute), and every pytest worker imports
    this module to collect it."""
    return [ex.id for ex in EXERCISES if runtime.is_constant(ex.id)]


def _shipped() -> dict[str, Any]:
    return json.loads(json.dumps(runtime.check_data()))["exercises"]  # as the wheel holds it


def _leaves(p: Any) -> list[Any]:
    """Every value a copier could take out of a shipped reference: the plain, and the plain with
    each seal replaced by its digest typed in as a string."""
    def typed(q: Any) -> Any:
        if isinstance(q, dict) and q.get("t") == "sealed":
            return {"t": "str", "v": q["digest"]}
        if isinstance(q, dict):
            return {k: typed(v) for k, v in q.items()}
        return q
    return [p, typed(p)]


def _copies(data: dict[str, Any]) -> list[dict]:
    """Every value the runtime ships for an exercise: references and listed wrong answers, at
    the shown and the practice values."""
    out = []
    for variant in data["variants"]:
        for value in [variant["reference"], *(c for _, c in variant["wrong"])]:
            out += _leaves(value)
    return out


def _earned(exercise_id: str, plain: dict) -> float:
    ex = registry.get(exercise_id)
    n = len(check_for(exercise_id).variants)
    return scoring.judged(exercise_id, ex.points, [plain] * n).points


def test_the_constant_answers_are_the_ones_the_issue_counts() -> None:
    points = sum(registry.get(i).points for i in constant())
    assert len(constant()) >= 18 and points >= 22, (constant(), points)
    assert {"grad_fn_z", "backward_twice_error", "gradcheck_verdicts", "value_engine"} <= set(constant())


def test_copying_every_value_of_the_runtime_earns_at_most_the_shown_share() -> None:
    shipped = _shipped()
    copied = typed_shown = 0.0
    for ex in EXERCISES:
        best = max(_earned(ex.id, plain) for plain in _copies(shipped[ex.id]))
        if ex.id in constant():
            assert best == 0.0, ex.id  # a sealed answer copied earns nothing
        else:  # what typing the right shown value earns, the bound docs/grading.md states
            shown = canonical_to_json(check_for(ex.id).variants[0].reference)
            typed_shown += _earned(ex.id, shown)
            assert best <= _earned(ex.id, shown) + 1e-9, ex.id
        copied += best
    assert 0 < copied <= typed_shown
    total = sum(ex.points for ex in EXERCISES)
    assert typed_shown < total / 2, (typed_shown, total)  # the shown share, not the exercise


def test_a_constant_answer_ships_no_value_and_its_texts_no_names() -> None:
    shipped = _shipped()
    for exercise_id in constant():
        data = shipped[exercise_id]
        ref = check_for(exercise_id).variants[0].reference
        for variant in data["variants"]:
            for value in [variant["reference"], *(c for _, c in variant["wrong"])]:
                text = json.dumps(value)
                leaves = text.count('"t": "sealed"')
                assert leaves and '"v": true' not in text and '"v": false' not in text, exercise_id
                assert '"t": "str"' not in text and '"t": "array"' not in text, exercise_id
        words = json.dumps(data["wrong"])
        for name in answer_names(check_for(exercise_id).kind, ref):
            assert name not in words.replace("(the name you are asked for)", ""), (exercise_id, name)


def _solution_plain(exercise_id: str) -> dict:
    ex = registry.get(exercise_id)
    ns: dict = {}
    with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()), \
            contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        exec("import torch\nimport torch.nn.functional as F\n" + ex.setup_code(ex.params), ns)
        exec(ex.solution, ns)
    return read_shown(spec(ex, 1), ns)


@pytest.mark.parametrize("exercise_id", [ex.id for ex in EXERCISES])
def test_the_self_check_judges_a_sealed_exercise_as_the_full_package_does(exercise_id: str) -> None:
    if exercise_id not in constant():  # it ships its practice check as it is, nothing sealed
        assert _shipped()[exercise_id] == json.loads(json.dumps(checkdata.to_json(practice_check(exercise_id))))
        return
    shipped = checkdata.from_json(_shipped()[exercise_id])
    full = practice_check(exercise_id)
    assert all(isinstance(v.reference, sealed.Sealed | dict) for v in shipped.variants)
    solution = judge(shipped, [_solution_plain(exercise_id)])
    assert solution.verdict == "correct", solution
    wrongs = wrong_values(exercise_id, 0)
    assert wrongs
    for index, value in wrongs:
        plain = canonical_to_json(value)
        mine, theirs = judge(shipped, [plain]), judge(full, [plain])
        assert (mine.verdict, mine.misconception, mine.message, mine.explanation, mine.hint) == \
            (theirs.verdict, theirs.misconception, theirs.message, theirs.explanation, theirs.hint)
        assert mine.misconception == full.wrong[index].misconception, (index, mine)


def test_a_seal_reads_float32_and_negative_zero_as_their_twins() -> None:
    import torch

    s = sealed.seal("salt", torch.tensor(1e-5, dtype=torch.float64))
    assert s.holds(torch.tensor(1e-5, dtype=torch.float32).double())
    assert sealed.seal("salt", torch.tensor(-0.0, dtype=torch.float64)).holds(torch.tensor(0.0).double())
    assert not s.holds(torch.tensor(1e-4, dtype=torch.float64))
    assert sealed.seal("other", torch.tensor(1e-5, dtype=torch.float64)) != s
