"""Feedback that never misleads (issue #26, items 3-6): a generic diagnosis only on its evidence,
errors of the student's own code explained, the misconception line framed as the rule, no
message that states the answer, numbers and code shown as a reader wants them, and review() in
the notebook's order. Each mechanism is shown on answer cells run as check() runs them
(``replay.run_one``) or on the judge's own pieces, never on one exercise's wording."""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent / "novice"))
import replay

from autograder import checkdata, selfcheck
from autograder.answers import _error, compile_answer, evidence
from autograder.checkdata import Check, Variant, WrongInfo
from autograder.contract import AnswerSpec, clean_plain
from autograder.feedback import (
    NAMES_A_TOPIC,
    NAMES_THE_MISTAKE,
    Feedback,
    as_html,
    as_text,
    misconception_line,
)
from autograder.judge import GENERIC, answer_names, error_message, generic_slip, judge, quietly, redact
from autograder.kinds import Bool, Table, Tensor
from autograder.plain import to_plain
from gradtutor.key import answer_key, registry
from gradtutor.key.misconceptions import CATALOGUE

# --- item 5: no message states the right value or name ------------------------------------------

_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?!\w)")


def _numbers(value: object) -> list[float]:
    if isinstance(value, torch.Tensor):
        return [float(v) for v in value.reshape(-1).tolist()]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return [float(value)]
    if isinstance(value, dict):
        return [x for v in value.values() for x in _numbers(v)]
    if isinstance(value, list | tuple):
        return [x for v in value for x in _numbers(v)]
    return []


def _telling(ref: object, setup: str) -> list[float]:
    """The reference's numbers a message could give away: not small whole numbers (exponents,
    counts and factors are written everywhere) nor the setup's own values (shown already)."""
    shown = {float(m) for m in _NUMBER.findall(setup)}
    return [v for v in _numbers(ref) if math.isfinite(v) and not (v == int(v) and abs(v) <= 10)
            and v not in shown]


def _shows_number(text: str, v: float) -> bool:
    return any(abs(float(m) - v) <= 1e-3 * abs(v) and len(m.strip("-").replace(".", "").lstrip("0")) >= 2
               for m in _NUMBER.findall(text))


def test_no_message_of_a_listed_wrong_answer_shows_the_right_value_or_name() -> None:
    """Every listed wrong answer of every unit, judged at the shown values: its message, the
    misconception line, "Why" and the hint hold neither a number of the right answer nor the
    error or grad_fn name it consists of."""
    shown = []
    for ex in registry.all_exercises():
        ref = answer_key.reference(ex.id, 0)
        check = answer_key.check_for(ex.id, 1)
        numbers = _telling(ref, ex.setup_code(ex.params))
        names = answer_names(ex.kind, ref)
        for w in ex.wrong:
            fb = judge(check, [to_plain(quietly(w.value, **ex.params))])
            line = misconception_line(fb.misconception, fb.misconception_name or "")
            for part, text in (("message", fb.message), ("misconception", line),
                               ("why", fb.explanation or ""), ("hint", fb.hint or "")):
                shown += [(ex.id, w.misconception, part, v) for v in numbers if _shows_number(text, v)]
                shown += [(ex.id, w.misconception, part, n) for n in names
                          if re.search(rf"(?<![\w.]){re.escape(n)}(?!\w)", text)]
    assert not shown, shown


def test_redaction_drops_the_sentences_that_name_the_answer() -> None:
    text = "Line f raises RuntimeError ('Mismatch in shape'): the seed has the wrong shape. Look again."
    out = redact(text, {"RuntimeError"})
    assert out == "Look again." and "name you are asked" not in out
    assert redact("Only RuntimeError here.", {"RuntimeError"}) and "RuntimeError" not in \
        redact("Only RuntimeError here.", {"RuntimeError"})
    assert redact(text, set()) == text


# --- item 5: the misconception line is framed as the rule, or names the mistake ----------------

def test_the_misconception_line_frames_a_rule_as_a_rule() -> None:
    line = misconception_line("grad_fn_of_leaf", CATALOGUE["grad_fn_of_leaf"])
    assert line == "your answer goes against the rule “Leaves have no grad_fn”"
    fb = Feedback("grad_fn_x", "t", "wrong", 0.0, "Not right yet.", misconception="grad_fn_of_leaf",
                  misconception_name=CATALOGUE["grad_fn_of_leaf"])
    assert "Likely misconception: your answer goes against the rule" in str(fb).replace("\n    ", " ")
    assert "goes against the rule" in fb._repr_html_()
    # a name that describes the mistake itself is shown as it is; a topic as "about ..."
    assert misconception_line("sign_flipped", GENERIC["sign_flipped"][0]) == "The sign is flipped"
    assert misconception_line("leaf_definition", CATALOGUE["leaf_definition"]).startswith("about what")


