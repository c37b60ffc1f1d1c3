"""Replay the novice corpus through ``check()`` as a kernel would, and count the issue's figures.

Each answer runs as in a notebook: the chapter's import cell, the exercise's setup cell at the
shown values, the answer cell (autograd off for a by-hand exercise, as JupyterLab's hook does),
then ``check(id, answer, namespace=, history=)``, which re-runs the answer cell from the history
at the practice values. ``python tests/novice/replay.py`` prints the figures and writes
``tests/novice/RESULTS.md``; ``--list`` prints every answer that misses an aim.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

# A generic slip and a catalogue id that name the same mechanism: either is a true diagnosis.
SAME = {
    "sign_flipped": {"sign_error"},
    "sign_error": {"sign_flipped"},
    "typed_in": {"shown_values_only"},  # a typed-in number is right at the shown values only
}


@dataclass
class Outcome:
    chapter: str
    exercise: str
    source: str
    right: bool  # the label
    mistake: str
    expected: tuple[str, ...]  # misconception ids that would be a true diagnosis
    reviewed: tuple[str, ...]  # ids added after reading the diagnosis's explanation (see ch01.py)
    verdict: str
    diagnosis: str | None
    message: str

    @property
    def accepted(self) -> bool:
        return self.verdict == "correct"

    @property
    def true_diagnosis(self) -> bool:
        if self.right or self.diagnosis is None:
            return False
        ids = set(self.expected) | set(self.reviewed)
        return self.diagnosis in ids or bool(SAME.get(self.diagnosis, set()) & ids)

    @property
    def misdiagnosed(self) -> bool:
        return not self.right and self.diagnosis is not None and not self.true_diagnosis


def corpus() -> list[tuple[str, str, str, Any]]:
    """(chapter file, exercise id, answer source, label) for every stored answer."""
    out = []
    for path in sorted(HERE.glob("ch*.py")):
        spec = importlib.util.spec_from_file_location(f"novice_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        out += [(path.stem, ex, src, label) for ex, src, label in module.ANSWERS]
    return out


@cache
def _imports(chapter: int) -> str:
    """The first code cell of the chapter's student notebook (its imports)."""
    path = next((ROOT / "notebooks").glob(f"ch{chapter:02d}_*.ipynb"))
    cells = json.loads(path.read_text())["cells"]
    return "".join(next(c for c in cells if c["cell_type"] == "code")["source"])


def run_one(exercise: str, source: str) -> Any:
    """The Feedback ``check()`` gives this answer cell in a fresh namespace."""
    from autograder import byhand, checkdata
    from autograder.answers import quiet
    from autograder.selfcheck import check

    found = checkdata.practice(exercise)
    imports, setup = _imports(found.chapter), found.spec.setups[0]
    ns: dict[str, Any] = {}
    with quiet():
        exec(imports, ns)
        exec(setup, ns)
        try:
            with byhand.autograd_off(found.spec.by_hand):
                exec(compile(source, "<answer>", "exec"), ns)
        except Exception:
            pass
        history = [imports, setup, source, f"check({exercise!r}, {found.spec.answer})"]
        return check(exercise, ns.get(found.spec.answer, Ellipsis), namespace=ns, history=history)


def replay() -> list[Outcome]:
    outcomes = []
    for chapter, exercise, source, label in corpus():
        right = label == "right"
        mistake, expected = ("", ()) if right else (label[1], tuple(label[2]))
        reviewed = tuple(label[3]) if not right and len(label) > 3 else ()
        fb = run_one(exercise, source)
        outcomes.append(Outcome(chapter, exercise, source, right, mistake, expected, reviewed,
                                fb.verdict, fb.misconception, fb.message))
    return outcomes


def figures(outcomes: list[Outcome]) -> dict[str, Any]:
    wrong = [o for o in outcomes if not o.right]
    specific = sum(o.true_diagnosis for o in wrong)
    return {
        "answers": len(outcomes),
        "exercises": len({o.exercise for o in outcomes}),
        "right_answers": len(outcomes) - len(wrong),
        "wrong_answers": len(wrong),
        "right_rejected": sum(o.right and not o.accepted for o in outcomes),
        "wrong_accepted": sum(not o.right and o.accepted for o in outcomes),
        "misdiagnosed": sum(o.misdiagnosed for o in outcomes),
        "specific_true": specific,
        "specific_true_pct": round(100 * specific / max(len(wrong), 1), 1),
        "true_only_after_review": sum(o.true_diagnosis and o.diagnosis not in o.expected and
                                      not (SAME.get(o.diagnosis, set()) & set(o.expected)) for o in wrong),
    }


def first_written(outcomes: list[Outcome]) -> dict[str, Any]:
    """The figures with the labels as first written (the ids added after review left out)."""
    from dataclasses import replace

    return figures([replace(o, reviewed=()) for o in outcomes])


def summary(f: dict[str, Any]) -> str:
    return (f"novice corpus: {f['answers']} answers to {f['exercises']} exercises; "
            f"right rejected {f['right_rejected']}, wrong accepted {f['wrong_accepted']}, "
            f"misdiagnosed {f['misdiagnosed']}, specific true diagnosis "
            f"{f['specific_true']}/{f['wrong_answers']} = {f['specific_true_pct']}%")


def misses(outcomes: list[Outcome]) -> list[Outcome]:
    return [o for o in outcomes if (o.right and not o.accepted) or
            (not o.right and (o.accepted or not o.true_diagnosis))]


def write_results(f: dict[str, Any], outcomes: list[Outcome]) -> None:
    g = first_written(outcomes)
    lines = ["# Novice corpus replay", "", "Written by `tests/novice/replay.py` (also run by "
             "`tests/test_novice.py`).", "", "| figure | value | aim |", "|---|---|---|",
             f"| answers (exercises) | {f['answers']} ({f['exercises']}) | ≥ 350 (all) |",
             f"| right answers rejected | {f['right_rejected']} of {f['right_answers']} | 0 |",
             f"| wrong answers accepted | {f['wrong_accepted']} of {f['wrong_answers']} | 0 |",
             f"| misdiagnoses | {f['misdiagnosed']} | 0 |",
             f"| wrong answers with a specific, true diagnosis | {f['specific_true']} of "
             f"{f['wrong_answers']} ({f['specific_true_pct']}%) | ≥ 85% |",
             "", f"Of the specific true diagnoses, {f['true_only_after_review']} are true by an id added to "
             "the label after reading the diagnosis's explanation (the 4th element of a label; each "
             "is the unit's name for the mechanism the label describes). With the labels as first "
             f"written: misdiagnoses {g['misdiagnosed']}, specific true diagnoses {g['specific_true']} "
             f"of {g['wrong_answers']} ({g['specific_true_pct']}%).", ""]
    left = misses(outcomes)
    if left:
        lines += ["## Answers that miss an aim", "", "| exercise | label | verdict | diagnosis |",
                  "|---|---|---|---|"]
        lines += [f"| {o.exercise} | {'right' if o.right else o.mistake} | {o.verdict} | "
                  f"{o.diagnosis or '—'} |" for o in left]
    (HERE / "RESULTS.md").write_text("\n".join(lines) + "\n")


def main(argv: list[str]) -> int:
    outcomes = replay()
    f = figures(outcomes)
    write_results(f, outcomes)
    print(summary(f))
    if "--list" in argv:
        for o in misses(outcomes):
            label = "RIGHT" if o.right else f"WRONG[{'/'.join(o.expected) or '-'}] {o.mistake}"
            print(f"- {o.exercise}: {label}\n    -> {o.verdict} {o.diagnosis}: {o.message[:160]}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main(sys.argv))
