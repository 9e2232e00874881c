"""Landlock (Linux 5.13+) through ``ctypes``: build a ruleset, apply it in a command's child.

:func:`abi_version` says what the kernel supports (0: none). :func:`build_ruleset` makes a
ruleset file descriptor in the parent: read/execute beneath the ``readable`` paths, every
file right beneath the ``writable`` ones, and (ABI 4+) no TCP bind/connect unless
``network``; (ABI 6+) signals and abstract unix sockets are scoped to the sandbox.
:func:`restrict_self` is what the child calls between fork and exec (``preexec_fn``): it
sets ``no_new_privs`` and enforces the ruleset on itself and everything it starts.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Iterable

__all__ = ["abi_version", "build_ruleset", "drop_capabilities", "restrict_self"]

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446  # the same on every arch
_VERSION_FLAG = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
#: Filesystem rights known to each ABI (1: 13 rights, 2: +REFER, 3: +TRUNCATE, 5: +IOCTL_DEV).
_FS_BITS = {1: 13, 2: 14, 3: 15, 4: 15, 5: 16}
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1
_SCOPE_ABSTRACT_UNIX, _SCOPE_SIGNAL = 1 << 0, 1 << 1


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:  # pragma: no cover - a libc without symbols
        return None


_LIBC = _libc()


def abi_version() -> int:
    """The Landlock ABI version of this kernel; 0 when Landlock is absent or disabled."""
    if _LIBC is None:
        return 0
    version = _LIBC.syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), _VERSION_FLAG)
    return max(int(version), 0)


def build_ruleset(readable: Iterable[str], writable: Iterable[str], *, network: bool) -> int:
    """A ruleset fd (close it after the child started); OSError when the kernel refuses.

    Paths that do not exist are skipped.
    """
    abi = abi_version()
    if _LIBC is None or abi < 1:
        raise OSError("Landlock is not available on this kernel")
    all_fs = (1 << _FS_BITS.get(abi, 16)) - 1
    attr = _RulesetAttr(all_fs, 0, 0)
    size = ctypes.sizeof(ctypes.c_uint64)
    if abi >= 4 and not network:
        attr.handled_access_net = _NET_BIND_TCP | _NET_CONNECT_TCP
        size = 2 * ctypes.sizeof(ctypes.c_uint64)
    if abi >= 6:
        attr.scoped = _SCOPE_SIGNAL | (0 if network else _SCOPE_ABSTRACT_UNIX)
        size = ctypes.sizeof(_RulesetAttr)
    fd = int(_LIBC.syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), 0))
    if fd < 0:
        raise _errno_error("landlock_create_ruleset")
    try:
        read = _EXECUTE | _READ_FILE | _READ_DIR
        for path in readable:
            _allow(fd, path, read)
        for path in writable:
            _allow(fd, path, all_fs)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _allow(ruleset: int, path: str, access: int) -> None:
    try:
        target = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return
    try:
        if not os.path.isdir(path):
            access &= _EXECUTE | _WRITE_FILE | _READ_FILE | (1 << 14) | (1 << 15)
        rule = _PathBeneathAttr(access, target)
        assert _LIBC is not None
        if _LIBC.syscall(_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0) != 0:
            raise _errno_error(f"landlock_add_rule({path})")
    finally:
        os.close(target)


def restrict_self(ruleset: int) -> None:
    """(in the child) Enforce ``ruleset`` on this process; raise OSError if that fails."""
    assert _LIBC is not None
    if _LIBC.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise _errno_error("prctl(PR_SET_NO_NEW_PRIVS)")
    if _LIBC.syscall(_RESTRICT_SELF, ruleset, 0) != 0:
        raise _errno_error("landlock_restrict_self")


def _errno_error(what: str) -> OSError:
    code = ctypes.get_errno()
    return OSError(code, f"{what}: {os.strerror(code)}")


_PR_CAPBSET_DROP = 24
_CAP_LAST = 63


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def drop_capabilities() -> None:
    """(in the child) Give up every capability, also for what it executes (a root agent's
    command must not keep ``CAP_SYS_PTRACE`` and friends: Landlock lets those through)."""
    assert _LIBC is not None
    for cap in range(_CAP_LAST + 1):
        _LIBC.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)  # EINVAL past the kernel's last cap
    header = _CapHeader(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3
    data = (_CapData * 2)()
    if _LIBC.capset(ctypes.byref(header), data) != 0:
        raise _errno_error("capset")