def test_every_id_framed_as_a_mistake_or_topic_is_in_the_catalogue() -> None:
    assert set(GENERIC) <= NAMES_THE_MISTAKE
    assert set(CATALOGUE) >= (NAMES_THE_MISTAKE | NAMES_A_TOPIC)


# --- item 3: a generic diagnosis only on its evidence ------------------------------------------

def test_right_at_the_shown_values_names_a_typed_number_only_where_the_cell_holds_one() -> None:
    literal = replay.run_one("sum_rule", "dz_dx = 3 * x0 + 2")  # 3.0 is the shown x0
    formula = replay.run_one("sum_rule", "dz_dx = x0 ** 2 + 2")  # 11 at x0 = 3, no number of the setup
    for fb in (literal, formula):
        assert fb.misconception == "shown_values_only", fb
    assert "number in your cell" in literal.hint and "number of the setup" in literal.explanation
    assert "number" not in formula.hint and "number" not in formula.explanation, formula
    # and it says where: the practice value's own line, what the answer gives there, what is right
    assert "re-ran your answer cell with `x0 = " in formula.message
    assert "your answer gives" in formula.message and "the right value is" in formula.message


def test_typed_in_only_where_the_cell_writes_numbers() -> None:
    typed = replay.run_one("sum_rule", "dz_dx = 11")
    constant = replay.run_one("sum_rule", 'dz_dx = float(len("elevenchars"))')  # no number, no name
    assert typed.misconception == constant.misconception == "typed_in"
    assert "Typed in" in typed.misconception_name and "typed in" in typed.message
    assert "yped" not in constant.misconception_name + constant.explanation + constant.message, constant


def test_float32_is_named_only_for_float32_code() -> None:
    source = ("def f(x):\n    return x**3\nx = torch.tensor(x0{dtype})\n"
              "fd_errors = [float((f(x + h) - f(x)) / h) - 3 * x0**2, "
              "float((f(x + h) - f(x - h)) / (2 * h)) - 3 * x0**2]")
    single = replay.run_one("difference_errors", source.format(dtype=""))
    assert single.misconception == "rounded" and "float32" in single.explanation, single
    assert "significant digits" in single.explanation
    fb = replay.run_one("sum_rule", "h = 1e-2\ndz_dx = ((x0 + h)**2 + 5*(x0 + h) - x0**2 - 5*x0) / h")
    assert fb.misconception == "rounded", fb
    assert "float32" not in fb.explanation + fb.hint and "finite difference" not in fb.explanation


def test_a_permutation_of_repeated_or_zero_entries_is_not_called_reordered() -> None:
    kind = Tensor(shape=(3,))
    t = lambda *v: torch.tensor(v, dtype=torch.float64)
    assert generic_slip(kind, t(3.0, 1.0, 2.0), t(1.0, 2.0, 3.0)) == "reordered"
    assert generic_slip(kind, t(0.0, 1.0, 0.0), t(1.0, 0.0, 0.0)) is None  # one nonzero entry moved
    assert generic_slip(kind, t(2.0, 1.0, 2.0), t(2.0, 2.0, 1.0)) is None  # repeated entries


def test_a_sum_is_named_only_where_entries_were_added() -> None:
    square = Tensor(shape=(2, 2))
    diagonal = torch.tensor([[2.0, 0.0], [0.0, 3.0]], dtype=torch.float64)
    full = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64)
    assert generic_slip(square, torch.tensor([2.0, 3.0], dtype=torch.float64), diagonal) is None
    assert generic_slip(square, torch.tensor([4.0, 6.0], dtype=torch.float64), full) == "summed"
    assert generic_slip(Tensor(shape=(2,)), torch.tensor(5.0, dtype=torch.float64),
                        torch.tensor([5.0, 0.0], dtype=torch.float64)) is None


def test_a_sum_over_an_axis_carries_a_nan_through_and_is_named_by_the_finite_columns() -> None:
    nan = float("nan")
    t = lambda *rows: torch.tensor(rows, dtype=torch.float64)
    kind = Tensor(shape=(2, 3))
    ref = t([0.6, nan, -0.6], [0.8, nan, 0.8])  # a zero column's NaN gradient (group_lasso_nan)
    assert generic_slip(kind, t(1.4, nan, 0.2), ref) == "summed"
    assert generic_slip(kind, t(1.4, 0.0, 0.2), ref) is None  # the NaN not carried: not this sum
    assert generic_slip(kind, t(nan), ref) is None  # one NaN for the whole sum says nothing
    # the finite columns add only one nonzero entry each: nothing was seen summed
    sparse = t([0.6, nan, 0.0], [0.0, nan, 0.8])
    assert generic_slip(kind, t(0.6, nan, 0.8), sparse) is None


