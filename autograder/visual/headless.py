"""Student side: headless mode, for the grading sandbox.

A grading child runs a lesson's demo cells only for what they leave in the namespace: nobody
sees its figures or widgets, and drawing them costs 0.1 to 1 s a cell, most of a chapter's
run time. The zygote turns this on; drawing functions then return None at once.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

ENABLED = False


def skipped_when_headless(fn: F) -> F:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return None if ENABLED else fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]
