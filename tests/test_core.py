"""The grading core on its own: plain data, answer kinds, judging, check() and grade()."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
import torch

from autograder import check, grade
from autograder.kinds import Bool, Choice, Invalid, Number, Table, Tensor, numbers_close
from autograder.plain import to_plain


class AlwaysEqual:
    def __eq__(self, other):
        return True

    __hash__ = object.__hash__


class LyingFloat:
    def __float__(self):
        return 11.0


class SneakyTensor(torch.Tensor):
    """A subclass that claims to equal everything and overrides torch functions."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func is torch.Tensor.tolist:
            return 11.0
        return super().__torch_function__(func, types, args, kwargs or {})

    def __eq__(self, other):
        return True


def test_plain_data_is_json_and_reads_every_common_answer_type():
    samples = [3, 2.5, True, None, "AddBackward0", RuntimeError, RuntimeError("boom"),
               torch.tensor([1.0, 2.0], requires_grad=True) * 2, np.float32(1.5), np.array([[1, 2]]),
               [torch.tensor(7.0), torch.tensor(2.0)], (1, 2.0), {"x": {"grad": torch.tensor(1.0)}},
               float("nan"), float("-inf"), torch.Size([2, 3])]
    for s in samples:
        json.dumps(to_plain(s), allow_nan=False)  # strict JSON: NaN spelled as strings
    assert to_plain(torch.tensor(7.0) * torch.ones(1, requires_grad=True))["v"] == [7.0]
    assert to_plain(RuntimeError)["v"] == "RuntimeError"
    x = torch.tensor(1.0, requires_grad=True)
    assert to_plain((x + x).grad_fn) == {"t": "node", "v": "AddBackward0"}


def test_hostile_objects_are_read_without_calling_their_methods():
    assert to_plain(AlwaysEqual())["t"] == "unsupported"
    assert to_plain(LyingFloat())["t"] == "unsupported"
    sneaky = torch.tensor([3.0]).as_subclass(SneakyTensor)
    assert to_plain(sneaky)["v"] == [3.0]  # read through the base class, override bypassed
    assert to_plain(i for i in range(3))["type"] == "generator"
    assert to_plain(torch.zeros(10**6))["t"] == "unsupported"


def test_numbers_close_handles_nan_and_infinities():
    t = torch.tensor
    assert numbers_close(t([math.nan, 1.0]), t([math.nan, 1.0]), 1e-6, 0)
    assert not numbers_close(t([math.nan]), t([0.0]), 1e-6, 0)
    assert not numbers_close(t([0.0]), t([math.nan]), 1e-6, 0)
    assert numbers_close(t([math.inf]), t([math.inf]), 1e-6, 0)
    assert not numbers_close(t([math.inf]), t([-math.inf]), 1e-6, 0)
    assert not numbers_close(t([1e12]), t([math.inf]), 1e-6, 0)


@pytest.mark.parametrize(("kind", "value", "message"), [
    (Number(), None, "None"),
    (Number(), [1.0, 2.0], "single number"),
    (Number(), "7", "string"),
    (Tensor(shape=(2,)), [1.0, 2.0, 3.0], "shape (2,)"),
    (Tensor(shape=(2, 2)), 4.0, "shape (2, 2)"),
    (Bool(), 2, "True or False"),  # 0 and 1 read as False and True
    (Choice(options=("AddBackward0", None)), "MulBackward0", "not one of the answers"),
    (Table(rows=("x",), columns=(("is_leaf", Bool()),)), {"y": {}}, "no row"),
])
def test_validity_messages_say_what_was_expected(kind, value, message):
    with pytest.raises(Invalid, match=re.escape(message)):
        kind.canonical(to_plain(value))


def test_tensor_kind_accepts_the_same_numbers_in_any_container():
    kind = Tensor(shape=(2,))
    for value in ([7, 2], (torch.tensor(7.0), torch.tensor(2.0)), np.array([[7.0, 2.0]]),
                  torch.tensor([7.0, 2.0], dtype=torch.float32)):
        assert kind.same(kind.canonical(to_plain(value)), torch.tensor([7.0, 2.0], dtype=torch.float64))


