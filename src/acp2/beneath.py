"""Open a path below a root directory without ever following a symlink (issue 10, §6).

A path check followed by an ``open`` of the same path can be raced: between the two, a
directory inside the workspace can be swapped for a symlink that leads out. So every
tool opens files here, relative to a descriptor of the root, with a symlink-free
relative path (the sandbox resolved it first). Any symlink met while opening means the
tree changed under us, and the open fails instead of following it.

On Linux 5.6+ this is one ``openat2`` call with ``RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
RESOLVE_NO_MAGICLINKS``. Elsewhere (or with :data:`USE_OPENAT2` false) the path is walked
one component at a time with ``O_NOFOLLOW`` and ``dir_fd``. Either way the descriptor is
what the caller checks afterwards (``fstat``), never the path.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
import sys
from collections.abc import Callable

from acp2.errors import BeneathError

__all__ = ["USE_OPENAT2", "BeneathError", "open_beneath", "openat2_available"]

#: Use ``openat2`` when the kernel has it; tests set this false to force the walk.
USE_OPENAT2 = True

_SYS_OPENAT2 = 437  # the same number on every Linux architecture
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_NO_SYMLINKS = 0x04
_RESOLVE_BENEATH = 0x08
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)

_Opener = Callable[[int, str, int, int], int]


class _OpenHow(ctypes.Structure):
    _fields_ = (
        ("flags", ctypes.c_uint64),
        ("mode", ctypes.c_uint64),
        ("resolve", ctypes.c_uint64),
    )


_openat2_state: list[bool | None] = [None]  # None: not probed yet


def openat2_available() -> bool:
    """True when ``openat2`` works on this system (probed once, on the first call)."""
    if _openat2_state[0] is None:
        _openat2_state[0] = _probe_openat2()
    return bool(_openat2_state[0])


def _probe_openat2() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        fd = _openat2(-100, ".", os.O_RDONLY | _DIRECTORY, 0)  # -100 = AT_FDCWD
    except OSError:
        return False
    os.close(fd)
    return True


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _openat2(dir_fd: int, rel: str, flags: int, mode: int) -> int:
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    how = _OpenHow(flags | _CLOEXEC, mode if flags & os.O_CREAT else 0, _RESOLVE_FLAGS)
    fd = libc.syscall(
        ctypes.c_long(_SYS_OPENAT2),
        ctypes.c_int(dir_fd),
        ctypes.c_char_p(os.fsencode(rel)),
        ctypes.byref(how),
        ctypes.c_size_t(ctypes.sizeof(how)),
    )
    if fd < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), rel)
    return int(fd)


_RESOLVE_FLAGS = _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS


def open_beneath(root: str, rel: str, flags: int, mode: int = 0o644) -> int:
    """Open ``rel`` (relative, normalised, no ``..``) below the directory ``root``.

    No symlink is followed anywhere on the way, the last component included; one met
    raises :class:`BeneathError` (``ELOOP``), as does a ``..`` or an absolute ``rel``.
    Other failures raise the ``OSError`` of the failing call. Returns a new descriptor.
    """
    parts = _parts(rel)
    root_fd = os.open(root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        if not parts:
            return os.dup(root_fd) if flags & _DIRECTORY else _reopen(root_fd, flags)
        if USE_OPENAT2 and openat2_available():
            return _translate(_openat2, root_fd, "/".join(parts), flags, mode)
        return _walk(root_fd, parts, flags, mode)
    finally:
        os.close(root_fd)


def _parts(rel: str) -> list[str]:
    if os.path.isabs(rel):
        raise BeneathError(errno.EXDEV, "an absolute path cannot be opened beneath a root", rel)
    parts = [p for p in rel.split(os.sep) if p not in ("", ".")]
    if ".." in parts:
        raise BeneathError(errno.EXDEV, "'..' cannot be opened beneath a root", rel)
    return parts


def _reopen(root_fd: int, flags: int) -> int:
    return os.open(".", flags | _CLOEXEC, dir_fd=root_fd)


def _walk(root_fd: int, parts: list[str], flags: int, mode: int) -> int:
    fd = os.dup(root_fd)
    try:
        for name in parts[:-1]:
            child = _translate(_open_dir_step, fd, name, 0, 0)
            os.close(fd)
            fd = child
        last = _open_dir_step if flags & _DIRECTORY else _plain_open
        return _translate(last, fd, parts[-1], flags | _NOFOLLOW | _CLOEXEC, mode)
    finally:
        os.close(fd)


def _plain_open(dir_fd: int, name: str, flags: int, mode: int) -> int:
    return os.open(name, flags, mode, dir_fd=dir_fd)


def _open_dir_step(dir_fd: int, name: str, _flags: int, _mode: int) -> int:
    try:
        return os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=dir_fd)
    except NotADirectoryError:  # O_DIRECTORY wins over O_NOFOLLOW: was it a symlink?
        if stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode):
            raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), name) from None
        raise


def _translate(opener: _Opener, dir_fd: int, rel: str, flags: int, mode: int) -> int:
    try:
        return opener(dir_fd, rel, flags, mode)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EXDEV, errno.EMLINK):
            raise BeneathError(
                errno.ELOOP, "a symlink appeared on the way (the workspace changed)", rel
            ) from None
        raise
