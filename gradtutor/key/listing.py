"""Trusted side: the answer key as a listing, for the instructor.

Every exercise's reference answer at the shown values, and its known wrong answers with what
they reveal. Computed from the exercise units, never typed."""

from __future__ import annotations

import json
from typing import Any

from autograder.judge import quietly
from gradtutor.key import misconceptions, registry
from gradtutor.key.answer_key import reference, wrong_values
from gradtutor.key.exercise import Exercise


def _show(ex: Exercise, canonical: Any) -> Any:
    return None if canonical is None else ex.kind.show(canonical)


def entry(ex: Exercise) -> dict[str, Any]:
    wrongs = dict(wrong_values(ex.id, 0))
    return {
        "id": ex.id,
        "chapter": ex.chapter,
        "title": ex.title,
        "points": ex.points,
        "answer_name": ex.answer,
        "params": ex.params,
        "hidden_variants": len(ex.hidden),
        "answer": _show(ex, reference(ex.id, 0)),
        "wrong_answers": [
            {"value": _show(ex, wrongs[i]), "misconception": w.misconception,
             "misconception_name": misconceptions.name(w.misconception),
             "explanation": w.explanation, "hint": w.hint}
            for i, w in enumerate(ex.wrong)
        ],
    }


def key(chapter: int | None = None) -> list[dict[str, Any]]:
    return [quietly(entry, ex) for ex in registry.all_exercises()
            if chapter is None or ex.chapter == chapter]


def print_key(*, as_json: bool = False, chapter: int | None = None) -> int:
    entries = key(chapter)
    if as_json:
        print(json.dumps(entries, indent=1))
        return 0
    titles = {c.number: c.title for c in registry.chapters()}
    current = None
    for e in entries:
        if e["chapter"] != current:
            current = e["chapter"]
            print(f"\n{titles.get(current, f'Chapter {current}')}\n" + "=" * 72)
        print(f"\n{e['id']} · {e['title']} ({e['points']:g} pt)  params {e['params']}")
        print(f"  answer  {e['answer_name']} = {json.dumps(e['answer'])}")
        for w in e["wrong_answers"]:
            print(f"  wrong   {json.dumps(w['value'])}  <- {w['misconception_name']}")
    print(f"\n{len(entries)} exercises, "
          f"{len({w['misconception'] for e in entries for w in e['wrong_answers']})} misconceptions diagnosed")
    return 0
