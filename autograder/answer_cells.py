"""Student side: in a kernel, each answer cell belongs to its exercise, whatever ran in between.

Exercises of one chapter reuse names: setups bind ``x0`` as a float, then as a list; two
exercises may both ask for ``grads``; a demo cell or another answer cell may bind any name.
Renaming can never rule that out (a student's own cells bind what they like), so the kernel
binds each answer cell to its exercise instead, by the cell's id (``<exercise id>-answer``,
which JupyterLab sends with every execution):

* before the answer cell runs, the exercise's setup runs again (its shown values), so going
  back to an earlier exercise finds its own inputs, not a later exercise's (``pre_run_cell``);
* after it ran, the value it bound to the answer name is kept as that exercise's answer, with
  the cell's source (``post_run_cell``; ``ran``), so the self-check and ``review()`` judge each
  exercise by its own cell even where a later cell bound the same name.

Where no cell id arrives (another front end, a script), nothing changes: the setup cell must be
run by hand, and the answer is found by name.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

ANSWER_CELL_SUFFIX = "-answer"  # nbgrader cell ids of answer cells: "<exercise id>-answer"
SETUP_HEADER = "# Setup (read-only)."  # the first line of every setup cell the build writes


@dataclass(frozen=True)
class Ran:
    """An exercise's answer cell as it last ran without an error in this kernel."""

    source: str
    value: Any  # what it bound to the answer name (held: its identity is the exercise's)


_RAN: dict[str, Ran] = {}


def ran(exercise_id: str) -> Ran | None:
    return _RAN.get(exercise_id)


def others(exercise_id: str) -> list[Ran]:
    """The answer cells of the other exercises that ran, where they differ from this one's."""
    own = _RAN.get(exercise_id)
    return [r for e, r in _RAN.items() if e != exercise_id and (own is None or r.source != own.source)]


def exercise_of(cell_id: Any) -> str | None:
    if isinstance(cell_id, str) and cell_id.endswith(ANSWER_CELL_SUFFIX):
        return cell_id[: -len(ANSWER_CELL_SUFFIX)] or None
    return None


class AnswerCellHook:
    """IPython's pre- and post-run events for answer cells (known by their cell id).
    ``shown(exercise_id)`` gives (answer name, setup code at the shown values); it is asked only
    for answer cells, so importing the self-check stays instant."""

    def __init__(self, shown: Callable[[str], tuple[str, str]]) -> None:
        self.shown = shown
        self.running: tuple[str, str] | None = None  # (exercise id, answer name) of this cell

    def _shown(self, exercise_id: str) -> tuple[str, str] | None:
        try:
            answer, setup = self.shown(exercise_id)
        except Exception:  # an unknown id, or check data that cannot load: run the cell as it is
            return None
        return (answer, setup) if isinstance(answer, str) and isinstance(setup, str) else None

    def pre_run_cell(self, info: Any, user_ns: dict[str, Any]) -> None:
        self.running = None
        exercise_id = exercise_of(getattr(info, "cell_id", None))
        shown = self._shown(exercise_id) if exercise_id else None
        if shown is None:
            return
        self.running = (exercise_id, shown[0])
        # the setup as its (read-only) cell holds it; one that fails leaves the names as they are
        with contextlib.suppress(Exception), contextlib.redirect_stdout(io.StringIO()):
            exec(shown[1], user_ns)

    def post_run_cell(self, result: Any, user_ns: dict[str, Any]) -> None:
        running, self.running = self.running, None
        if running is None or not getattr(result, "success", False):
            return
        exercise_id, answer = running
        source = getattr(getattr(result, "info", None), "raw_cell", None)
        if isinstance(source, str) and answer in user_ns:
            _RAN[exercise_id] = Ran(source, user_ns[answer])


def install(shell: Any, shown: Callable[[str], tuple[str, str]]) -> AnswerCellHook | None:
    """Register the hook once per kernel (before any other of the runtime's, so that a setup
    runs as its own cell would, outside the by-hand guard); returns it."""
    if shell is None or not hasattr(shell, "events"):
        return None
    for hook in getattr(shell, "_gradtutor_answer_cells", ()):  # a re-import must not stack hooks
        return hook
    hook = AnswerCellHook(shown)
    shell.events.register("pre_run_cell", lambda info: hook.pre_run_cell(info, shell.user_ns))
    shell.events.register("post_run_cell", lambda result: hook.post_run_cell(result, shell.user_ns))
    shell._gradtutor_answer_cells = (hook,)
    return hook