def test_choice_reads_nodes_classes_and_strings():
    kind = Choice(options=(None, "AddBackward0", "RuntimeError"))
    x = torch.tensor(1.0, requires_grad=True)
    assert kind.canonical(to_plain((x + 1).grad_fn)) == "AddBackward0"
    assert kind.canonical(to_plain("<AddBackward0 object at 0x7f>")) == "AddBackward0"
    assert kind.canonical(to_plain(RuntimeError)) == "RuntimeError"
    assert kind.canonical(to_plain("no error")) is None


@pytest.mark.parametrize("bad", ["eleven", (i for i in range(3)), AlwaysEqual(), LyingFloat(),
                                 torch.ones(3), None, object()])
def test_check_never_raises_and_scores_zero_on_bad_input(bad):
    fb = check("sum_rule", bad)
    assert fb.verdict in ("invalid", "error") and fb.score == 0.0
    assert fb.message and str(fb) and fb._repr_html_()


def test_check_with_an_unknown_id_suggests_the_closest():
    fb = check("sum_rul", 11)
    assert fb.verdict == "invalid" and "sum_rule" in fb.message
    assert check(42, 11).verdict == "invalid"


def test_check_diagnoses_a_wrong_answer_with_explanation_and_hint():
    fb = check("sum_rule", 24.0)  # z itself, not its slope
    assert fb.verdict == "wrong" and fb.misconception == "value_not_derivative"
    assert fb.explanation and fb.hint and "24" not in fb.hint
    html = fb._repr_html_()
    assert "Likely misconception" in html and "Hint" in html


def test_check_accepts_a_tensor_subclass_answer_only_for_its_real_value():
    right = torch.tensor(11.0).as_subclass(SneakyTensor)
    wrong = torch.tensor(3.0).as_subclass(SneakyTensor)
    assert check("sum_rule", right).correct
    assert not check("sum_rule", wrong).correct


def test_not_answered_placeholder():
    fb = check("sum_rule", ...)
    assert fb.verdict == "not_answered" and "Not answered yet" in str(fb)


def test_grade_returns_builtin_float_and_catches_typed_numbers():
    # the answer cell as a student would write it, re-run by grade() at the hidden values
    ns = {"torch": torch, "x0": 3.0}
    honest = "dz_dx = 2 * x0 + 5"
    typed = "dz_dx = 11"
    from autograder.selfcheck import grade_feedback

    exec(honest, ns)
    fb = grade_feedback("sum_rule", ns["dz_dx"], namespace=ns, history=[honest, "grade(...)"])
    assert fb.score == 1.0
    exec(typed, ns)
    fb = grade_feedback("sum_rule", ns["dz_dx"], namespace=ns, history=[typed, "grade(...)"])
    assert 0 < fb.score < 1 and "typed in" in fb.message
    points = grade("sum_rule", 11.0)  # outside IPython there is no history: hidden variants fail
    assert type(points) is float and 0 < points < 1


@pytest.mark.parametrize(("kind", "values", "canonical"), [
    (Bool(), [True, 1, 1.0, torch.tensor(True), torch.tensor([1]), np.bool_(True), np.array(True)], True),
    (Bool(), [False, 0, torch.tensor(False), np.bool_(False), torch.tensor(0.0)], False),
    (Number(), [2.5, torch.tensor(2.5), torch.tensor([2.5]), np.float64(2.5), np.array([2.5]), [2.5]], 2.5),
    (Tensor(shape=(2,)), [[1.0, 2.0], (1.0, 2.0), np.array([1.0, 2.0]), torch.tensor([1.0, 2.0]),
                          (torch.tensor(1.0), torch.tensor(2.0)), [[1.0, 2.0]]], [1.0, 2.0]),
    (Choice(options=("MulBackward0", "AddBackward0")),
     [(torch.ones(1, requires_grad=True) * 2).grad_fn, type((torch.ones(1, requires_grad=True) * 2).grad_fn),
      "MulBackward0", "<MulBackward0 object at 0x7f>", "mulbackward0"], "MulBackward0"),
    (Choice(options=(None, "RuntimeError")), [RuntimeError, RuntimeError("x"), "RuntimeError"], "RuntimeError"),
    (Choice(options=(None, "RuntimeError")), [None, "None", "no error"], None),
])
def test_every_natural_form_of_a_right_answer_is_read(kind, values, canonical):
    """A table of the forms each answer kind accepts (issue: every natural form is accepted)."""
    from autograder.plain import to_plain

    for value in values:
        got = kind.canonical(to_plain(value))
        if isinstance(got, torch.Tensor):
            assert torch.allclose(got, torch.tensor(canonical, dtype=torch.float64)), value
        else:
            assert got == canonical, value


