"""Trusted side: the term's settings: the late policy and each assignment's due date.

    gradtutor late-policy show | set POLICY [--grace DURATION]   (the course's nbgrader_config.py)
    gradtutor due-date show | set ASSIGNMENT WHEN | clear ASSIGNMENT   (nbgrader's gradebook)

The late policy is nbgrader's own setting: ``LateSubmissionPlugin.penalty_method`` ("none":
late work is graded as it is, and marked late; "zero": it scores 0) or, for a percentage per
started day late or a grace period, gradtutor's plugin (``records.nbgrader_hooks.
GradtutorLatePolicy``), configured as nbgrader documents custom plugins
(``AssignLatePenalties.plugin_class``). It is written as one marked block at the end of the
course folder's ``nbgrader_config.py``, which ``gradtutor grade`` reads (after the working
directory's) and ``nbgrader`` reads when it runs in the course folder: the penalty the gradebook
keeps, and so the formgrader, the report and the export show, is the one this block says.

The due date is nbgrader's ``assignment.duedate`` (naive UTC in the gradebook); a student's
lateness is nbgrader's ``total_seconds_late`` (their timestamp.txt minus the due date and any
extension). Neither is a secret: both are written into the released notebook's first cell
(``records.nbgrader_hooks.ShowDueDate``).
"""

from __future__ import annotations

import math
import os
import re
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from gradtutor.course import Course
from gradtutor.records import gradebook
from gradtutor.records.files import write_atomic

PLUGIN = "gradtutor.records.nbgrader_hooks.GradtutorLatePolicy"
STOCK_PLUGIN = "nbgrader.plugins.LateSubmissionPlugin"
BEGIN = "# --- gradtutor late policy (written by `gradtutor late-policy set`; change it with that) ---"
END = "# --- end of the gradtutor late policy ---"
DAY = 86400.0


@dataclass(frozen=True)
class LatePolicy:
    """How a late submission is scored. ``method``: "none", "zero", "percent" (``percent_per_day``
    of the score off per started day late, at most all of it) or "custom" (``plugin``, a class
    the course configured by hand). Within ``grace_hours`` of the due date nothing is taken."""

    method: str = "none"
    percent_per_day: float = 0.0
    grace_hours: float = 0.0
    plugin: str = ""

    @property
    def spec(self) -> str:
        """What ``parse_policy`` reads back: "none", "zero", "10%/day", "10%/day grace 2h"."""
        if self.method == "custom":
            return f"custom {self.plugin}"
        head = f"{self.percent_per_day:g}%/day" if self.method == "percent" else self.method
        grace = self.grace_hours and self.method != "none"
        return head + (f" grace {_hours_text(self.grace_hours)}" if grace else "")

    def describe(self) -> str:
        """The policy in a sentence, for the instructor and the student alike."""
        if self.method == "custom":
            return f"Late work is scored by the course's own plugin ({self.plugin})."
        if self.method == "none":
            return "Late work is graded as it is, with no penalty (it is marked late)."
        what = ("a late submission scores 0" if self.method == "zero" else
                f"{self.percent_per_day:g}% of the score is taken off per started day late "
                f"(at most all of it)")
        grace = (f", after a grace period of {duration_text(self.grace_hours * 3600)} (work at most that "
                 "late counts as on time)") if self.grace_hours else ""
        return f"Late work: {what}{grace}."

    def penalty(self, score: float, seconds_late: float) -> float | None:
        """The points taken off ``score`` (None: none, as nbgrader's stock plugin says it)."""
        if seconds_late <= 0 or seconds_late <= self.grace_hours * 3600 or self.method in ("none", "custom"):
            return None
        if self.method == "zero":
            return score
        days = math.ceil(seconds_late / DAY)
        return round(score * min(1.0, self.percent_per_day * days / 100), 6)


class PolicyError(ValueError):
    """A policy or a date the command cannot read; the message says what to write."""


_PERCENT = re.compile(r"(\d+(?:\.\d+)?)%(?:/d(?:ay)?)?")
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(m|min|h|d)?")
_UNIT_HOURS = {"m": 1 / 60, "min": 1 / 60, "h": 1.0, None: 1.0, "d": 24.0}
POLICY_HELP = ("none (no penalty, late work is marked late), zero (a late submission scores 0), "
               "or N% (N% of the score off per started day late, e.g. 10%); add 'grace 2h' "
               "for a grace period (m, h or d)")


