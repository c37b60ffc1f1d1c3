"""Nothing before an exercise shows its answer (issue #14, must-show 2).

Each student notebook is built (the committed ``notebooks/`` copy, which ``test_build`` keeps
fresh) and executed on a fresh kernel with nbclient, widget state included. Then, for every
exercise, every cell *before its answer cell* is scanned: Markdown and code sources, text
outputs (streams, ``text/plain``, ``text/html`` with tags removed, error names), and the widgets
those cells display (the HTML they render and the values of their sliders). The answer sought
is ``registry.get(id).reference(**params)`` at the shown parameters.

What counts as showing the answer, precisely (small numbers such as 0, 1 or 2 occur everywhere
and prove nothing, so they never count alone):

* **numbers** (``Number`` answers, a one-entry ``Tensor``, a table with one number): the value
  has at least two significant digits (7 and 0.5 have one, 11 and 2.25 have two or more), and a
  number token with as many significant digits as the value, up to three, matches it at the
  precision it is printed with: a decimal to half a unit of its last digit (``2.2500``, ``2.25``
  match 2.25, and ``1.50`` matches 1.49579 as a rounding, ``1.5`` does not), an integer exactly
  (``12`` matches 12.0, never 12.4). In *code*
  sources, where literals such as ``steps = 12`` are settings rather than results, a single
  number counts only with three or more significant digits (``2.991``, ``-6.054``).
* **vectors** (``Tensor`` answers of two or more entries, and the numbers of a table, row by
  row): all entries appear as consecutive number tokens of one cell's source or one cell's
  output, in order, each matching at its printed precision (``tensor([7., 2.])``, ``[7.0, 2.0]``
  and ``x.grad = 3 + 4 = 7 ... y.grad = 2`` all contain the run 7, 2; as for numbers, an entry
  with two or more significant digits needs a token with as many, up to three: ``3.0, 1.0`` does
  not show ``[2.991, 1.018]``, ``2.99, 1.02`` does). A vector whose entries are
  all -1, 0, 1 or NaN is a sign pattern, too common to be a signature, and is not scanned. In
  *sources* (where parameter literals such as ``[1.0, 2.0, 3.0]`` recur from exercise to
  exercise) a vector counts only if one of its entries has two or more significant digits.
* **names** (``Choice`` answers, e.g. an exception class or a ``grad_fn`` name): a cell in the
  same section (since the last ``##`` heading) catches that exception by name
  (``except RuntimeError``) or its output shows the name as an exception does
  (``RuntimeError:``, or an error output of that class), or, for a non-exception name, at all.
* **widget defaults**: a widget displayed before the answer cell has slider values that include
  every scalar parameter of the exercise (two or more): a few clicks would read off the answer.

An answer equal to one of the exercise's own parameters is shown by design (``y = z`` seeded
with ``z``) and is not scanned. ``Bool`` answers (one bit) are not scanned. Prose that gives an
answer away in words cannot be caught this way in general; two of its classes are caught in the
source notebooks (no kernel needed, issue #26):

* **an outcome named in the lead-in**: an answer that holds NaN or an infinity, where no listed
  wrong answer does (the prediction is "finite or not"), is not named by that word (``NaN``,
  ``inf``, ``infinite``) in the exercise's title or in the prose since the previous exercise.
  The prompt itself may say how to write one (``float("nan")``), which names no outcome.
* **a checklist named before the attempt**: a ``Table`` answer with three or more ``Bool``
  columns, each the only one a listed wrong answer turns ``False``, is a list of the bugs the
  grader looks for. Those column names are the feedback after an attempt; no cell before the
  answer cell names them (an attribute or call of the same name, ``optimizer.zero_grad()``,
  is another thing).

What the prose says about a mechanism right before the exercise that asks for it (chapter 10's
"it never clears a leaf's .grad" before 10.4) is still read by hand.
"""

from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
import pytest
import torch
from notebook_runs import executed_student

from autograder.kinds import Bool, Choice, Number, Table, Tensor
from gradtutor.key import registry
from gradtutor.nbcells import grade_id

REPO = Path(__file__).resolve().parents[1]
CHAPTERS = registry.chapters()

