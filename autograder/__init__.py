"""Student side: gradtutor's autograder, the self-checks, grading, drawings and widgets of the
autograd course.

Students use ``check`` (instant feedback) and ``draw_graph``; grade cells use ``grade``.
Names are loaded on first use so that ``from autograder import check`` stays fast.
"""

from importlib import import_module
from typing import Any

_EXPORTS = {
    "check": "autograder.selfcheck",
    "grade": "autograder.selfcheck",
    "review": "autograder.selfcheck",
    "Feedback": "autograder.feedback",
    "draw_graph": "autograder.visual.graph",
    "describe_graph": "autograder.visual.graph",
    "describe_plot": "autograder.visual.graph",
    "tangent_explorer": "autograder.visual.widgets",
    "chain_rule_stepper": "autograder.visual.widgets",
    "kink_explorer": "autograder.visual.widgets",
    "accumulation_stepper": "autograder.visual.widgets",
    "vjp_explorer": "autograder.visual.widgets",
    "descent_stepper": "autograder.visual.widgets",
    "meta_gradient_explorer": "autograder.visual.widgets",
    "clip_explorer": "autograder.visual.widgets",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'autograder' has no attribute {name!r}")
