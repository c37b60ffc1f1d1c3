"""Student side: the kernel's walls around one submission, one class of channel each.

A PID namespace per child (the zygote makes the child its init, so one SIGKILL from the parent
ends every process of the submission); network, IPC and UTS namespaces of its own (no loopback
that is up, no shared SysV or POSIX IPC, no abstract Unix socket of anyone else); every mount
read-only but the child's private scratch; ``/proc`` of its own namespace only;
``no_new_privs``; and a seccomp filter under which creating a user namespace fails with EPERM.
Built with ctypes: nothing here is installed.
"""

from __future__ import annotations

import ctypes
import os
import platform
import struct
from typing import Any

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000

_PR_SET_SECCOMP, _PR_SET_NO_NEW_PRIVS, _SECCOMP_MODE_FILTER = 22, 38, 2
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 2, 4, 8
_MOUNT_ATTR_RDONLY, _MOUNT_ATTR_NOSUID = 0x1, 0x2
_AT_FDCWD, _AT_RECURSIVE = -100, 0x8000
_SYS_MOUNT_SETATTR = 442  # the same number on every architecture (Linux >= 5.12)

# per architecture: (AUDIT_ARCH_*, clone, unshare, clone3)
_ARCH = {"x86_64": (0xC000003E, 56, 272, 435), "aarch64": (0xC00000B7, 220, 97, 435)}
_EPERM, _ENOSYS = 1, 38


def _libc() -> Any:
    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def unshare(flags: int) -> None:
    _check(_libc().unshare(flags), f"unshare({flags:#x})")


def setns(fd: int, flags: int) -> None:
    _check(_libc().setns(fd, flags), "setns")


def fork_as_init(own_pid_ns: int) -> int:
    """``os.fork()`` into a new PID namespace whose init (pid 1) is the child; the caller's
    next children go back to its own namespace (``own_pid_ns``: an fd of /proc/self/ns/pid)."""
    unshare(CLONE_NEWPID)
    pid = -1
    try:
        pid = os.fork()
    finally:
        if pid != 0:  # in the caller, fork or not: unshare again needs its own namespace back
            setns(own_pid_ns, CLONE_NEWPID)
    return pid


def own_namespaces() -> None:
    """Mount, network, IPC and UTS namespaces of this process's own (it is already init of its
    PID namespace): only a loopback that is down, SysV and POSIX IPC nobody else sees."""
    unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS)


def mount_proc(mount: Any) -> None:
    """/proc of this PID namespace: no other process, no host command line, is listed."""
    mount("proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, None)


def mount_mqueue(mount: Any) -> None:
    """A host's /dev/mqueue shows its queues: this IPC namespace's own (empty) instance."""
    if os.path.ismount("/dev/mqueue"):
        mount("mqueue", "/dev/mqueue", "mqueue", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, None)


class _MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]


def _setattr(path: str, flags: int, attr: _MountAttr) -> None:
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    done = libc.syscall(ctypes.c_long(_SYS_MOUNT_SETATTR), ctypes.c_int(_AT_FDCWD), path.encode(),
                        ctypes.c_uint(flags), ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)))
    _check(done, f"mount_setattr {path}")


def read_only_except(writable: list[str]) -> None:
    """Every mount of this namespace read-only and nosuid, in one step (every world-writable
    folder of the host included, whatever its name); then ``writable`` (the child's own tmpfs
    mounts) writable again."""
    _setattr("/", _AT_RECURSIVE, _MountAttr(attr_set=_MOUNT_ATTR_RDONLY | _MOUNT_ATTR_NOSUID))
    for path in writable:
        _setattr(path, 0, _MountAttr(attr_clr=_MOUNT_ATTR_RDONLY))


def seccomp_program() -> bytes:
    """A classic BPF filter: creating a user namespace (clone or unshare with CLONE_NEWUSER)
    fails with EPERM; clone3, whose flags a filter cannot read, with ENOSYS (libc falls back to
    clone); a system call of another ABI (i386, x32) with EPERM; everything else is allowed."""
    machine = platform.machine()
    if machine not in _ARCH:
        raise OSError(_ENOSYS, f"no seccomp filter for {machine}")
    audit, clone, unshare_nr, clone3 = _ARCH[machine]
    ld, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06
    allow, errno = 0x7FFF0000, 0x00050000
    x32 = 0x40000000 if machine == "x86_64" else 0xFFFFFFFF
    program = [
        (ld, 0, 0, 4),  # arch
        (jeq, 1, 0, audit),
        (ret, 0, 0, errno | _EPERM),
        (ld, 0, 0, 0),  # syscall number
        (jge, 0, 1, x32),
        (ret, 0, 0, errno | _EPERM),
        (jeq, 0, 1, clone3),
        (ret, 0, 0, errno | _ENOSYS),
        (jeq, 1, 0, clone),
        (jeq, 0, 3, unshare_nr),
        (ld, 0, 0, 16),  # the flags: first argument, low 32 bits
        (jset, 0, 1, CLONE_NEWUSER),
        (ret, 0, 0, errno | _EPERM),
        (ret, 0, 0, allow),
    ]
    return b"".join(struct.pack("=HBBI", *insn) for insn in program)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def lock_down() -> None:
    """``no_new_privs`` (no set-uid program gives anything back), then the seccomp filter."""
    libc = _libc()
    _check(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
    program = seccomp_program()
    buffer = ctypes.create_string_buffer(program, len(program))
    prog = _SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    _check(libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0),
           "prctl(PR_SET_SECCOMP)")