_NUMBER = re.compile(r"(?<![\w.#])[-+]?(?:nan|inf|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)(?![\w])")
_TAG = re.compile(r"<[^>]+>")
_EXCEPTION = re.compile(r"(Error|Exception|Warning)$")
_WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


# ---------------------------------------------------------------- number tokens


@dataclass(frozen=True)
class Token:
    value: float
    tolerance: float  # half a unit in the last printed digit
    digits: int  # significant digits as printed


def value_digits(v: float) -> int:
    """Significant digits of a value, after rounding to 6 (7.0 -> 1, 11 -> 2, 2.25 -> 3)."""
    if not math.isfinite(v) or v == 0:
        return 0
    text = f"{abs(v):.6g}"
    mantissa = text.split("e")[0]
    return len(mantissa.replace(".", "").strip("0"))


def tokens(text: str) -> list[Token]:
    out = []
    for m in _NUMBER.finditer(text):
        s = m.group(0)
        low = s.lower().lstrip("+-")
        if low in ("nan", "inf"):
            out.append(Token(float(s), 0.0, 0))
            continue
        mantissa, _, exponent = s.lower().partition("e")
        scale = int(exponent) if exponent else 0
        # a decimal matches to half a unit of its last printed digit; an integer exactly
        tolerance = 0.5 * 10.0 ** (scale - len(mantissa.split(".")[1])) if "." in mantissa else 0.0
        out.append(Token(float(s), tolerance + 1e-12 * abs(float(s)), value_digits(float(s))))
    return out


def matches(t: Token, v: float) -> bool:
    if math.isnan(v) or math.isnan(t.value):
        return math.isnan(v) and math.isnan(t.value)
    if math.isinf(v) or math.isinf(t.value):
        return v == t.value
    return abs(t.value - v) <= t.tolerance


# ---------------------------------------------------------------- what an answer looks like


@dataclass
class Signature:
    numbers: list[float] = field(default_factory=list)  # scanned one at a time
    vectors: list[list[float]] = field(default_factory=list)  # scanned as runs
    names: list[str] = field(default_factory=list)


def _flat(value: Any) -> list[float]:
    if isinstance(value, torch.Tensor):
        return [float(v) for v in value.detach().to(torch.float64).flatten().tolist()]
    if isinstance(value, list | tuple):
        return [v for item in value for v in _flat(item)]
    if isinstance(value, bool) or value is None:
        return []
    return [float(value)]


def _param_values(params: dict) -> tuple[set[float], list[list[float]]]:
    scalars, vectors = set(), []
    for value in params.values():
        if isinstance(value, bool | str):
            continue
        flat = _flat(value)
        scalars.update(flat)
        if len(flat) > 1:
            vectors.append(flat)
    return scalars, vectors


def _is_sign_pattern(vector: list[float]) -> bool:
    return all(math.isnan(v) or v in (-1.0, 0.0, 1.0) for v in vector)


def _add_numbers(sig: Signature, values: list[float], params: dict) -> None:
    scalars, vectors = _param_values(params)
    if len(values) == 1:
        v = values[0]
        if value_digits(v) >= 2 and not any(math.isclose(v, p, rel_tol=1e-9) for p in scalars):
            sig.numbers.append(v)
    elif len(values) > 1 and not _is_sign_pattern(values):
        shown = any(len(p) == len(values) and all(math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
                                                  for a, b in zip(p, values, strict=True))
                    for p in vectors)
        if not shown:
            sig.vectors.append(values)


def signature(eid: str) -> Signature:
    ex = registry.get(eid)
    kind = ex.kind
    answer = kind.of(ex.reference(**ex.params))
    sig = Signature()
    if isinstance(kind, Bool):
        return sig
    if isinstance(kind, Choice):
        if answer is not None:
            sig.names.append(answer)
        return sig
    if isinstance(kind, Table):
        kinds = dict(kind.columns)
        for row in kind.rows:
            row_numbers = []
            for col, _ in kind.columns:
                cell = answer[row][col]
                if isinstance(kinds[col], Choice) and cell is not None:
                    continue  # a table's names are scanned through its numbers only
                if isinstance(kinds[col], Number | Tensor) and cell is not None:
                    row_numbers.extend(_flat(cell))
            _add_numbers(sig, row_numbers, ex.params)
        return sig
    _add_numbers(sig, _flat(answer), ex.params)
    return sig


