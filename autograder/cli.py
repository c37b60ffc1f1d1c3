"""The ``gradtutor`` command: a thin layer over keyword-only functions."""

from __future__ import annotations

import argparse
import sys


def _build(args: argparse.Namespace) -> int:
    from .build.course import build

    build(only=args.chapters or None, solutions=not args.no_solutions)
    return 0


def _key(args: argparse.Namespace) -> int:
    from .key import print_key

    print_key(as_json=args.json, chapter=args.chapter)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="gradtutor",
        description="The gradtutor autograd course: build notebooks, print the answer key, "
                    "grade a class and report what it misunderstands.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("build", help="build student notebooks (notebooks/) and executed "
                                     "solutions (solutions/) from lessons and exercise units")
    p.add_argument("chapters", nargs="*", help="chapter numbers or folder names (default: all)")
    p.add_argument("--no-solutions", action="store_true", help="skip executing the solutions")
    p.set_defaults(run=_build)

    p = sub.add_parser("key", help="print every exercise with its answer and its diagnosed wrong answers")
    p.add_argument("--json", action="store_true", help="machine-readable JSON list")
    p.add_argument("--chapter", type=int, help="only this chapter")
    p.set_defaults(run=_key)

    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
