"""Trusted side: every CSV the project writes goes through here, so no text cell reaches a
spreadsheet as a formula.

A spreadsheet (Excel, LibreOffice, Google Sheets) runs a cell that begins with ``=``, ``+``,
``-`` or ``@`` as a formula, and a leading tab or carriage return hides such a start (OWASP,
"CSV Injection"). Student ids, names, comments and exercise ids are text from outside; each
text cell that begins with one of those characters is written with a leading ``'``, which
spreadsheets show as text. Numbers are written as numbers (``-0.5`` stays a number): only
``str`` values are escaped.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from gradtutor.records.files import write_atomic

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def cell(value: Any) -> Any:
    """A text value that a spreadsheet would run as a formula gets a leading ``'``."""
    if isinstance(value, str) and value[:1] in FORMULA_START:
        return "'" + value
    return value


def row(values: Iterable[Any]) -> list[Any]:
    return [cell(v) for v in values]


def text(header: Sequence[Any], rows: Iterable[Iterable[Any]]) -> str:
    """The CSV text of ``header`` and ``rows``, every text cell escaped."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")  # RFC 4180; a CR or LF in a cell is quoted
    w.writerow(row(header))
    for r in rows:
        w.writerow(row(r))
    return buf.getvalue()


def write(path: Path, header: Sequence[Any], rows: Iterable[Iterable[Any]]) -> Path:
    """Write the CSV atomically (a temporary name, then a rename)."""
    write_atomic(path, text(header, rows).encode())
    return path
