"""What the grading parent accepts from a child: the message parser and the judge are total.

Property-based (Hypothesis): hostile JSON of any shape (recursive, huge integers, NaN and
infinities, deep nesting, wrong types where every field belongs) goes into
``autograder.contract.parse_message`` and, raw or cleaned, into ``autograder.judge.judge`` for
an exercise of every kind; no exception escapes either, except the judge's documented
``ValueError`` for a wrong number of answers.
"""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autograder import checkdata
from autograder import judge as judge_module
from autograder.contract import (
    MAX_ELEMENTS,
    Answers,
    CellFailed,
    CellStopped,
    Done,
    Ready,
    clean_plain,
    parse_message,
)
from autograder.feedback import VERDICTS
from autograder.judge import UNJUDGEABLE, judge

# one exercise of each kind of answer (tensor, number, choice, table, tensor-or-slip)
KINDS = ("chain_abcf", "control_flow_scalar", "grad_fn_x", "leaves_xy", "identity_seed")
FUZZ = settings(max_examples=150, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

huge_ints = st.one_of(st.integers(), st.integers(min_value=10**300, max_value=10**400),
                      st.integers(min_value=-(10**400), max_value=-(10**300)))
scalars = st.one_of(st.none(), st.booleans(), huge_ints, st.floats(allow_nan=True, allow_infinity=True),
                    st.text(max_size=40), st.sampled_from(["nan", "inf", "-inf", "ValueError", "cpu"]))
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=6)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=6), max_leaves=40)
TAGS = ["none", "ellipsis", "function", "unsupported", "bool", "array", "str", "exception", "error",
        "node", "missing", "limit", "dict", "list", "eval"]
shapes = st.one_of(json_values, st.lists(st.one_of(st.integers(-2, 4), st.sampled_from(
    [0, MAX_ELEMENTS, MAX_ELEMENTS + 1, 10**400])), max_size=10))


def plain_like(inner: st.SearchStrategy) -> st.SearchStrategy:
    """Dicts that look like plain values: a known tag, with any value in every field."""
    return st.fixed_dictionaries(
        {"t": st.one_of(st.sampled_from(TAGS), json_values)},
        optional={"v": st.one_of(inner, json_values), "shape": shapes, "dtype": json_values,
                  "why": json_values, "error": json_values, "boxed": json_values,
                  "unmet": json_values})


plains = st.recursive(plain_like(json_values), lambda inner: st.one_of(
    plain_like(st.lists(inner, max_size=4)),
    plain_like(st.dictionaries(st.text(max_size=6), inner, max_size=4))), max_leaves=12)
hostile = st.one_of(plains, json_values)
messages = st.fixed_dictionaries(
    {"type": st.one_of(st.sampled_from(["ready", "done", "cell", "answers", "score"]), json_values)},
    optional={"cell": st.one_of(st.integers(-2, 3), json_values), "why": st.one_of(
        st.sampled_from(["error", "cpu", "wall"]), json_values), "error": json_values,
              "exercise": st.one_of(st.just("x"), json_values),
              "answers": st.one_of(st.lists(hostile, min_size=2, max_size=2), json_values)})


def strict_json(value: object) -> bool:
    """Serialisable without NaN or infinities: only the grader's own bounded pieces."""
    json.dumps(value, allow_nan=False)
    return True


def check_message(line: bytes) -> None:
    message = parse_message(line, {"x": 2})
    assert message is None or isinstance(message, Ready | Done | CellStopped | CellFailed | Answers)
    if isinstance(message, Answers):
        assert message.exercise == "x" and len(message.answers) == 2
        assert all(strict_json(a) for a in message.answers)
    if isinstance(message, CellFailed):
        assert type(message.error) is str and len(message.error) <= 80


@FUZZ
@given(messages)
def test_parse_message_is_total_on_hostile_json(message: dict) -> None:
    check_message(json.dumps(message).encode())  # NaN and Infinity as JSON's non-standard tokens


@FUZZ
@given(st.one_of(st.binary(max_size=200), json_values.map(lambda v: json.dumps(v).encode())))
def test_parse_message_is_total_on_any_bytes(line: bytes) -> None:
    check_message(line)


