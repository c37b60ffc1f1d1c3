"""Student side: the result of judging one answer: a score, a verdict, words to act on."""

from __future__ import annotations

import html
import json
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

        lines = [f"{mark} {label}: {self.title} [{self.exercise}]", para(self.body)]
        if self.misconception_name:
            lines.append(para(f"Likely misconception: {self.misconception_name}."))
        if self.explanation:
            lines.append(para(f"Why: {self.explanation}"))
        if self.hint:
            lines.append(para(f"Hint: {self.hint}"))
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
            f"<div>{esc(self.body)}</div>",
        ]
        if self.misconception_name:
            parts.append(f'<div style="margin-top:6px"><b>Likely misconception:</b> '
                         f"{esc(self.misconception_name)}</div>")
        if self.explanation:
            parts.append(f'<div style="margin-top:4px"><b>Why:</b> {esc(self.explanation)}</div>')
        if self.hint:
            parts.append(f'<div style="margin-top:4px"><b>Hint:</b> {esc(self.hint)}</div>')
        parts.append("</div>")
        return "".join(parts)


@dataclass(frozen=True)
class VariantScore:
    """What a student sees of one variant's judgement: its status and score, never the answer."""

    status: str  # "correct", "wrong", "invalid" or "not_answered"
    score: float  # 1.0 or 0.0