# ---------------------------------------------------------------- what a cell shows


@dataclass
class Shown:
    index: int
    section: int  # number of ## headings up to and including this cell
    source: str
    outputs: list[str]  # one text per output or widget
    slider_values: list[list[float]]  # per widget tree


def _widget_models(nb: nbformat.NotebookNode) -> dict[str, dict]:
    return nb.metadata.get("widgets", {}).get(_WIDGET_STATE, {}).get("state", {})


def _descendants(model_id: str, models: dict[str, dict]) -> list[dict]:
    seen, stack, out = set(), [model_id], []
    while stack:
        mid = stack.pop()
        if mid in seen or mid not in models:
            continue
        seen.add(mid)
        model = models[mid]
        out.append(model)
        for value in model["state"].values():
            for ref in value if isinstance(value, list) else [value]:
                if isinstance(ref, str) and ref.startswith("IPY_MODEL_"):
                    stack.append(ref.removeprefix("IPY_MODEL_"))
    return out


def _output_texts(output: dict, models: dict[str, dict]) -> tuple[list[str], list[list[float]]]:
    texts, sliders = [], []
    if output.get("output_type") == "error":
        texts.append(f"{output.get('ename')}: {output.get('evalue')}")
    texts.append(output.get("text", ""))
    data = output.get("data", {})
    texts.append(data.get("text/plain", ""))
    texts.append(html.unescape(_TAG.sub(" ", data.get("text/html", ""))))
    view = data.get("application/vnd.jupyter.widget-view+json")
    if view:
        tree = _descendants(view["model_id"], models)
        values = []
        for model in tree:
            state = model["state"]
            if model["model_name"] == "HTMLModel":
                texts.append(html.unescape(_TAG.sub(" ", state.get("value", ""))))
            elif "Slider" in model["model_name"] and isinstance(state.get("value"), int | float):
                values.append(float(state["value"]))
            for inner in state.get("outputs", []) if model["model_name"] == "OutputModel" else []:
                inner_texts, _ = _output_texts(inner, models)
                texts.extend(inner_texts)
        sliders.append(values)
    return [t for t in texts if t], sliders


def shown_cells(nb: nbformat.NotebookNode) -> list[Shown]:
    models = _widget_models(nb)
    cells, section = [], 0
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown" and re.match(r"##\s", cell.source):
            section += 1
        outputs, sliders = [], []
        for output in cell.get("outputs", []):
            texts, trees = _output_texts(output, models)
            outputs.extend(texts)
            sliders.extend(trees)
        cells.append(Shown(i, section, cell.source, outputs, sliders))
    return cells


# ---------------------------------------------------------------- the scan


def _needed(v: float, at_least: int = 2) -> int:
    # a token shows v only with as many significant digits as v has, up to three (or at_least)
    return max(at_least, min(3, value_digits(v)))


def _has_number(text: str, v: float, digits: int = 2) -> bool:
    return any(t.digits >= _needed(v, digits) and matches(t, v) for t in tokens(text))


def _entry_matches(t: Token, v: float) -> bool:
    # an entry with two or more significant digits is not shown by a one-digit token (3.0 is not 2.991)
    return matches(t, v) and (value_digits(v) < 2 or t.digits >= _needed(v))


def _has_run(text: str, vector: list[float]) -> bool:
    toks, n = tokens(text), len(vector)
    return any(all(_entry_matches(toks[i + k], vector[k]) for k in range(n))
               for i in range(len(toks) - n + 1))


def _shows_name(text: str, name: str) -> bool:
    if _EXCEPTION.search(name):
        return re.search(rf"(?<!\w){re.escape(name)}:", text) is not None
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text) is not None


def answer_index(nb: nbformat.NotebookNode, eid: str) -> int:
    for i, cell in enumerate(nb.cells):
        if grade_id(cell) == f"{eid}-answer":
            return i
    raise LookupError(f"{eid}: no answer cell")