def test_a_seeded_backward_story_is_not_told_to_a_cell_without_a_seed() -> None:
    """chain_2x_squared lists (2 x0)² as what x.backward(z) leaves; a cell that reaches the same
    numbers with an unseeded backward did not run x.backward(z)."""
    unseeded = ("x = torch.tensor([x0], requires_grad=True)\nz = (2 * x) ** 2\nz.backward()\n"
                "dz_dx = x.grad * x0 / 2")
    fb = replay.run_one("chain_2x_squared", unseeded)
    assert not fb.correct and "x.backward(z)" not in (fb.explanation or ""), fb
    seeded = ("x = torch.tensor([x0], requires_grad=True)\ny = 2 * x\nz = y ** 2\nx.backward(z)\n"
              "dz_dx = x.grad")
    assert replay.run_one("chain_2x_squared", seeded).misconception == "backward_wrong_tensor"


def test_the_answer_cells_evidence_and_the_contract() -> None:
    setup = "x0 = 3.0\nimport torch"
    assert evidence("y = 3.0 * x0", setup, {}) == ["literal"]
    assert evidence("y = 2 * x0", setup, {}) == []
    assert evidence("y = 11", setup, {}) == ["literal"]
    ns = {"x": torch.tensor(1.0)}
    assert evidence("x = torch.tensor(x0)", setup, ns) == ["float32"]
    assert evidence("z.backward(v)", setup, {}) == ["seed", "backward"]
    assert evidence("z.backward()", setup, {}) == ["backward"]
    plain = clean_plain({"t": "bool", "v": True, "evidence": ["seed", "nonsense", 3]})
    assert plain["evidence"] == ["seed"]


# --- item 4: errors of the student's own code, in the exercise's terms ------------------------

def test_an_overflow_is_explained_as_divergence_with_its_line() -> None:
    code = compile_answer("import math\nw = 1.0\nfor _ in range(2000):\n    w = math.exp(w)\n")
    try:
        exec(code, {})
    except OverflowError as e:
        plain = _error(e)
    message = error_message(plain)
    assert "diverged" in message and "line 4: w = math.exp(w)" in message, message
    assert "math range error" not in message
    none = error_message({"t": "error", "v": "AttributeError",
                          "text": "'NoneType' object has no attribute 'remove'"})
    assert "return" in none and "handle" in none and "NoneType" not in none
    # the sandbox sends no text: the name alone, as before
    assert error_message({"t": "error", "v": "KeyError"}) == "Your code raised KeyError."


def test_a_hook_function_that_forgot_the_handle_is_diagnosed_not_crashed() -> None:
    for returned in ("w", "None"):
        source = ("def attach_clip(w, c):\n    w.register_hook(lambda g: g.clamp(-c, c))\n"
                  f"    return {returned}\n")
        fb = replay.run_one("clip_hook", source)
        assert fb.verdict == "wrong" and fb.misconception == "hook_handle_kept", fb


def test_a_table_wrong_in_several_listed_mistakes_explains_each() -> None:
    kind = Table(rows=("r",), columns=(("a", Bool()), ("b", Bool()), ("c", Bool())))
    row = lambda a, b, c: {"r": {"a": a, "b": b, "c": c}}
    wrong = ((0, row(False, True, True)), (1, row(True, False, True)), (2, row(True, True, False)))
    check = Check(id="t", title="t", chapter=1, points=1.0, kind=kind,
                  spec=AnswerSpec(answer="a", call=None, setups=("",)),
                  variants=(Variant(row(True, True, True), wrong),),
                  wrong=tuple(WrongInfo("accumulation", "n", f"Because {k}.", f"Hint {k}.") for k in "abc"))
    fb = judge(check, [to_plain(row(False, False, True))])
    assert fb.misconception == "several_mistakes", fb
    assert "(1) Because a." in fb.explanation and "(2) Because b." in fb.explanation
    assert "Because c" not in fb.explanation
    single = judge(check, [to_plain(row(True, True, False))])
    assert single.misconception == "accumulation" and single.explanation == "Because c."


# --- item 6: numbers, code, review() ------------------------------------------------------------

