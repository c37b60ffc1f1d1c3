"""Trusted side: ``gradtutor grade`` starts here: the zygote first, then everything heavy.

The zygote needs seconds to import torch, IPython and the runtime and to warm them up; this
process needs seconds to import torch (the judge) and nbgrader (the gradebook) and to load the
references. Started before any of that, the zygote warms up while the parent loads, reads the
notebooks and the references, and the first child is forked as soon as both are ready. This
module imports only what starting the zygote needs; ``gradtutor.grading.batch`` does the rest.
"""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from autograder.sandbox.limits import Limits
from gradtutor.grading import forkserver
from gradtutor.grading.profile import Profile


def grade_cli(*, course_dir: Path, gather: bool = False, profile: bool = False,
              student_python: Path | None = None, **options: Any) -> int:
    if gather:  # no zygote, no judge: results files into the gradebook
        from gradtutor.grading.gather import gather_cli  # here: a grading run never loads it

        return gather_cli(course_dir=course_dir, **options)
    prof = Profile(enabled=profile)
    prof.add("start: imports", prof.since_start())
    sandbox = _early_zygote(course_dir, student_python, prof)
    with prof.step("start: judge's imports"), _uncollected():
        # torch, nbformat and nbgrader: seconds to import, while the zygote warms up
        from gradtutor.grading import batch

    return batch.grade_cli(course_dir=course_dir, gather=gather, profile=prof,
                           student_python=student_python, sandbox=sandbox, **options)


@contextlib.contextmanager
def _uncollected() -> Iterator[None]:
    """No garbage collection while modules load: their objects live for good, and the
    collector's passes over them are a tenth of the time (measured on the zygote's imports)."""
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _early_zygote(course_dir: Path, student_python: Path | None, prof: Profile) -> Any:
    """The zygote, started now where grading can go ahead (as root, in a course with
    submissions); None otherwise, and ``batch`` says why in its own words."""
    if os.geteuid() != 0 or not (Path(course_dir) / "submitted").is_dir():
        return None
    try:
        with prof.step("start: zygote spawned"):
            sandbox = forkserver.Sandbox(limits=Limits(), course_dir=Path(course_dir), imports=None,
                                         python=forkserver.interpreter(student_python), profile=prof,
                                         walks_told=True)  # batch names the chapters' walks
    except (OSError, forkserver.SandboxError):
        return None
    prof.mark("zygote spawned")
    return sandbox
