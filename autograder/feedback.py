"""Student side: the result of judging one answer: a score, a verdict, words to act on."""

from __future__ import annotations

import html
import json
import re
import textwrap
from dataclasses import asdict, dataclass, field
from typing import NamedTuple


class Verdict(NamedTuple):
    label: str  # what a student reads
    ink: str  # text and border colour
    paper: str  # background colour
    mark: str  # a symbol before the label


# The one vocabulary of outcomes: the self-check's feedback here, and on the trusted side the
# feedback pages and the class report (gradtutor.reports), take their words and colours from it.
VERDICTS = {
    "correct": Verdict("Correct", "#1a7f37", "#dafbe1", "✔"),
    "partial": Verdict("Partly right", "#9a6700", "#fff8c5", "◐"),
    "wrong": Verdict("Not yet right", "#cf222e", "#ffebe9", "✘"),
    "invalid": Verdict("Cannot be judged", "#8250df", "#fbefff", "?"),
    "not_answered": Verdict("Not answered yet", "#57606a", "#f6f8fa", "…"),
    "error": Verdict("Cannot be judged", "#8250df", "#fbefff", "?"),
    # not a verdict on an answer: the grader could not read or run the submission at all; the
    # class report counts each exercise of such a submission as failed
    "failed": Verdict("Submission failed", "#24292f", "#eaeef2", "!"),
}


# The catalogue's short names mostly state the rule a mistake goes against ("Leaves have no
# grad_fn"): on a line about the student's answer they are framed as that rule, so a student
# never reads the right fact as their error. These ids' names describe the mistake itself, and
# these name a topic; the generic slips (autograder.judge.GENERIC) describe the mistake too.
NAMES_THE_MISTAKE = frozenset({
    "backward_wrong_tensor", "chain_rule_dropped", "power_rule", "value_not_derivative", "sign_error",
    "local_gradient_only", "inner_gradient_reported", "left_derivative_rule", "inner_step_skipped",
    "zero_grad_order", "target_not_detached", "loop_several_bugs", "derivative_order_off",
    "local_derivative", "prompt_requirement", "no_graph",
    "sign_flipped", "factor_two", "factor_half", "factor_k", "factor_one_over_k", "transposed",
    "rounded", "summed", "reordered", "per_element", "typed_in", "shown_values_only", "several_mistakes",
})
NAMES_A_TOPIC = frozenset({"leaf_definition", "error_purpose", "matmul_transpose"})


def misconception_line(misconception: str | None, name: str) -> str:
    """What follows "Likely misconception:": the mistake, a topic, or the rule it goes against."""
    name = name.strip().rstrip(".")
    if misconception in NAMES_THE_MISTAKE or not name:
        return name
    if misconception in NAMES_A_TOPIC:
        return f"about {name[:1].lower()}{name[1:]}"
    return f"your answer goes against the rule “{name}”"


_CODE = re.compile(r"`([^`\n]+)`")
_LONG_FLOAT = re.compile(r"(?<![\w.])-?\d+\.\d{7,}(?:[eE][+-]?\d+)?(?!\w)(?!\.\d)")


def shorten(text: str) -> str:
    """Numbers with more than six decimals to six significant digits (0.7071067811865476 reads
    0.707107): a message shows values, it does not print them."""
    return _LONG_FLOAT.sub(lambda m: f"{float(m.group()):.6g}", text)


def as_text(text: str) -> str:
    """A message for a terminal or a notebook's text output: no markdown backticks."""
    return shorten(_CODE.sub(r"\1", text))


def as_html(text: str) -> str:
    """A message as HTML: escaped, its `code` spans set as code."""
    return _CODE.sub(r"<code>\1</code>", html.escape(shorten(text)))


@dataclass
class Feedback:
    exercise: str
    title: str
    verdict: str  # a key of VERDICTS
    score: float  # in [0, 1]
    message: str
    misconception: str | None = None  # id from the catalogue
    misconception_name: str | None = None
    explanation: str | None = None
    hint: str | None = None
    variants: list[VariantScore] = field(default_factory=list)  # per variant, the shown values first

    @property
    def correct(self) -> bool:
        return self.verdict == "correct"

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @property
    def body(self) -> str:
        """The message without a repeat of the verdict's label ("Not answered yet: ...")."""
        label = VERDICTS[self.verdict][0]
        rest = self.message.removeprefix(f"{label}: ").strip()
        return rest[:1].upper() + rest[1:] if rest else self.message

    def __str__(self) -> str:
        label, _, _, mark = VERDICTS[self.verdict]

        def para(text: str) -> str:  # wrapped for an 88-column terminal, continuation indented
            return textwrap.fill(text, 88, initial_indent="  ", subsequent_indent="    ")

        lines = [f"{mark} {label}: {self.title} [{self.exercise}]", para(as_text(self.body))]
        if self.misconception_name:
            line = misconception_line(self.misconception, self.misconception_name)
            lines.append(para(as_text(f"Likely misconception: {line}.")))
        if self.explanation:
            lines.append(para(as_text(f"Why: {self.explanation}")))
        if self.hint:
            lines.append(para(as_text(f"Hint: {self.hint}")))
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        label, ink, paper, mark = VERDICTS[self.verdict]
        esc = html.escape
        parts = [
            f'<div class="gradtutor-feedback gradtutor-{self.verdict}" role="status" '
            f'style="border-left:6px solid {ink};background:{paper};padding:8px 12px;'
            f'margin:4px 0;border-radius:4px;font-family:var(--jp-ui-font-family,sans-serif);'
            f'color:#1f2328;line-height:1.45">',
            f'<div style="font-weight:600;color:{ink}">{mark} {esc(label)}'
            f'<span style="font-weight:400;color:#57606a"> · {esc(self.title)}</span></div>',
            f"<div>{as_html(self.body)}</div>",
        ]
        if self.misconception_name:
            line = misconception_line(self.misconception, self.misconception_name)
            parts.append(f'<div style="margin-top:6px"><b>Likely misconception:</b> {as_html(line)}</div>')
        if self.explanation:
            parts.append(f'<div style="margin-top:4px"><b>Why:</b> {as_html(self.explanation)}</div>')
        if self.hint:
            parts.append(f'<div style="margin-top:4px"><b>Hint:</b> {as_html(self.hint)}</div>')
        parts.append("</div>")
        return "".join(parts)


@dataclass(frozen=True)
class VariantScore:
    """What a student sees of one variant's judgement: its status and score, never the answer."""

    status: str  # "correct", "wrong", "invalid" or "not_answered"
    score: float  # 1.0 or 0.0
