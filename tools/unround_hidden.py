"""Trusted side (authoring tool): give a unit a hidden variant whose answer is not round.

A grading variant whose reference has three significant digits or fewer cannot tell a student
who rounds from one who does not (the generic slip "rounded"). For each unit named, this finds a
hidden variant that does, by scaling the floating-point parameters of one of its hidden variants
by a factor close to 1 (one parameter at a time first, then several; every entry of a parameter
by the same factor, rounded to four decimals, so zeros, signs, ties and order within a
parameter stay as they were), and keeps the first candidate that changes nothing the variant was
chosen for:

- the reference's shape of answer: every bool, choice and None in it, and the sign (and so the
  zeros) of every number;
- the regions the variant reaches (``Exercise.regions``);
- which listed wrong answers agree with the reference there, and which generic slips show;
- the three witnesses agree (torch, the analytic formula, finite differences).

It rewrites the variant's literal in the unit's file (``--write``) or prints it.

    PYTHONPATH=$PWD python tools/unround_hidden.py [--write] UNIT_ID...
"""

from __future__ import annotations

import argparse
import ast
import itertools
import sys
from pathlib import Path
from typing import Any

import torch

from autograder.judge import quietly, same
from gradtutor.key import registry
from gradtutor.key.exercise import Exercise
from gradtutor.key.slips import SLIPS, slipped

# close to 1 first; a wider second tier for a kind compared loosely (rtol 1e-3: xent_grad_single)
FACTORS = (1.0375, 0.9625, 1.0625, 0.9375, 1.0875, 1.1125, 0.8875, 1.1375,
           *(1 + k / 64 for k in (-19, -17, -13, -11, 11, 13, 17, 19, 23, 29, 31)))


def canon(ex: Exercise, params: dict) -> Any:
    return quietly(ex.kind.of, quietly(ex.reference, **params))


def slips_shown(ex: Exercise, ref: Any) -> frozenset[str]:
    shown = set()
    for slip in SLIPS:
        try:
            if not same(ex.kind, slipped(ref, slip), ref):
                shown.add(slip)
        except Exception:  # another shape: it shows
            shown.add(slip)
    return frozenset(shown)


def shape_of(value: Any) -> Any:
    """What a variant is chosen for, without the numbers: bools, choices, Nones and signs."""
    if isinstance(value, torch.Tensor):
        return ("t", tuple(value.shape), tuple(torch.sign(value).reshape(-1).tolist())
                if value.is_floating_point() else tuple(value.reshape(-1).tolist()))
    if isinstance(value, dict):
        return {k: shape_of(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return tuple(shape_of(v) for v in value)
    return value


def profile(ex: Exercise, params: dict) -> tuple:
    ref = canon(ex, params)
    agree = tuple(same(ex.kind, quietly(ex.kind.of, quietly(w.value, **params)), ref) for w in ex.wrong)
    return shape_of(ref), ex.regions_at(params), agree, slips_shown(ex, ref) - {"rounded"}


def witnesses_agree(ex: Exercise, params: dict) -> bool:
    ref = canon(ex, params)
    if not same(ex.kind, quietly(ex.kind.of, ex.analytic(**params)), ref):
        return False
    return ex.finite_diff is None or same(ex.kind, quietly(ex.kind.of, ex.finite_diff(**params)), ref)


def scaled(value: Any, factor: float) -> Any:
    if isinstance(value, float):
        return round(value * factor, 4)
    if isinstance(value, list):
        return [scaled(v, factor) for v in value]
    return value  # ints (indices, counts, labels) are structure, never scaled


def has_float(value: Any) -> bool:
    return isinstance(value, float) or (isinstance(value, list) and any(has_float(v) for v in value))


def candidates(params: dict):
    names = [k for k, v in params.items() if has_float(v)]
    for size in range(1, len(names) + 1):
        for chosen in itertools.combinations(names, size):
            for factor in FACTORS:
                yield {k: scaled(v, factor) if k in chosen else v for k, v in params.items()}


def unround(ex: Exercise) -> tuple[int, dict] | None:
    """(index into ``ex.hidden``, new values) for the first candidate that keeps everything."""
    for i in reversed(range(len(ex.hidden))):
        old = dict(ex.hidden[i])
        want = profile(ex, old)
        for new in candidates(old):
            try:
                if "rounded" not in slips_shown(ex, canon(ex, new)) or profile(ex, new) != want:
                    continue
                if witnesses_agree(ex, new):
                    return i, new
            except Exception:  # a candidate the reference cannot compute at is no variant
                continue
    return None


def literal(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f'"{k}": {literal(v)}' for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    return repr(value)


def rewrite(ex: Exercise, index: int, new: dict) -> Path:
    path = next(Path("exercises").glob(f"ch{ex.chapter:02d}_*/{ex.id}.py"))
    text = path.read_text()
    call = next(n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Call)
                and any(k.arg == "hidden" for k in n.keywords))
    node = next(k.value for k in call.keywords if k.arg == "hidden").elts[index]
    lines = text.splitlines(keepends=True)
    start = sum(len(s) for s in lines[:node.lineno - 1]) + node.col_offset
    end = sum(len(s) for s in lines[:node.end_lineno - 1]) + node.end_col_offset
    path.write_text(text[:start] + literal(new) + text[end:])
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ids", nargs="+")
    parser.add_argument("--write", action="store_true", help="rewrite the unit's file")
    args = parser.parse_args(argv)
    missing = 0
    for uid in args.ids:
        ex = registry.get(uid)
        found = unround(ex)
        if found is None:
            print(f"{uid}: no candidate keeps the variant's shape", file=sys.stderr)
            missing += 1
            continue
        index, new = found
        print(f"{uid}: hidden[{index}] {dict(ex.hidden[index])} -> {literal(new)}")
        if args.write:
            print(f"  wrote {rewrite(ex, index, new)}")
    return 1 if missing else 0


if __name__ == "__main__":
    raise SystemExit(main())
