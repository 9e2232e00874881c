"""File tools: read, list (glob), and the two-phase write / edit.

A write or edit is first *prepared* (checked and turned into a :class:`FileChange`, so the
diff can be shown while permission is asked), then *applied* atomically: the new text is
written to a temporary file in the same directory and moved over the target. Applying
re-checks the path and refuses if the file changed since it was prepared.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from dataclasses import dataclass

from acp2.coder.tools.errors import ToolError
from acp2.coder.tools.gitignore import compile_glob, walk
from acp2.coder.tools.sandbox import Sandbox, SandboxPath

__all__ = [
    "MAX_LIST",
    "MAX_READ_CHARS",
    "FileChange",
    "apply_change",
    "list_files",
    "prepare_edit",
    "prepare_write",
    "read_file",
    "read_text",
]

#: Characters of a file returned by one read_file call.
MAX_READ_CHARS = 100_000
#: Paths returned by one list_files call.
MAX_LIST = 500


def read_text(real: str, shown: str) -> str:
    """Read a UTF-8 text file (newlines kept as they are); raise ToolError otherwise."""
    try:
        with open(real, encoding="utf-8", newline="") as handle:
            text = handle.read()
    except FileNotFoundError:
        raise ToolError(f"{shown} does not exist") from None
    except IsADirectoryError:
        raise ToolError(f"{shown} is a directory; use list_files") from None
    except UnicodeDecodeError:
        raise ToolError(f"{shown} is not UTF-8 text") from None
    except OSError as exc:
        raise ToolError(f"cannot read {shown}: {exc.strerror}") from None
    if "\x00" in text:
        raise ToolError(f"{shown} looks binary")
    return text


def read_file(sandbox: Sandbox, path: str, offset: int = 1, limit: int | None = None) -> str:
    """Return the text of ``path`` from line ``offset`` (1-based), at most ``limit`` lines."""
    target = sandbox.resolve(path)
    lines = read_text(target.real, target.relative).splitlines(keepends=True)
    start = max(offset, 1) - 1
    end = len(lines) if limit is None else min(len(lines), start + max(limit, 0))
    text = "".join(lines[start:end])
    if len(text) > MAX_READ_CHARS:
        text = text[:MAX_READ_CHARS]
        end = start + text.count("\n")
    if start > 0 or end < len(lines):
        text += f"\n[showing lines {start + 1}-{end} of {len(lines)}; use offset/limit for more]"
    return text


def list_files(sandbox: Sandbox, pattern: str = "**", path: str = ".") -> list[str]:
    """Return the files under ``path`` matching ``pattern`` (a glob relative to ``path``),
    relative to the session cwd, skipping what ``.gitignore`` excludes; at most MAX_LIST."""
    base = sandbox.resolve(path)
    if not os.path.isdir(base.real):
        raise ToolError(f"{base.relative} is not a directory")
    regex = compile_glob(pattern or "**")
    found = []
    for _real, rel in walk(base.real):
        if regex.match(rel):
            found.append(sandbox.display(os.path.join(base.shown, rel)))
            if len(found) >= MAX_LIST:
                break
    return found


@dataclass(frozen=True)
class FileChange:
    """A prepared change of one file: ``old`` is None when the file is new."""

    path: SandboxPath
    old: str | None
    new: str


def prepare_write(sandbox: Sandbox, path: str, content: str) -> FileChange:
    """Prepare writing ``content`` to ``path`` (created if missing, replaced otherwise)."""
    target = sandbox.resolve_for_write(path)
    old = read_text(target.real, target.relative) if os.path.lexists(target.real) else None
    if old == content:
        raise ToolError(f"{target.relative} already has exactly this content")
    return FileChange(target, old, content)


def prepare_edit(
    sandbox: Sandbox, path: str, old_string: str, new_string: str, replace_all: bool = False
) -> FileChange:
    """Prepare replacing the exact text ``old_string`` by ``new_string`` in ``path``.

    ``old_string`` must occur exactly once unless ``replace_all``; raise ToolError if not.
    """
    target = sandbox.resolve_for_write(path)
    if not old_string:
        raise ToolError("old_string is empty; use write_file to create a file")
    if old_string == new_string:
        raise ToolError("old_string and new_string are the same")
    old = read_text(target.real, target.relative)
    count = old.count(old_string)
    if count == 0:
        raise ToolError(f"old_string was not found in {target.relative}; read the file again")
    if count > 1 and not replace_all:
        raise ToolError(
            f"old_string occurs {count} times in {target.relative}; add context to make it "
            "unique or set replace_all"
        )
    new = old.replace(old_string, new_string, -1 if replace_all else 1)
    return FileChange(target, old, new)


def apply_change(sandbox: Sandbox, change: FileChange) -> None:
    """Write a prepared change atomically; raise ToolError if the path or file moved on."""
    again = sandbox.resolve_for_write(change.path.shown)
    if again.real != change.path.real:
        raise ToolError(f"{change.path.relative} now resolves elsewhere; nothing was written")
    exists = os.path.lexists(again.real)
    current = read_text(again.real, again.relative) if exists else None
    if current != change.old:
        raise ToolError(f"{again.relative} changed since the edit was prepared; read it again")
    _atomic_write(again.real, change.new)


def _atomic_write(real: str, text: str) -> None:
    directory = os.path.dirname(real)
    os.makedirs(directory, exist_ok=True)
    try:
        mode = stat.S_IMODE(os.stat(real).st_mode)
    except FileNotFoundError:
        mode = 0o644
    fd, tmp = tempfile.mkstemp(dir=directory, prefix="." + os.path.basename(real) + ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, real)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
