"""Where the registry's files live, and the checks that keep them private.

Everything is under one cache root: ``$ACP2_CACHE_DIR`` when set, else
``$XDG_CACHE_HOME/acp2``, else ``~/.cache/acp2``; the registry part is its ``registry``
folder. Folders acp2 makes there are ``0700``; a folder that exists already must be ours
and not writable by others, and the folders above the root must not let others replace
it (writable by others is allowed only with the sticky bit, as ``/tmp`` has).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from acp2.errors import UnsafeDownload

__all__ = ["cache_root", "check_runnable_place", "make_dirs", "private_dir"]


def cache_root() -> Path:
    """The registry's cache folder (not created here)."""
    explicit = os.environ.get("ACP2_CACHE_DIR")
    if explicit:
        return Path(explicit) / "registry"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "acp2" / "registry"


def private_dir(path: Path) -> Path:
    """Create ``path`` (and its parents) as ``0700`` folders if missing; return it.

    :class:`UnsafeDownload` if it is a link, not a folder, not ours, or writable by others.
    """
    make_dirs(path)
    _check_private(path)
    return path


def make_dirs(path: Path) -> None:
    """Create ``path`` and every missing parent as ``0700`` (``mkdir -p`` would give the
    parents the umask's mode, which may let others write)."""
    missing = []
    while not path.exists():
        missing.append(path)
        path = path.parent
    for folder in reversed(missing):
        folder.mkdir(mode=0o700, exist_ok=True)


def _check_private(path: Path) -> None:
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafeDownload(f"{path} is not a folder (a link or a file is in its place)")
    if info.st_uid != os.getuid():
        raise UnsafeDownload(f"{path} belongs to another user; acp2 will not run code from it")
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise UnsafeDownload(f"{path} is writable by other users; acp2 will not run code from it")


def check_runnable_place(program: Path, root: Path) -> None:
    """Refuse to run ``program`` unless it is a regular file inside ``root``, every folder
    from its own up to ``root`` is private (ours, not writable by others), and no folder
    above ``root`` is writable by others without the sticky bit.

    :class:`UnsafeDownload` names the first place that fails.
    """
    info = os.lstat(program)
    if not stat.S_ISREG(info.st_mode):
        raise UnsafeDownload(f"{program} is not a regular file")
    folder = program.parent
    while True:
        _check_private(folder)
        if folder == root:
            break
        if root not in folder.parents:
            raise UnsafeDownload(f"{program} is outside the agent cache {root}")
        folder = folder.parent
    for above in root.parents:
        mode = os.stat(above).st_mode
        if mode & stat.S_IWOTH and not mode & stat.S_ISVTX:
            raise UnsafeDownload(f"{above} is writable by everyone; acp2 runs no code below it")