def parse_duration(text: str) -> float:
    """Hours, from "90m", "2h", "1.5", "1d" (a bare number is hours)."""
    found = _DURATION.fullmatch(text.strip().lower())
    if not found:
        raise PolicyError(f"{text!r} is not a duration: write e.g. 30m, 2h or 1d")
    return float(found.group(1)) * _UNIT_HOURS[found.group(2)]


def parse_policy(text: str) -> LatePolicy:
    """A policy from its words: "none", "zero", "10%" or "10%/day", each with an optional
    "grace 2h" ("grace=2h" too)."""
    words = text.lower().replace(",", " ").replace("=", " ").split()
    method, percent, grace = "", 0.0, 0.0
    i = 0
    while i < len(words):
        word = words[i]
        if word == "grace" and i + 1 < len(words):
            grace, i = parse_duration(words[i + 1]), i + 2
            continue
        if word in ("none", "zero") and not method:
            method = word
        elif (found := _PERCENT.fullmatch(word)) and not method:
            method, percent = "percent", float(found.group(1))
            if not 0 < percent <= 100:
                raise PolicyError(f"{word}: the percentage per day must be above 0 and at most 100")
        else:
            raise PolicyError(f"cannot read {text!r} as a late policy: write {POLICY_HELP}")
        i += 1
    if not method:
        raise PolicyError(f"{text!r} names no policy: write {POLICY_HELP}")
    return LatePolicy(method, percent, 0.0 if method == "none" else grace)


def _hours_text(hours: float) -> str:
    if hours >= 24 and (hours / 24).is_integer():
        return f"{hours / 24:g}d"
    return f"{hours:g}h" if hours >= 1 else f"{hours * 60:g}m"


# --- the course's nbgrader_config.py ----------------------------------------------------------

def config_path(course: Course) -> Path:
    return course.root / "nbgrader_config.py"


def config_block(policy: LatePolicy) -> str:
    """The lines of nbgrader configuration that say ``policy`` (a stock policy names nbgrader's
    own plugin, so that an earlier setting of another plugin does not stay in force)."""
    lines = [BEGIN, f"# {policy.describe()}",
             f"c.LateSubmissionPlugin.penalty_method = {'zero' if policy.method == 'zero' else 'none'!r}"]
    if policy.method == "percent" or policy.grace_hours:
        lines += [f"c.AssignLatePenalties.plugin_class = {PLUGIN!r}",
                  f"c.GradtutorLatePolicy.percent_per_day = {policy.percent_per_day!r}",
                  f"c.GradtutorLatePolicy.grace_hours = {policy.grace_hours!r}"]
    else:
        lines.append(f"c.AssignLatePenalties.plugin_class = {STOCK_PLUGIN!r}")
    return "\n".join([*lines, END]) + "\n"


def write_policy(course: Course, policy: LatePolicy) -> Path:
    """Replace the policy block of the course's nbgrader_config.py (add it at the end, or make
    the file), leaving every other line as it was."""
    path = config_path(course)
    text = path.read_text() if path.is_file() else "c = get_config()  # noqa: F821 - provided by nbgrader\n"
    if BEGIN in text and END in text:
        text = text[:text.index(BEGIN)] + text[text.index(END) + len(END):].lstrip("\n")
    text = text.rstrip("\n") + "\n\n" + config_block(policy)
    write_atomic(path, text.encode())
    return path


def read_policy(course: Course) -> LatePolicy:
    """The policy in force for ``gradtutor grade`` in this course (whoever wrote the setting)."""
    return policy_from_config(gradebook.nbgrader_config(course))


def policy_from_config(config: Any) -> LatePolicy:
    """The policy a traitlets Config says (nbgrader's, as loaded for a course)."""
    plugin = config.AssignLatePenalties.get("plugin_class", STOCK_PLUGIN)
    plugin = plugin if isinstance(plugin, str) else f"{plugin.__module__}.{plugin.__qualname__}"
    zero = config.LateSubmissionPlugin.get("penalty_method", "none") == "zero"
    if plugin == PLUGIN:
        ours = config.GradtutorLatePolicy
        percent, grace = float(ours.get("percent_per_day", 0.0)), float(ours.get("grace_hours", 0.0))
        method = "zero" if zero else "percent" if percent else "none"
        return LatePolicy(method, percent if method == "percent" else 0.0,
                          grace if method != "none" else 0.0)
    if plugin in (STOCK_PLUGIN, "nbgrader.plugins.latesubmission.LateSubmissionPlugin"):
        return LatePolicy("zero" if zero else "none")
    return LatePolicy("custom", plugin=plugin)


# --- due dates ----------------------------------------------------------------------------------