def test_generic_slips_are_named_without_a_listed_wrong_answer():
    from autograder.checkdata import AnswerSpec, Check, Variant
    from autograder.judge import judge

    ref = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64)
    check = Check(id="t", title="t", chapter=1, points=1.0, kind=Tensor(shape=(2, 2)),
                  spec=AnswerSpec("a", None, ("",)), variants=(Variant(ref, ()),), wrong=())
    from autograder.plain import to_plain

    cases = {"sign_flipped": -ref, "factor_two": 2 * ref, "factor_half": ref / 2, "factor_k": 3 * ref,
             "factor_one_over_k": ref / 4, "transposed": ref.T}
    for slip, answer in cases.items():
        fb = judge(check, [to_plain(answer)])
        assert fb.verdict == "wrong" and fb.misconception == slip, (slip, fb)
        assert fb.explanation and fb.hint
    one_off = ref.clone()
    one_off[1, 0] = 7.0
    fb = judge(check, [to_plain(one_off)])
    assert fb.misconception is None and "1 of 4 entries are not right yet ((1, 0))" in fb.message
    assert "7" not in fb.message and "3" not in fb.message.replace("(1, 0)", "")  # never the values


def test_a_wrong_choice_is_never_told_the_right_name():
    """For every "which error / which grad_fn" exercise (and table with such a column), the
    feedback on each listed wrong answer shows no exception or grad_fn name the right answer
    holds: not in the message, the explanation or the hint."""
    from autograder.judge import answer_names, judge
    from autograder.kinds import canonical_to_json
    from gradtutor.key import registry
    from gradtutor.key.answer_key import reference, wrong_values

    checked = 0
    for ex in registry.all_exercises():
        names = answer_names(ex.kind, reference(ex.id, 0))
        if not names:
            continue
        for _, value in wrong_values(ex.id, 0):
            fb = judge(ex.id, [canonical_to_json(value)])
            text = " ".join(filter(None, (fb.message, fb.explanation, fb.hint)))
            for name in names:
                assert not re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", text), (ex.id, name, text)
            checked += 1
    assert checked >= 30


def test_no_wrong_answer_explanation_names_the_right_choice():
    """A wrong choice's explanation and hint never show the right option (after the judge's
    redaction of error and grad_fn names), in Choice answers and in a table's choice columns."""
    import re

    from autograder.judge import answer_names, redact
    from autograder.kinds import Choice, Table
    from gradtutor.key import answer_key, registry

    shown = []
    for ex in registry.all_exercises():
        if not isinstance(ex.kind, Choice | Table):
            continue
        names = answer_names(ex.kind, answer_key.reference(ex.id, 0))
        for v in range(len(ex.variants())):
            ref = answer_key.reference(ex.id, v)
            values = [ref] if isinstance(ex.kind, Choice) else \
                [row.get(c) for row in ref.values() for c, k in ex.kind.columns if isinstance(k, Choice)]
            for w in ex.wrong:
                for value in {x for x in values if isinstance(x, str)}:
                    for text in (w.explanation, w.hint):
                        if re.search(rf"(?<![\w.]){re.escape(value)}(?!\w)", redact(text, names)):
                            shown.append((ex.id, value))
    assert not shown, shown


def test_an_exercise_takes_its_id_and_chapter_from_its_path(tmp_path, monkeypatch):
    from gradtutor.key import registry

    for ex in registry.all_exercises():
        folder = next(ch for ch in registry.chapters() if ex.id in ch.exercise_ids())
        assert ex.chapter == folder.number and (folder.path / f"{ex.id}.py").exists()
    # a unit that declares them is refused with the reason
    from dataclasses import replace

    ex = registry.get("sum_rule")
    module = __import__("exercises.ch01_graphs.sum_rule", fromlist=["EXERCISE"])
    monkeypatch.setattr(module, "EXERCISE", replace(ex, id="sum_rule", chapter=1))
    with pytest.raises(RuntimeError, match="come from its path"):
        registry.get.__wrapped__("sum_rule")  # uncached: the registry's cache stays as it is
