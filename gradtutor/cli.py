"""Trusted side: the ``gradtutor`` command, a thin layer over keyword-only functions.

Each subcommand imports its module only when it runs, so ``gradtutor --help`` is instant.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from importlib import import_module
from pathlib import Path


def _lazy(target: str, **fixed) -> Callable[[argparse.Namespace], int]:
    """Call ``module:function`` with the parsed options as keyword arguments."""
    module, func = target.split(":")

    def run(args: argparse.Namespace) -> int:
        options = {k: v for k, v in vars(args).items() if k not in ("command", "run")}
        result = getattr(import_module(module), func)(**options, **fixed)
        return result if isinstance(result, int) else 0

    return run


def _shard(text: str) -> tuple[int, int]:
    index, _, count = text.partition("/")
    if index.isdigit() and count.isdigit() and int(index) < int(count):
        return int(index), int(count)
    raise argparse.ArgumentTypeError(f"{text!r}: write INDEX/COUNT with 0 <= INDEX < COUNT, "
                                     "e.g. 0/4 for the first of four machines")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gradtutor",
        description="gradtutor: an interactive course on PyTorch autograd, and its autograder. "
                    "Students run `make lab`; instructors build, grade and report with the "
                    "commands below.",
        epilog="Run `gradtutor COMMAND --help` for the options of one command.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("build", help="build student notebooks (notebooks/) and executed solutions "
                                     "(solutions/) from lessons and exercise units")
    p.add_argument("chapters", nargs="*", help="chapter numbers or folder names (default: all)")
    p.add_argument("--no-solutions", dest="solutions", action="store_false",
                   help="skip executing the solution notebooks")
    p.add_argument("--keep-student-work", action="store_true",
                   help="never overwrite a student notebook that differs from the build (your work)")
    # imported when the command runs, so that `gradtutor --help` stays instant
    p.set_defaults(run=_lazy("gradtutor.authoring.build:build_cli"))

    p = sub.add_parser("key", help="print every exercise with its reference answer and its "
                                   "diagnosed wrong answers")
    p.add_argument("--json", dest="as_json", action="store_true", help="a JSON list, for tools")
    p.add_argument("--chapter", type=int, help="only this chapter")
    # imported when the command runs, so that `gradtutor --help` stays instant
    p.set_defaults(run=_lazy("gradtutor.key.listing:print_key"))

    p = sub.add_parser(
        "grade", help="grade every submission under COURSE_DIR/submitted/ in parallel, isolated "
                      "workers; resumable",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Grade every submission under COURSE_DIR/submitted/STUDENT/ASSIGNMENT/.\n\n"
                    "Each notebook runs in its own isolated child (its own namespaces, no\n"
                    "network, a cgroup where the machine has them); each answer is judged at the\n"
                    "hidden values against the reference.\n"
                    "Scores go to nbgrader's gradebook (COURSE_DIR/gradebook.db), the\n"
                    "autograded notebooks to COURSE_DIR/autograded/, each submission's results\n"
                    "to COURSE_DIR/gradtutor/results/. Submissions already graded are skipped,\n"
                    "so a stopped run resumes where it was; a broken notebook gets a score and\n"
                    "a reason, never stops the batch.",
        epilog="examples:\n"
               "  gradtutor grade course/                          the whole class\n"
               "  gradtutor grade course/ --assignment ch01_graphs one chapter\n"
               "  gradtutor grade course/ --profile                where the time went\n"
               "  gradtutor report course/                         then the class report\n"
               "after a change to an exercise unit: gradtutor regrade course/")
    p.add_argument("course_dir", type=Path, help="an nbgrader course folder")
    p.add_argument("--assignment", action="append", help="only this assignment (repeatable)")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                   help="worker processes (default: number of cores, %(default)s here)")
    p.add_argument("--csv", type=Path, help="also write scores to this CSV file")
    p.add_argument("--force", action="store_true", help="re-grade submissions already graded")
    p.add_argument("--student-python", type=Path, metavar="PYTHON",
                   help="run the students' code on this interpreter and its packages, the ones "
                        "their kernels use (e.g. /opt/gradtutor/student/bin/python on the class "
                        "hub); it must be readable by every user. Default: $GRADTUTOR_STUDENT_PYTHON, "
                        "else the grader's own Python")
    p.add_argument("--profile", action="store_true",
                   help="print where the run's time went, step by step (start-up, the parent's "
                        "work per submission, each child's set-up and cells), and save it to "
                        "COURSE_DIR/gradtutor/grade-profile.json")
    spread = p.add_mutually_exclusive_group()
    spread.add_argument("--shard", type=_shard, metavar="INDEX/COUNT",
                        help="grade only every COUNT-th student, starting at INDEX (0-based), and "
                             "write results files but not the gradebook: one machine's share of "
                             "a class, e.g. --shard $JOB_COMPLETION_INDEX/8 in a Kubernetes "
                             "Indexed Job")
    spread.add_argument("--gather", action="store_true",
                        help="grade nothing: write every results file into the gradebook (the "
                             "last step after sharded runs)")
    # imported when the command runs, so that `gradtutor --help` stays instant
    p.set_defaults(run=_lazy("gradtutor.grading.launch:grade_cli"))

    p = sub.add_parser("regrade", help="judge the stored answers again against the exercise units "
                                       "as they are now (no notebook runs); update the gradebook, "
                                       "results and feedback; say who changed")
    p.add_argument("course_dir", type=Path, help="a graded course folder")
    p.add_argument("--assignment", action="append", help="only this assignment (repeatable)")
    p.add_argument("--csv", type=Path, help="write the changes here (default: "
                                            "COURSE_DIR/gradtutor/regrades/<time>.csv)")
    p.add_argument("--force", action="store_true",
                   help="store every submission again, changed or not")
    # imported when the command runs, so that `gradtutor --help` stays instant
    p.set_defaults(run=_lazy("gradtutor.grading.regrade:regrade_cli"))

    p = sub.add_parser("export", help="scores for a learning management system: a Canvas "
                                      "gradebook import file, or one CSV row per student and "
                                      "assignment")
    p.add_argument("course_dir", type=Path, help="a graded course folder")
    p.add_argument("--canvas", type=Path, metavar="FILE",
                   help="Canvas gradebook import CSV (Student, ID, SIS User ID, SIS Login ID, "
                        "Section, then one column per assignment with a Points Possible row)")
    p.add_argument("--csv", type=Path, metavar="FILE",
                   help="one row per student and assignment (score, late penalty, total, ...)")
    p.add_argument("--assignment", action="append", help="only this assignment (repeatable)")
    p.add_argument("--section", default="", help="the Section column of the Canvas file for a student "
                                                  "the roster gives no section")
    # imported when the command runs, so that `gradtutor --help` stays instant
    p.set_defaults(run=_lazy("gradtutor.reports.export:export_cli"))

    p = sub.add_parser("roster", help="the class list: import a CSV of students into the gradebook")
    actions = p.add_subparsers(metavar="ACTION", required=True)  # no dest: not an option to pass on
    p = actions.add_parser("import", help="add or update students from a CSV with the header "
                                          "id,first_name,last_name,email,lms_user_id,section; a bad "
                                          "file is refused whole, naming each bad line")
    p.add_argument("file", type=Path, metavar="FILE.csv")
    p.add_argument("--course", dest="course_dir", type=Path, default=Path("course"),
                   help="the course folder holding gradebook.db (default: ./course)")
    # imported when the command runs, so that `gradtutor --help` stays instant
    p.set_defaults(run=_lazy("gradtutor.records.roster:import_cli"))

    p = sub.add_parser(
        "late-policy", help="show or set the course's late policy (how late work is scored)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="The late policy is nbgrader's own setting, kept in the course folder's "
                    "nbgrader_config.py:\n"
                    "  none      late work is graded as it is and marked late (nbgrader's default)\n"
                    "  zero      a late submission scores 0 (nbgrader's penalty_method 'zero')\n"
                    "  N%        N% of the score off per started day late, at most all of it\n"
                    "            (gradtutor's LateSubmissionPlugin)\n"
                    "  --grace   a grace period (30m, 2h, 1d): work at most that late is on time\n"
                    "Lateness is nbgrader's: the submission's timestamp minus the due date (see\n"
                    "`gradtutor due-date`) and any extension. `gradtutor grade` applies the policy\n"
                    "and the gradebook keeps the penalty, so the formgrader, `gradtutor report` and\n"
                    "`gradtutor export` show the same scores. Students see the policy and the due\n"
                    "date under the title of each notebook released after they were set.",
        epilog="examples:\n  gradtutor late-policy set 10% --grace 2h\n  gradtutor late-policy set zero\n"
               "  gradtutor late-policy show --course course")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    shown = actions.add_parser("show", help="print the policy in force")
    chosen = actions.add_parser("set", help="write a policy: none, zero or N%% per day")
    chosen.add_argument("policy", nargs="+", metavar="POLICY", help="none, zero or N%% (e.g. 10%%)")
    chosen.add_argument("--grace", metavar="DURATION", help="grace period: 30m, 2h, 1d (default none)")
    for q in (shown, chosen):
        q.add_argument("--course", dest="course_dir", type=Path, default=Path("course"),
                       help="the course folder (default: ./course)")
        # imported when the command runs, so that `gradtutor --help` stays instant
        q.set_defaults(run=_lazy("gradtutor.records.term:late_policy_cli"))

    p = sub.add_parser("due-date", help="show or set the assignments' due dates (nbgrader's "
                                        "gradebook); students see them in their notebook",
                       description="Due dates live in nbgrader's gradebook (assignment.duedate, "
                                   "what `nbgrader db assignment add --duedate` sets). A time "
                                   "without a zone is UTC. Generate and release an assignment "
                                   "after setting its date: the released notebook shows it under "
                                   "its title.")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    shown = actions.add_parser("show", help="every assignment of the gradebook with its due date")
    chosen = actions.add_parser("set", help="set an assignment's due date")
    chosen.add_argument("assignment", metavar="ASSIGNMENT")
    chosen.add_argument("when", nargs="+", metavar="WHEN",
                        help="e.g. 2026-03-01 17:00 (UTC), 2026-03-01T17:00+01:00, or "
                             "2026-03-01 17:00 Europe/Berlin")
    cleared = actions.add_parser("clear", help="remove an assignment's due date")
    cleared.add_argument("assignment", metavar="ASSIGNMENT")
    for q in (shown, chosen, cleared):
        q.add_argument("--course", dest="course_dir", type=Path, default=Path("course"),
                       help="the course folder holding gradebook.db (default: ./course)")
        # imported when the command runs, so that `gradtutor --help` stays instant
        q.set_defaults(run=_lazy("gradtutor.records.term:due_date_cli"))

    p = sub.add_parser("demo-class", help="write a synthetic class of submissions (correct, each "
                                          "misconception, blank, half done, broken)")
    p.add_argument("course_dir", type=Path, help="folder to create")
    p.add_argument("--students", type=int, default=30, help="how many students (default 30)")
    p.add_argument("--seed", type=int, default=0, help="random seed: same seed, same class")
    p.add_argument("--assignment", action="append", help="only these chapters (default: all)")
    # imported when the command runs, so that `gradtutor --help` stays instant
    p.set_defaults(run=_lazy("gradtutor.authoring.demo:demo_class_cli"))

    p = sub.add_parser("report", help="class report (HTML with charts, plus CSV): scores, success "
                                      "per exercise, the most common misconceptions")
    p.add_argument("course_dir", type=Path, help="a graded course folder")
    p.add_argument("--out", type=Path, help="output folder (default COURSE_DIR/reports)")
    p.add_argument("--assignment", action="append",
                   help="only this assignment (repeatable; default: all)")
    # imported when the command runs, so that `gradtutor --help` stays instant
    p.set_defaults(run=_lazy("gradtutor.reports.report:report_cli"))

    p = sub.add_parser("feedback", help="write per-student feedback HTML (verdict, misconception, "
                                        "hint; never the hidden values or answers)")
    p.add_argument("course_dir", type=Path, help="a graded course folder")
    # imported when the command runs, so that `gradtutor --help` stays instant
    p.set_defaults(run=_lazy("gradtutor.reports.feedback_pages:feedback_cli"))

    p = sub.add_parser("runtime", help="write the student runtime wheel: self-checks at the shown "
                                       "and the practice values, drawings and widgets, without "
                                       "the grading variants")
    p.add_argument("out_dir", type=Path, help="folder for the wheel")
    # imported when the command runs, so that `gradtutor --help` stays instant
    p.set_defaults(run=_lazy("gradtutor.authoring.runtime:runtime_cli"))

    p = sub.add_parser("export-html", help="write an offline HTML page of an executed notebook "
                                           "with live widgets (no network needed)")
    p.add_argument("notebook", type=Path)
    p.add_argument("-o", "--out", type=Path, help="output file (default: NOTEBOOK with .html)")
    p.add_argument("--execute", action="store_true", help="execute the notebook first")
    # imported when the command runs, so that `gradtutor --help` stays instant
    p.set_defaults(run=_lazy("gradtutor.authoring.export_html:export_cli"))
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    # If rfc3987_syntax is installed (jupyter-events wants it), importing nbformat makes
    # jsonschema build its IRI grammar: 1.8 s per command. No notebook field is an IRI.
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[assignment]
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