def test_feedback_shows_code_without_backticks_and_numbers_to_six_digits() -> None:
    text = "Re-ran with `x0 = 0.13089914517014023`. At 0.5, 2 and 1e-12 it holds."
    assert as_text(text) == "Re-ran with x0 = 0.130899. At 0.5, 2 and 1e-12 it holds."
    assert "<code>x0 = 0.130899</code>" in as_html(text)
    fb = Feedback("e", "t", "partial", 0.5, text, explanation="See `x.grad`.", hint="Use `h`.")
    assert "`" not in str(fb) and "0.130899" in str(fb) and "<code>x.grad</code>" in fb._repr_html_()


def test_review_lists_a_chapter_in_the_notebooks_order_with_numbers(monkeypatch) -> None:
    def no_grading_check(exercise_id: str) -> Check:
        raise AssertionError("review() computed a grading check")

    monkeypatch.setattr(checkdata, "get", no_grading_check)
    chapter = registry.chapters()[0]
    out = selfcheck.review(chapter.number, {})
    assert [fb.exercise for fb in out] == chapter.exercise_ids()
    assert out.numbers == [f"{chapter.number}.{n}" for n in range(1, len(out) + 1)]
    text = str(out)
    assert f"{chapter.number}.1 " in text and "Not answered yet" in text
    assert f"<td>{chapter.number}.2</td>" in out._repr_html_()


def test_practice_checks_are_kept_on_disk(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("GRADTUTOR_CACHE", str(tmp_path))
    calls = []

    def compute(exercise_id: str) -> Check:
        calls.append(exercise_id)
        return answer_key._practice_check(exercise_id)

    first = answer_key._stored("sum_rule", compute)
    again = answer_key._stored("sum_rule", compute)
    assert calls == ["sum_rule"] and list((tmp_path / "practice").glob("sum_rule-*.json"))
    assert checkdata.to_json(first) == checkdata.to_json(again)


def test_in_a_real_kernel_the_by_hand_refusal_is_one_line() -> None:
    """The refusal in a by-hand answer cell is one line, not a traceback through torch."""
    from jupyter_client.manager import start_new_kernel
    from test_by_hand import _kernel_run

    km, kc = start_new_kernel(kernel_name="python3")
    try:
        _kernel_run(kc, "import torch\nfrom autograder import check\nx0 = 3.0")
        cheat = "x = torch.tensor(x0, requires_grad=True)\n(x**2 + 5 * x).backward()\ndz_dx = x.grad"
        (error,) = [m["content"] for m in _kernel_run(kc, cheat, cell_id="sum_rule-answer")
                    if m["msg_type"] == "error"]
        assert error["ename"] == "ByHand" and len(error["traceback"]) == 1, error["traceback"]
        assert "done by hand" in error["traceback"][0]
        # any other error keeps its full traceback
        other = [m["content"] for m in _kernel_run(kc, "torch.ones(2) @ torch.ones(3)")
                 if m["msg_type"] == "error"]
        assert len(other[0]["traceback"]) > 1
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_the_runtime_lists_a_chapter_from_its_data_file_in_its_order(monkeypatch) -> None:
    data = {"b_one": {"chapter": 1}, "other": {"chapter": 2}, "a_two": {"chapter": 1}}
    monkeypatch.setattr(checkdata, "_provider", lambda: None)
    monkeypatch.setattr(checkdata, "_bundled", lambda: data)
    assert checkdata.chapter_ids(1) == ["b_one", "a_two"]  # the file's (lesson) order, not sorted


def test_review_shows_a_check_again_only_while_nothing_it_judged_changed(monkeypatch) -> None:
    """review() reuses the check run under an answer cell (it re-ran the cell at the practice
    values already), until a cell binds a name the answer cell reads, or the answer changes."""
    setup = checkdata.practice("sum_rule").spec.setups[0]
    ns: dict = {}
    exec("import torch\n" + setup, ns)
    answer = "dz_dx = 2 * x0 + 5"
    exec(answer, ns)
    ns["In"] = ["import torch", setup, answer, 'check("sum_rule", dz_dx)']
    shell = type("Shell", (), {"user_ns": ns})()
    monkeypatch.setattr(selfcheck, "_shell", lambda: shell)
    assert selfcheck.check("sum_rule", ns["dz_dx"]).correct
    checked: list[str] = []
    real = selfcheck.check
    monkeypatch.setattr(selfcheck, "check", lambda eid, value=Ellipsis: checked.append(eid) or real(eid, value))
    ns["In"] += ["print('something else')", "review(1, globals())"]
    assert next(fb for fb in selfcheck.review(1, ns) if fb.exercise == "sum_rule").correct
    assert "sum_rule" not in checked  # shown again, not re-run
    ns["In"] += ["x0 = 4.0", "review(1, globals())"]  # a name the answer cell reads, bound anew
    selfcheck.review(1, ns)
    assert "sum_rule" in checked
