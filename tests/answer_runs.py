"""An answer cell run as grading runs it, for the tests of exercise units
(tests/test_fixits.py, tests/test_ch10_capstone.py, tests/test_ch11_engine.py,
tests/test_ch11_backprop.py)."""

from __future__ import annotations

from autograder.answers import read_answer
from autograder.judge import judge, quietly
from gradtutor.key import registry
from gradtutor.key.answer_key import run_at, spec

LESSON_IMPORTS = "import torch\nimport torch.nn.functional as F"


def run_answer(eid: str, source: str, namespace: dict | None = None, *,
               imports: str = LESSON_IMPORTS):
    """The answer cell run as grading runs it: shown values, then every hidden variant."""
    ex = registry.get(eid)
    ns: dict = dict(namespace or {})
    exec(imports, ns)
    exec(ex.setup_code(ex.params), ns)
    quietly(exec, source, ns)
    answers = [read_answer(spec(ex), ns)] + [run_at(ex, ns, source, p) for p in ex.hidden]
    return judge(eid, answers)