def giveaways(nb: nbformat.NotebookNode, eid: str) -> list[str]:
    """Where, before ``eid``'s answer cell, the notebook shows that exercise's answer."""
    stop = answer_index(nb, eid)
    cells = shown_cells(nb)
    sig = signature(eid)
    params = registry.get(eid).params
    scalars = [float(v) for v in params.values()
               if isinstance(v, int | float) and not isinstance(v, bool)]
    found = []
    for cell in cells[:stop]:
        where = f"cell {cell.index} ({cell.source[:60]!r})"
        texts = [("source", cell.source)] + [("output", t) for t in cell.outputs]
        code = nb.cells[cell.index].cell_type == "code"
        for part, text in texts:
            digits = 3 if code and part == "source" else 2
            found += [f"{where} {part} shows the answer {v!r}" for v in sig.numbers
                      if value_digits(v) >= digits and _has_number(text, v, digits)]
            found += [f"{where} {part} shows the answer {vec!r}" for vec in sig.vectors
                      if (part == "output" or max(map(value_digits, vec)) >= 2) and _has_run(text, vec)]
        if cell.section == cells[stop].section:
            found += [f"{where} output shows the answer {name!r}" for name in sig.names
                      for text in cell.outputs if _shows_name(text, name)]
            found += [f"{where} source catches the answer {name!r}" for name in sig.names
                      if _EXCEPTION.search(name) and cell.outputs
                      and re.search(rf"except\s*\(?[\w\s,.]*\b{re.escape(name)}\b", cell.source)]
        if len(scalars) >= 2:
            found += [f"{where} displays a widget set to the exercise's values {scalars}"
                      for values in cell.slider_values if all(s in values for s in scalars)]
    return sorted(set(found))


# ---------------------------------------------------------------- the scanner itself


def _notebook(*cells: nbformat.NotebookNode) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = list(cells)
    return nb


def _answer_cell(eid: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_code_cell("...", metadata={"nbgrader": {"grade_id": f"{eid}-answer"}})


def _printed(text: str) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell("print(...)")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
    return cell


def test_scanner_finds_the_fanout_answer_printed_before_the_exercise():
    # fanout_xy at (2, 3): (7, 2), as the old chain_rule_stepper printed it
    nb = _notebook(nbformat.v4.new_markdown_cell("## 5. Fan-out"),
                   _printed("x.grad = 3 + 4 = 7\ny.grad = 2\n"), _answer_cell("fanout_xy"))
    assert giveaways(nb, "fanout_xy")
    nb = _notebook(_printed("tensor([7., 2.])"), _answer_cell("fanout_xy"))
    assert giveaways(nb, "fanout_xy")


def test_scanner_ignores_the_same_numbers_after_the_answer_cell_and_small_numbers_alone():
    nb = _notebook(_answer_cell("fanout_xy"), _printed("x.grad = 7, y.grad = 2"))
    assert giveaways(nb, "fanout_xy") == []
    nb = _notebook(_printed("0 1 2 3 7 0.5 -1 [2, 7]"), _answer_cell("fanout_xy"))
    assert giveaways(nb, "fanout_xy") == []


def test_scanner_reads_a_number_at_its_printed_precision():
    # sum_rule at x0 = 3: 11; "11.0000" shows it, "11.3" and "1.1" do not
    assert giveaways(_notebook(_printed("slope 11.0000"), _answer_cell("sum_rule")), "sum_rule")
    assert giveaways(_notebook(_printed("slope 11.3, 1.1"), _answer_cell("sum_rule")), "sum_rule") == []


def test_scanner_finds_an_exception_printed_in_the_same_section_only():
    # backward_twice_error's answer is RuntimeError
    error = _printed("RuntimeError: Trying to backward through the graph a second time")
    heading = nbformat.v4.new_markdown_cell("## 3. The graph is freed")
    nb = _notebook(heading, error, _answer_cell("backward_twice_error"))
    assert giveaways(nb, "backward_twice_error")
    nb = _notebook(error, nbformat.v4.new_markdown_cell("## 4. Later"), _answer_cell("backward_twice_error"))
    assert giveaways(nb, "backward_twice_error") == []
    caught = _printed("backward: Trying to backward through the graph a second time")
    caught.source = "try:\n    y.backward()\nexcept RuntimeError as e:\n    print('backward:', e)"
    nb = _notebook(heading, caught, _answer_cell("backward_twice_error"))
    assert giveaways(nb, "backward_twice_error")


def test_scanner_reads_code_literals_as_settings_unless_precise():
    # accumulate_three at x0 = 2: 12; a code literal 12 is a setting, a printed 12.0 is a result
    code = nbformat.v4.new_code_cell("def descend(steps: int = 12): ...")
    assert giveaways(_notebook(code, _answer_cell("accumulate_three")), "accumulate_three") == []
    assert giveaways(_notebook(_printed("w.grad = 12.0"), _answer_cell("accumulate_three")), "accumulate_three")


def test_scanner_needs_as_many_digits_as_the_answer_has():
    # seed000_forward at the post's values: (2.991, 1.018081)
    rounded_away = nbformat.v4.new_code_cell("x = torch.tensor([1.0, 3.0, 1.0])")
    assert giveaways(_notebook(rounded_away, _answer_cell("seed000_forward")), "seed000_forward") == []
    shown = _printed("Final_y: tensor([2.9910]) Loss: tensor(1.0181)")
    assert giveaways(_notebook(shown, _answer_cell("seed000_forward")), "seed000_forward")


def test_token_precision():
    (t,) = tokens("1.0000e+00")
    assert t.value == 1.0 and math.isclose(t.tolerance, 5e-5, rel_tol=1e-6)
    assert [t.value for t in tokens("tensor([7., 2.]) x0 10^{-7}")] == [7.0, 2.0, 10.0, -7.0]
    assert value_digits(7.0) == 1 and value_digits(11.0) == 2 and value_digits(2.25) == 3


# ---------------------------------------------------------------- the course


def _executed(slug: str) -> nbformat.NotebookNode:
    return executed_student(slug)


@pytest.mark.slow
@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.slug for c in CHAPTERS])
def test_no_exercise_answer_is_shown_before_its_answer_cell(chapter):
    nb = _executed(chapter.slug)
    found = {eid: giveaways(nb, eid) for eid in chapter.exercise_ids()}
    found = {eid: where for eid, where in found.items() if where}
    assert not found, "\n".join(f"{eid}: {w}" for eid, where in found.items() for w in where)


