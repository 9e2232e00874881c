"""Private files for the history store: folders ``0700``, the database and its ``-wal`` /
``-shm`` / ``-journal`` companions ``0600``.

History holds every prompt and reply, so it is readable by its owner only. Missing folders
are created ``0700`` one level at a time (``mkdir -p`` would give the parents the umask's
mode); an existing folder is left as it is (it may be shared, like ``~/.local/share``).
The database file is created ``0600`` before SQLite opens it -- SQLite gives the files it
creates next to it the database's mode -- and files of ours left wider by an older version
are narrowed to ``0600``.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["COMPANIONS", "make_private_dirs", "prepare_private_file", "tighten"]

#: The files SQLite keeps next to a database.
COMPANIONS = ("-wal", "-shm", "-journal")


def make_private_dirs(folder: Path) -> None:
    """Create ``folder`` and its missing parents with mode ``0700``."""
    missing: list[Path] = []
    current = folder
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for path in reversed(missing):
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:
            continue  # another process created it meanwhile


def tighten(path: Path) -> None:
    """Narrow an existing regular file of ours to ``0600``; anything else is left alone."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid() and info.st_mode & 0o077:
        os.chmod(path, 0o600)


def prepare_private_file(path: Path) -> None:
    """Make ``path`` an existing ``0600`` file in a private folder, ready for SQLite."""
    make_private_dirs(path.parent)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    os.close(fd)
    tighten(path)
    for suffix in COMPANIONS:
        tighten(Path(f"{path}{suffix}"))
