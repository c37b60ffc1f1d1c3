"""Trusted side: the one Jinja2 environment every report page is rendered through.

Templates live in ``gradtutor/reports/templates/``. Autoescape is on and an undefined name is an
error, so every value a page shows (student ids, messages, misconception names, paths: all of
it possibly hostile) is escaped unless a template says otherwise, and a typo fails loudly.
"""

from __future__ import annotations

import html
from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from autograder.feedback import as_html


def _escaped(value: Any) -> Any:
    """What ``{{ value }}`` writes: markup (a macro's output) as it is, anything else escaped.

    With ``html.escape``'s entities (``&#x27;``, ``&quot;``) rather than MarkupSafe's
    (``&#39;``, ``&#34;``): the pages have always been written so, and what reads them (the
    tests, a diff of two reports) finds the text as before. Escaping stays by default: the
    autoescape that follows leaves a ``Markup`` alone."""
    return value if hasattr(value, "__html__") else Markup(html.escape(str(value)))


@cache
def environment() -> Environment:
    env = Environment(loader=PackageLoader("gradtutor.reports", "templates"), autoescape=True,
                      undefined=StrictUndefined, finalize=_escaped, trim_blocks=True,
                      lstrip_blocks=True, keep_trailing_newline=False)
    # feedback words as the notebook shows them: `code` set as code, numbers to six digits
    env.filters["feedback"] = lambda text: Markup(as_html(str(text)))
    return env


def render(name: str, **context: Any) -> str:
    """The template ``templates/<name>`` filled with ``context``."""
    return environment().get_template(name).render(**context)