# ---------------------------------------------------------------- giveaways in words (issue #26)

_OUTCOME_WORDS = {"nan": r"\bNaNs?\b", "inf": r"\binf\b|\binfinit(?:e|y|ies)\b"}


def _flat_answer(value: Any) -> list[float]:
    if isinstance(value, dict):
        return [v for inner in value.values() for v in _flat_answer(inner)]
    if isinstance(value, str) or value is None or isinstance(value, type):
        return []
    try:
        return _flat(value)
    except (TypeError, ValueError):
        return []


def _outcomes(values: list[float]) -> set[str]:
    return ({"nan"} if any(math.isnan(v) for v in values) else set()) | \
        ({"inf"} if any(math.isinf(v) for v in values) else set())


def distinguishing_outcomes(eid: str) -> set[str]:
    """NaN or inf in the answer at the shown values that no listed wrong answer holds."""
    ex = registry.get(eid)
    answer = _outcomes(_flat_answer(ex.kind.of(ex.reference(**ex.params))))
    for wrong in ex.wrong if answer else ():
        answer -= _outcomes(_flat_answer(ex.kind.of(wrong.value(**ex.params))))
    return answer


def lead_in(nb: nbformat.NotebookNode, eid: str) -> list[str]:
    """The exercise's heading line and the Markdown since the previous exercise's cells."""
    start = next(i for i, c in enumerate(nb.cells) if grade_id(c) == f"{eid}-prompt")
    texts = [nb.cells[start].source.splitlines()[0]]
    for cell in reversed(nb.cells[:start]):
        if "nbgrader" in cell.metadata:
            break
        if cell.cell_type == "markdown":
            texts.append(cell.source)
    return texts


def outcome_named(nb: nbformat.NotebookNode, eid: str) -> list[str]:
    found = []
    for outcome in sorted(distinguishing_outcomes(eid)):
        for text in lead_in(nb, eid):
            found += [f"{eid}: the lead-in names the answer's {word!r} ({text[:60]!r})"
                      for word in re.findall(_OUTCOME_WORDS[outcome], text, re.I)]
    return found


