"""The novice corpus (tests/novice/): answers written as novice students would, from the student
notebooks' prompts, replayed through check() as a kernel runs it (the answer cell re-run from the
history at the shown and practice values). The aims of issue #13: no right answer rejected, no
wrong answer accepted, no diagnosis that contradicts the label, and at least 85% of the wrong
answers with a specific, true diagnosis. `python tests/novice/replay.py` writes RESULTS.md."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "novice"))
import replay

from gradtutor.key import registry


@pytest.fixture(scope="module")
def outcomes(request: pytest.FixtureRequest) -> list[replay.Outcome]:
    found = replay.replay()
    line = replay.summary(replay.figures(found))
    reporter = request.config.pluginmanager.getplugin("terminalreporter")
    if reporter is not None:
        reporter.write_line("")
        reporter.write_line(line)
    print(line)
    return found


def _listing(items: list[replay.Outcome]) -> str:
    return "\n".join(f"{o.exercise}: {'right' if o.right else o.mistake} -> {o.verdict} "
                     f"{o.diagnosis}: {o.message[:120]}" for o in items)


def test_the_corpus_covers_every_exercise(outcomes: list[replay.Outcome]) -> None:
    per = Counter(o.exercise for o in outcomes)
    # the corpus was written for chapters 1-9, then chapter 11 (a file per part, ch11*.py);
    # chapter 10 (the capstone) is not in it
    ids = {ex.id for ex in registry.all_exercises() if ex.chapter != 10}
    assert len(outcomes) >= 350
    assert set(per) == ids, sorted(ids ^ set(per))
    assert min(per.values()) >= 3, [e for e, n in per.items() if n < 3]
    assert all(o.right or o.mistake for o in outcomes)  # every wrong answer says what is wrong


def test_no_right_answer_is_rejected(outcomes: list[replay.Outcome]) -> None:
    rejected = [o for o in outcomes if o.right and not o.accepted]
    assert not rejected, _listing(rejected)


def test_no_wrong_answer_is_accepted(outcomes: list[replay.Outcome]) -> None:
    accepted = [o for o in outcomes if not o.right and o.accepted]
    assert not accepted, _listing(accepted)


def test_no_diagnosis_contradicts_the_label(outcomes: list[replay.Outcome]) -> None:
    wrong = [o for o in outcomes if o.misdiagnosed]
    assert not wrong, _listing(wrong)


def test_most_wrong_answers_get_a_specific_true_diagnosis(outcomes: list[replay.Outcome]) -> None:
    figures = replay.figures(outcomes)
    assert figures["specific_true_pct"] >= 85.0, _listing([o for o in outcomes if not o.right
                                                           and not o.true_diagnosis])
