"""Trusted side: how the records touch files. Every write is atomic; every read of a file a
student could have placed is made beneath the course folder without following a link.

Shared by the records (results files, autograded notebooks, CSV), the grading run (submitted
notebooks) and the reports (pages): the one place where a file is written or read warily.
A SIGKILL during ``write_atomic`` leaves either the old file or the new one.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import tempfile
from json.encoder import c_make_encoder, encode_basestring, encode_basestring_ascii  # type: ignore[attr-defined]
from pathlib import Path
from typing import Any

MAX_NOTEBOOK_BYTES = 20 * 2**20  # course notebooks are ~100 kB; anything this big is a mistake
MAX_SMALL_FILE_BYTES = 4096  # timestamp.txt


class Unreadable(Exception):
    """The file is not one we can read; the message says why, for the student."""


def write_atomic(path: Path, data: bytes) -> None:
    """Write to a temporary name beside ``path``, then rename it over ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; the course folder itself is kept private
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_beneath(root: Path, parts: tuple[str, ...], cap: int) -> bytes:
    """Read ``root/parts...`` without following a link at any step; a regular file of at most
    ``cap`` bytes, or ``Unreadable`` with the reason."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts[:-1]:
            try:
                nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            except OSError as e:
                raise Unreadable(_why(e, part, folder=True)) from None
            os.close(fd)
            fd = nxt
        try:
            file_fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                              dir_fd=fd)
        except OSError as e:
            raise Unreadable(_why(e, parts[-1], folder=False)) from None
    finally:
        os.close(fd)
    try:
        if not stat.S_ISREG(os.fstat(file_fd).st_mode):
            raise Unreadable(f"{parts[-1]} is not a regular file (a pipe, device or folder).")
        chunks, size = [], 0
        while chunk := os.read(file_fd, min(1 << 20, cap + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
            if size > cap:
                raise Unreadable(f"{parts[-1]} is too large: the limit is {_size(cap)}. "
                                 "Clear large outputs and submit again.")
        return b"".join(chunks)
    finally:
        os.close(file_fd)


def _size(n: int) -> str:
    return f"{n / 2**20:.0f} MiB" if n >= 2**20 else f"{n} bytes"


def _why(e: OSError, name: str, *, folder: bool) -> str:
    if e.errno in (errno.ELOOP, errno.ENOTDIR):
        what = "folder" if folder else "file"
        return f"{name} is a symbolic link or not a {what}: the grader does not follow links."
    if e.errno == errno.ENOENT:
        return f"{name} is missing (it disappeared while grading)."
    return f"{name} could not be opened ({errno.errorcode.get(e.errno or 0, 'error')})."


def read_small(root: Path, parts: tuple[str, ...]) -> str | None:
    """A small text file beneath ``root`` (timestamp.txt), read as safely, or None."""
    try:
        return read_beneath(root, parts, MAX_SMALL_FILE_BYTES).decode("utf-8", errors="replace")
    except (Unreadable, OSError):
        return None


# --- JSON as ``json.dumps(obj, indent=1, ...)`` writes it, byte for byte, at C speed per string ----

def dumps_indented(obj: Any, *, sort_keys: bool = False, ensure_ascii: bool = True) -> str:
    """``json.dumps(obj, indent=1, sort_keys=..., ensure_ascii=...)``, the same text: with an
    indent, ``json`` encodes in pure Python, one generator per container (most of the
    recorder's cost of a results file or an autograded notebook); this walks the plain JSON
    types once and leaves each string to the C encoder. Anything else (a key not a string, a
    type ``json`` converts) goes to ``json.dumps`` itself."""
    try:
        parts: list[str] = []
        _walk(obj, "\n", parts, encode_basestring_ascii if ensure_ascii else encode_basestring,
              sort_keys)
        return "".join(parts)
    except _NotPlain:
        return json.dumps(obj, indent=1, sort_keys=sort_keys, ensure_ascii=ensure_ascii)


class _NotPlain(Exception):
    pass


def _walk(o: Any, pad: str, parts: list[str], enc: Any, sort_keys: bool) -> None:
    """``o`` onto ``parts``, its container's items at ``pad`` (a newline and the indent), in
    the order of ``json.encoder._make_iterencode``'s checks."""
    if isinstance(o, str):
        parts.append(enc(o))
    elif o is None:
        parts.append("null")
    elif o is True:
        parts.append("true")
    elif o is False:
        parts.append("false")
    elif isinstance(o, int):
        parts.append(int.__repr__(o))
    elif isinstance(o, float):
        parts.append(_float(o))
    elif isinstance(o, (list, tuple)):
        if not o:
            parts.append("[]")
            return
        inner = pad + " "
        if all(type(v) in _SCALARS for v in o):  # a notebook's lines, a tensor's row: in C
            parts.append("[" + inner + _flat(inner, enc, False)(o)[1:-1] + pad + "]")
            return
        parts.append("[")
        for i, v in enumerate(o):
            parts.append(inner if i == 0 else "," + inner)
            _walk(v, inner, parts, enc, sort_keys)
        parts.append(pad + "]")
    elif isinstance(o, dict):
        if not o:
            parts.append("{}")
            return
        if not all(type(k) is str for k in o):
            raise _NotPlain
        inner = pad + " "
        if all(type(v) in _SCALARS for v in o.values()):  # in C
            parts.append("{" + inner + _flat(inner, enc, sort_keys)(o)[1:-1] + pad + "}")
            return
        parts.append("{")
        for i, k in enumerate(sorted(o) if sort_keys else o):
            head, v = (inner if i == 0 else "," + inner) + enc(k) + ": ", o[k]
            kind = type(v)  # the plain scalars here, without a call each
            if kind is str:
                parts.append(head + enc(v))
            elif kind is float:
                parts.append(head + _float(v))
            elif kind is int:
                parts.append(head + int.__repr__(v))
            elif v is None:
                parts.append(head + "null")
            else:
                parts.append(head)
                _walk(v, inner, parts, enc, sort_keys)
        parts.append(pad + "}")
    else:
        raise _NotPlain


_SCALARS = frozenset({str, int, float, bool, type(None)})
_FLAT: dict[tuple[str, Any, bool], Any] = {}


def _flat(inner: str, enc: Any, sort_keys: bool) -> Any:
    """The C encoder of a container of scalars whose items stand at ``inner``: its item
    separator is the comma, newline and indent (the brackets' lines are the caller's)."""
    key = (inner, enc, sort_keys)
    if key not in _FLAT:
        if c_make_encoder is None:  # no C accelerator: json's own, at the same separators
            _FLAT[key] = json.JSONEncoder(ensure_ascii=enc is encode_basestring_ascii,
                                          sort_keys=sort_keys, separators=("," + inner, ": ")).encode
        else:  # json.JSONEncoder.encode builds this on every call
            c = c_make_encoder({}, _not_plain, enc, None, ": ", "," + inner, sort_keys, False, True)
            _FLAT[key] = lambda o: "".join(c(o, 0))
    return _FLAT[key]


def _not_plain(o: Any) -> Any:
    raise _NotPlain


def _float(o: float) -> str:
    if o != o:
        return "NaN"
    if o == float("inf"):
        return "Infinity"
    if o == float("-inf"):
        return "-Infinity"
    return float.__repr__(o)