def checklist(eid: str) -> list[str]:
    """The Bool columns of a Table answer that each listed wrong answer fails alone, when there
    are three or more: the names of the bugs the grader checks for."""
    ex = registry.get(eid)
    if not isinstance(ex.kind, Table):
        return []
    flags = [col for col, kind in ex.kind.columns if isinstance(kind, Bool)]
    if len(flags) < 3:
        return []
    right = ex.kind.of(ex.reference(**ex.params))
    named = set()
    for wrong in ex.wrong:
        value = ex.kind.of(wrong.value(**ex.params))
        failing = {col for row in ex.kind.rows for col in flags
                   if value[row][col] is False and right[row][col] is True}
        if len(failing) == 1:
            named |= failing
    return sorted(named) if len(named) >= 3 else []


def _names_check(source: str, name: str) -> bool:
    # an identifier with an underscore is a name wherever it stands; a plain word
    # ("accumulation") only as code, in backticks
    pattern = rf"(?<![\w.]){re.escape(name)}(?![\w(])" if "_" in name else rf"`{re.escape(name)}`"
    return re.search(pattern, source) is not None


def checklist_named(nb: nbformat.NotebookNode, eid: str) -> list[str]:
    names = checklist(eid)
    stop = answer_index(nb, eid)
    return [f"{eid}: cell {i} names the check {name!r} before an attempt"
            for i, cell in enumerate(nb.cells[:stop]) for name in names if _names_check(cell.source, name)]


def test_outcome_scan_finds_nan_in_a_heading_or_lead_in_but_not_a_formatting_line():
    eid = "group_lasso_nan"
    assert distinguishing_outcomes(eid) == {"nan"}

    def prompt(title: str, body: str = "Predict first.") -> nbformat.NotebookNode:
        return nbformat.v4.new_markdown_cell(f"### Exercise 10.8 · {title} (1 point)\n\n{body}",
                                             metadata={"nbgrader": {"grade_id": f"{eid}-prompt"}})
    lead = nbformat.v4.new_markdown_cell("The norm has a kink: a good place for a NaN to hide.")
    assert outcome_named(_notebook(lead, prompt("A guarded square root"), _answer_cell(eid)), eid)
    assert outcome_named(_notebook(prompt("A torch.where that NaNs"), _answer_cell(eid)), eid)
    quiet = prompt("A guarded square root", 'Write `float("nan")` where autograd gives NaN.')
    earlier = nbformat.v4.new_markdown_cell("NaN before the previous exercise.")
    previous = nbformat.v4.new_code_cell("...", metadata={"nbgrader": {"grade_id": "safe_group_lasso"}})
    assert outcome_named(_notebook(earlier, previous, quiet, _answer_cell(eid)), eid) == []


def test_checklist_scan_finds_the_bug_names_before_the_answer_cell_only():
    eid = "fix_training_loop"
    names = checklist(eid)
    assert len(names) >= 3 and "zero_grad" in names and "data_in_penalty" in names
    assert checklist("safe_group_lasso") == []  # one gradcheck column is a measurement, not a list
    listed = nbformat.v4.new_markdown_cell("Each check (`zero_grad`, `non_leaf`) names a bug.")
    assert checklist_named(_notebook(listed, _answer_cell(eid)), eid)
    assert checklist_named(_notebook(nbformat.v4.new_markdown_cell("(`accumulation`)"), _answer_cell(eid)), eid)
    call = nbformat.v4.new_code_cell("optimizer.zero_grad()\nx.data_in_penalty = 1\n# gradient accumulation")
    after = nbformat.v4.new_markdown_cell("`zero_grad` was a bug.")
    assert checklist_named(_notebook(call, _answer_cell(eid), after), eid) == []


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.slug for c in CHAPTERS])
def test_no_lead_in_names_the_outcome_and_no_checklist_is_named_before_an_attempt(chapter):
    from gradtutor.authoring.build import source_notebook

    nb = source_notebook(chapter)
    found = [w for eid in chapter.exercise_ids() for w in outcome_named(nb, eid) + checklist_named(nb, eid)]
    assert not found, "\n".join(found)
