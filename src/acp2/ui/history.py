"""Where ``acp2 chat`` keeps its input history: one file per project (session cwd).

The files live in ``history/`` under the acp2 data directory (``$ACP2_DATA_DIR``, else
``$XDG_DATA_HOME/acp2``, else ``~/.local/share/acp2``), named by the folder's last
component (for people listing the directory) and a hash of its absolute path (so two
folders of the same name never share a file, and no path text reaches the file system).
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from prompt_toolkit.history import History

__all__ = ["data_dir", "history_path", "open_history"]

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def data_dir() -> Path:
    """The acp2 data directory."""
    base = os.environ.get("ACP2_DATA_DIR")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_DATA_HOME")
    return (Path(xdg) if xdg else Path.home() / ".local" / "share") / "acp2"


def history_path(cwd: str) -> Path:
    """The history file of the chats in folder ``cwd`` (made absolute and normalised)."""
    folder = os.path.normpath(os.path.abspath(cwd))
    digest = hashlib.sha256(folder.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    label = _UNSAFE.sub("_", os.path.basename(folder))[:40].strip("._") or "root"
    return data_dir() / "history" / f"{label}-{digest}"


def open_history(cwd: str) -> History:
    """A prompt_toolkit file history for ``cwd``, or an in-memory one when the data
    directory is not writable."""
    from prompt_toolkit.history import FileHistory, InMemoryHistory  # the `cli` extra

    path = history_path(cwd)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch(exist_ok=True)
    except OSError:
        return InMemoryHistory()
    return FileHistory(str(path))