_OFFSET = re.compile(r"(.*\S)\s*(Z|UTC|[+-]\d{2}:?\d{2})", re.IGNORECASE)


def parse_when(text: str) -> datetime:
    """A date and time (aware, UTC); without a zone it is UTC (nbgrader's rule).
    "2026-03-01 17:00", "2026-03-01T17:00+01:00", "2026-03-01 17:00 +01:00",
    "2026-03-01 17:00 Europe/Berlin". An unknown zone is refused, never taken for UTC."""
    text = " ".join(text.split())
    zone: Any = UTC
    if found := _OFFSET.fullmatch(text):
        offset = found.group(2).upper()
        if offset in ("Z", "UTC"):
            offset = "+00:00"
        elif ":" not in offset:
            offset = f"{offset[:3]}:{offset[3:]}"
        text = f"{found.group(1)}{offset}"
    elif " " in text and "/" in text.rsplit(" ", 1)[1]:
        text, name = text.rsplit(" ", 1)
        try:
            zone = ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            raise PolicyError(f"{name!r} is not a time zone: write e.g. Europe/Berlin, or an "
                              "offset such as +01:00") from None
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise PolicyError(f"{text!r} is not a date and time: write e.g. 2026-03-01 17:00 (UTC), "
                          "2026-03-01 17:00 +01:00 or 2026-03-01 17:00 Europe/Berlin") from None
    return (when if when.tzinfo else when.replace(tzinfo=zone)).astimezone(UTC)


def when_text(when: datetime | None) -> str:
    return "not set" if when is None else f"{when.astimezone(UTC):%Y-%m-%d %H:%M} UTC"


def duration_text(seconds: float) -> str:
    """How late, in words a student reads: "2 d 3 h 5 min", "40 min", "under a minute"."""
    minutes = round(seconds / 60)
    if minutes < 1:
        return "under a minute" if seconds > 0 else "0 min"
    days, rest = divmod(minutes, 24 * 60)
    hours, mins = divmod(rest, 60)
    parts = [f"{days} d"] * bool(days) + [f"{hours} h"] * bool(hours) + [f"{mins} min"] * bool(mins)
    return " ".join(parts)


# --- the commands ---------------------------------------------------------------------------------

def late_policy_cli(*, action: str, course_dir: Path, policy: list[str] | None = None,
                    grace: str | None = None) -> int:
    course = Course.at(course_dir)
    if action == "set":
        words = " ".join(policy or [])
        try:
            chosen = parse_policy(f"{words} grace {grace}" if grace else words)
        except PolicyError as e:
            print(f"gradtutor late-policy: {e}", file=sys.stderr)
            return 2
        path = write_policy(course, chosen)
        print(f"Wrote the late policy into {path}: {chosen.spec}.", file=sys.stderr)
        in_force = read_policy(course)
        if in_force != chosen:  # a setting loaded after this file (none is, by nbgrader's order)
            print(f"WARNING: what is in force is {in_force.spec}, not {chosen.spec}.", file=sys.stderr)
            return 1
        print("Submissions graded from now on get it; run `gradtutor grade --force` (or "
              "`gradtutor regrade`) to apply it to those graded already.", file=sys.stderr)
    current = read_policy(course)
    print(f"late policy: {current.spec}\n{current.describe()}")
    return 0


def due_date_cli(*, action: str, course_dir: Path, assignment: str | None = None,
                 when: list[str] | None = None) -> int:
    course = Course.at(course_dir)
    if action in ("set", "clear"):
        known = set(course.source_assignments()) | set(gradebook.assignment_names(course)
                                                       if gradebook.exists(course) else ())
        if assignment not in known:
            print(f"gradtutor due-date: {course.root} has no assignment {assignment!r} (known: "
                  f"{', '.join(sorted(known)) or 'none'}).", file=sys.stderr)
            return 2
        try:
            date = parse_when(" ".join(when)) if action == "set" and when else None
        except PolicyError as e:
            print(f"gradtutor due-date: {e}", file=sys.stderr)
            return 2
        course_id = str(gradebook.nbgrader_config(course).CourseDirectory.get("course_id", "default_course"))
        if not gradebook.exists(course):  # nbgrader makes a new gradebook with `alembic`, from PATH
            os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
        gradebook.set_due_date(course, str(assignment), date, course_id)
        print(f"{assignment}: due {when_text(date)}. Generate and release it again (nbgrader "
              "generate_assignment --force, release_assignment) so the students' notebook shows it.",
              file=sys.stderr)
    for name, due in gradebook.due_dates(course).items():
        print(f"{name:<24} {when_text(due)}")
    return 0
