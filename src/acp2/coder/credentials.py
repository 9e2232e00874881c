"""The coding agent's stored API key: what terminal login (``acp2 agent --login``) saves
and what ``acp2 agent --model openai`` reads at start when no key is given otherwise.

The key goes to the user's keyring when the optional ``keyring`` package is installed and
has a usable backend, else to ``$XDG_CONFIG_HOME/acp2/openai-api-key`` (default
``~/.config/acp2``; ``$ACP2_CONFIG_DIR`` replaces the folder): a ``0600`` file in a
``0700`` folder, written through a new file and one rename, never through a link.
Reading refuses a file others can read or write.
"""

from __future__ import annotations

import importlib
import os
import stat
from pathlib import Path
from typing import Any, Final

__all__ = ["MAX_KEY_LENGTH", "key_file", "store_key", "stored_key"]

#: The longest key stored or read.
MAX_KEY_LENGTH: Final = 16384
_SERVICE: Final = "acp2"
_USER: Final = "openai-api-key"


def key_file() -> Path:
    """Where the key file is (whether or not it exists)."""
    explicit = os.environ.get("ACP2_CONFIG_DIR")
    if explicit:
        return Path(explicit) / _USER
    xdg = os.environ.get("XDG_CONFIG_HOME")
    return (Path(xdg) if xdg else Path.home() / ".config") / "acp2" / _USER


def stored_key() -> str | None:
    """The stored key (keyring first, then the file), or None when there is none or the
    file is not private (then it is ignored: someone else may have written it)."""
    key = _keyring_get()
    if key:
        return key
    path = key_file()
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if info.st_uid != os.getuid() or info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            return None
        text = handle.read(MAX_KEY_LENGTH + 1).decode("utf-8", "replace").strip()
    return text if text and len(text) <= MAX_KEY_LENGTH else None


def store_key(key: str) -> str:
    """Store ``key`` (stripped; :class:`ValueError` when empty, too long or multi-line);
    return where it went, for the user: ``the keyring`` or the file's path."""
    key = key.strip()
    if not key or len(key) > MAX_KEY_LENGTH or any(c in key for c in "\r\n\0"):
        raise ValueError("an API key is one non-empty line")
    if _keyring_set(key):
        return "the keyring"
    path = key_file()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(key + "\n")
    os.replace(tmp, path)
    return str(path)


def _keyring() -> Any:
    """The ``keyring`` module when the user has it installed (never a dependency)."""
    try:
        return importlib.import_module("keyring")
    except ImportError:
        return None


def _keyring_get() -> str | None:
    keyring = _keyring()
    if keyring is None:
        return None
    try:
        value = keyring.get_password(_SERVICE, _USER)
    except Exception:  # any backend failure means "no keyring"
        return None
    return value if isinstance(value, str) and value else None


def _keyring_set(key: str) -> bool:
    keyring = _keyring()
    if keyring is None:
        return False
    try:
        keyring.set_password(_SERVICE, _USER, key)
    except Exception:  # no usable backend: the file is the fallback
        return False
    return True
