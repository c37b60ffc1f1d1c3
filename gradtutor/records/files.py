"""Trusted side: how the records touch files. Every write is atomic; every read of a file a
student could have placed is made beneath the course folder without following a link.

Shared by the records (results files, autograded notebooks, CSV), the grading run (submitted
notebooks) and the reports (pages): the one place where a file is written or read warily.
A SIGKILL during ``write_atomic`` leaves either the old file or the new one.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path

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