def test_deep_nesting_and_the_size_bound_are_rejected_not_raised() -> None:
    deep = '{"t": "list", "v": [' * 5000 + "]}" * 5000
    line = f'{{"type": "answers", "exercise": "x", "cell": 1, "answers": [{deep}, {deep}]}}'.encode()
    assert parse_message(line, {"x": 2}) is None  # too deep for the JSON reader: not a message
    assert parse_message(b'{"type": "done", "pad": "' + b"a" * (3 * 2**20) + b'"}', {}) is None


@pytest.mark.parametrize("forged", [
    {"type": "answers", "exercise": ["x"], "cell": 1, "answers": [{"t": "none"}] * 2},  # a list as id
    {"type": "answers", "exercise": {"x": 1}, "cell": 1, "answers": []},
    {"type": "cell", "cell": 1, "why": ["cpu"]},
    {"type": "cell", "cell": 1, "why": {"a": 1}},
])
def test_the_issues_forged_fields_are_not_messages(forged: dict) -> None:
    assert parse_message(json.dumps(forged).encode(), {"x": 2}) is None


@pytest.mark.parametrize(("plain", "expected"), [
    ({"t": "array", "shape": [], "dtype": "float", "v": 10**400}, {"t": "unsupported"}),  # 400 digits
    ({"t": "array", "shape": [], "dtype": {"a": 1}, "v": 2}, {"t": "array", "shape": [],
                                                           "dtype": "float", "v": 2.0}),
    ({"t": "array", "shape": [0] * 9, "v": []}, {"t": "unsupported"}),  # more than 8 dimensions
    ({"t": "array", "shape": [MAX_ELEMENTS, 2], "v": []}, {"t": "unsupported"}),  # too many elements
    ({"t": "error", "v": {"a": 1}}, {"t": "error", "v": "Exception"}),  # a dict as an error name
    ({"t": "missing", "why": ["x"], "error": {}}, {"t": "missing", "why": "no_variable"}),
    ({"t": ["array"]}, {"t": "unsupported"}),
])
def test_each_field_is_checked_by_type_and_bound(plain: dict, expected: dict) -> None:
    assert clean_plain(plain) == expected
    line = json.dumps({"type": "cell", "cell": 0, "why": "error", "error": {"a": 1}}).encode()
    assert parse_message(line, {}) == CellFailed(0, "Exception")


def feedback_ok(exercise: str, answers: list) -> None:
    fb = judge(exercise, answers)
    assert fb.verdict in VERDICTS and 0.0 <= fb.score <= 1.0 and not math.isnan(fb.score)
    assert type(fb.message) is str


@FUZZ
@given(st.sampled_from(KINDS), hostile)
def test_the_judge_is_total_on_hostile_plain_data(exercise: str, plain: object) -> None:
    feedback_ok(exercise, [plain])  # raw, as no child can send it: the judge still holds
    feedback_ok(exercise, [clean_plain(plain)])  # what the parent judges: cleaned first
    n = len(checkdata.get(exercise).variants)
    feedback_ok(exercise, [clean_plain(plain)] * n)


def test_the_judge_rejects_a_wrong_number_of_answers_by_type() -> None:
    n = len(checkdata.get(KINDS[0]).variants)
    for answers in ([], [{"t": "none"}] * (n + 1)):
        with pytest.raises(ValueError):
            judge(KINDS[0], answers)


def test_an_exception_inside_the_judge_costs_only_that_answer(monkeypatch) -> None:
    """Contained with the fixed reason, whatever raised and whatever it carried."""
    def explode(*args: object, **kwargs: object) -> None:
        raise OverflowError("student data: 1e999999")

    monkeypatch.setattr(judge_module, "same", explode)
    fb = judge("control_flow_scalar", [{"t": "array", "shape": [], "dtype": "float", "v": 1.0}])
    assert fb.verdict == "invalid" and fb.score == 0.0 and fb.message == UNJUDGEABLE
    assert "student data" not in fb.message
    monkeypatch.setattr(judge_module, "_consistent", explode)  # beyond one variant's judging
    fb = judge("control_flow_scalar", [{"t": "array", "shape": [], "dtype": "float", "v": 1.0}])
    assert fb.verdict == "invalid" and fb.message == UNJUDGEABLE

