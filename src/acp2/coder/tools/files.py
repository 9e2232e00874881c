"""File tools: read, list (glob), and the two-phase write / edit.

A write or edit is first *prepared* (checked and turned into a :class:`FileChange`, so the
diff can be shown while permission is asked), then *applied* atomically: the new text is
written to a new temporary file in the same directory and renamed over the target, both
through the descriptor of that directory. Applying re-checks the path and refuses if the
file changed since it was prepared.

Every file is opened through :meth:`Sandbox.open_file` (race-free, regular files only,
never blocking on a FIFO); reads stream only the lines asked for, and edits are capped at
:attr:`FileLimits.edit_bytes` (see :mod:`acp2.coder.tools.limits`).
"""

from __future__ import annotations

import contextlib
import io
import os
import secrets
import stat
from dataclasses import dataclass

from acp2.coder.tools.errors import ToolError
from acp2.coder.tools.gitignore import compile_glob, walk
from acp2.coder.tools.limits import DEFAULT_LIMITS, FileLimits
from acp2.coder.tools.sandbox import MissingPathError, Sandbox, SandboxError, SandboxPath
from acp2.coder.tools.stopping import Stop, check, never

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

#: Characters of a file returned by one read_file call (the default limit).
MAX_READ_CHARS = DEFAULT_LIMITS.read_chars
#: Paths returned by one list_files call (the default limit).
MAX_LIST = DEFAULT_LIMITS.list_max

_SNIFF = 8192  # bytes looked at for a NUL, as Git does
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def read_text(sandbox: Sandbox, target: SandboxPath, max_bytes: int) -> str:
    """The whole UTF-8 text of a regular file of at most ``max_bytes``; else ToolError."""
    fd = sandbox.open_file(target)
    with os.fdopen(fd, "rb") as handle:
        return _decode(_read_capped(handle, target.relative, max_bytes), target.relative)


def _read_capped(handle: io.BufferedReader, shown: str, max_bytes: int) -> bytes:
    size = os.fstat(handle.fileno()).st_size
    data = handle.read(max_bytes + 1) if size <= max_bytes else b""
    if size > max_bytes or len(data) > max_bytes:
        raise ToolError(
            f"{shown} is {_mb(max(size, len(data)))}; files over {_mb(max_bytes)} cannot be "
            "edited or written with these tools (read_file can still show parts of it)"
        )
    return data


def _decode(data: bytes, shown: str) -> str:
    if b"\x00" in data[:_SNIFF]:
        raise ToolError(f"{shown} looks binary")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{shown} is not UTF-8 text") from None
    if "\x00" in text:
        raise ToolError(f"{shown} looks binary")
    return text


def read_file(
    sandbox: Sandbox,
    path: str,
    offset: int = 1,
    limit: int | None = None,
    limits: FileLimits = DEFAULT_LIMITS,
    stop: Stop = never,
) -> str:
    """Return the text of ``path`` from line ``offset`` (1-based), at most ``limit`` lines
    and ``limits.read_chars`` characters, reading only as far into the file as needed
    (skipping to ``offset`` checks ``stop`` between chunks)."""
    target = sandbox.resolve(path)
    fd = sandbox.open_file(target)
    with os.fdopen(fd, "rb") as raw:
        if b"\x00" in raw.peek(_SNIFF)[:_SNIFF]:
            raise ToolError(f"{target.relative} looks binary")
        text = io.TextIOWrapper(raw, encoding="utf-8", newline="")
        try:
            window = _Window(text, max(offset, 1), limit, limits.read_chars, stop)
        except UnicodeDecodeError:
            raise ToolError(f"{target.relative} is not UTF-8 text") from None
    if "\x00" in window.text:
        raise ToolError(f"{target.relative} looks binary")
    return window.text + window.note()


class _Window:
    """Lines ``start``.. of a text stream: at most ``limit`` lines and ``budget`` chars."""

    def __init__(
        self, handle: io.TextIOWrapper, start: int, limit: int | None, budget: int, stop: Stop
    ) -> None:
        self.start, self.end = start, start - 1
        self.total: int | None = None
        parts: list[str] = []
        if self._skip(handle, start - 1, budget, stop):
            self._collect(handle, parts, limit, budget)
        self.text = "".join(parts)

    def _skip(self, handle: io.TextIOWrapper, count: int, chunk: int, stop: Stop) -> bool:
        number = 0
        while number < count:
            check(stop)
            line = handle.readline(chunk)
            if not line:
                self.total = number
                return False
            number += line.endswith(("\n", "\r"))
        return True

    def _collect(
        self, handle: io.TextIOWrapper, parts: list[str], limit: int | None, budget: int
    ) -> None:
        used = 0
        while (limit is None or self.end - self.start + 1 < max(limit, 0)) and used < budget:
            line = handle.readline(budget - used)
            if not line:
                self.total = self.end
                return
            parts.append(line)
            used += len(line)
            self.end += 1
        if not handle.read(1):
            self.total = self.end

    def note(self) -> str:
        """The trailer telling the model which lines it got, when not the whole file."""
        if self.start == 1 and self.total is not None and self.end >= self.total:
            return ""
        if self.total is not None and self.start > self.total:
            return f"\n[the file has {self.total} lines; offset {self.start} is past the end]"
        shown = f"lines {self.start}-{self.end}"
        if self.total is not None:
            return f"\n[showing {shown} of {self.total}; use offset/limit for more]"
        return f"\n[showing {shown}; the file goes on, use offset/limit for more]"


def list_files(
    sandbox: Sandbox,
    pattern: str = "**",
    path: str = ".",
    limits: FileLimits = DEFAULT_LIMITS,
    stop: Stop = never,
) -> list[str]:
    """Return the files under ``path`` matching ``pattern`` (a glob relative to ``path``),
    relative to the session cwd, skipping what ``.gitignore`` excludes; at most
    ``limits.list_max``. The walk goes by directory descriptors and enters no symlink;
    it checks ``stop`` at every file."""
    base = sandbox.resolve(path)
    try:
        fd = sandbox.open_dir(base.real, base.relative)
    except MissingPathError:
        raise ToolError(f"{base.relative} is not a directory") from None
    except ToolError:
        if not os.path.isdir(base.real):
            raise ToolError(f"{base.relative} is not a directory") from None
        raise
    regex = compile_glob(pattern or "**")
    found = []
    try:
        for _real, rel in walk(base.real, dir_fd=fd):
            check(stop)
            if regex.match(rel):
                found.append(sandbox.display(os.path.join(base.shown, rel)))
                if len(found) >= limits.list_max:
                    break
    finally:
        os.close(fd)
    return found


@dataclass(frozen=True)
class FileChange:
    """A prepared change of one file: ``old`` is None when the file is new."""

    path: SandboxPath
    old: str | None
    new: str


def prepare_write(
    sandbox: Sandbox, path: str, content: str, limits: FileLimits = DEFAULT_LIMITS
) -> FileChange:
    """Prepare writing ``content`` to ``path`` (created if missing, replaced otherwise)."""
    target = sandbox.resolve_for_write(path)
    _check_size(content, target, limits)
    try:
        old: str | None = read_text(sandbox, target, limits.edit_bytes)
    except MissingPathError:
        old = None
    if old == content:
        raise ToolError(f"{target.relative} already has exactly this content")
    return FileChange(target, old, content)


def prepare_edit(
    sandbox: Sandbox,
    path: str,
    old_string: str,
    new_string: str,
    replace_all: bool = False,
    limits: FileLimits = DEFAULT_LIMITS,
) -> FileChange:
    """Prepare replacing the exact text ``old_string`` by ``new_string`` in ``path``.

    ``old_string`` must occur exactly once unless ``replace_all``; raise ToolError if not.
    """
    target = sandbox.resolve_for_write(path)
    if not old_string:
        raise ToolError("old_string is empty; use write_file to create a file")
    if old_string == new_string:
        raise ToolError("old_string and new_string are the same")
    old = read_text(sandbox, target, limits.edit_bytes)
    count = old.count(old_string)
    if count == 0:
        raise ToolError(f"old_string was not found in {target.relative}; read the file again")
    if count > 1 and not replace_all:
        raise ToolError(
            f"old_string occurs {count} times in {target.relative}; add context to make it "
            "unique or set replace_all"
        )
    if len(new_string) > len(old_string):
        _check_size(old, target, limits, extra=(len(new_string) - len(old_string)) * count)
    new = old.replace(old_string, new_string, -1 if replace_all else 1)
    return FileChange(target, old, new)


def _check_size(text: str, target: SandboxPath, limits: FileLimits, extra: int = 0) -> None:
    if len(text) + extra > limits.edit_bytes:
        raise ToolError(
            f"the new content of {target.relative} would be over {_mb(limits.edit_bytes)}, "
            "the largest file these tools write"
        )


def apply_change(sandbox: Sandbox, change: FileChange, limits: FileLimits = DEFAULT_LIMITS) -> None:
    """Write a prepared change atomically; raise ToolError if the path or file moved on."""
    again = sandbox.resolve_for_write(change.path.shown)
    if again.real != change.path.real:
        raise ToolError(f"{change.path.relative} now resolves elsewhere; nothing was written")
    parent, name = os.path.split(again.real)
    dir_fd = sandbox.open_dir(parent, os.path.dirname(again.relative) or ".", create=True)
    try:
        current, mode = _current(dir_fd, name, again, limits)
        if current != change.old:
            raise ToolError(f"{again.relative} changed since the edit was prepared; read it again")
        _replace(dir_fd, name, _encode(change.new, again), mode, again.relative)
    finally:
        os.close(dir_fd)


def _current(
    dir_fd: int, name: str, target: SandboxPath, limits: FileLimits
) -> tuple[str | None, int]:
    """The text and mode of ``name`` in ``dir_fd`` now (None, 0o644 when missing)."""
    try:
        fd = os.open(name, os.O_RDONLY | _NONBLOCK | _NOFOLLOW | _CLOEXEC, dir_fd=dir_fd)
    except FileNotFoundError:
        return None, 0o644
    except OSError as exc:
        raise SandboxError(
            f"{target.relative} changed while being written ({exc.strerror}); nothing was written"
        ) from None
    with os.fdopen(fd, "rb") as handle:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise ToolError(f"{target.relative} is not a regular file; nothing was written")
        data = _read_capped(handle, target.relative, limits.edit_bytes)
    return _decode(data, target.relative), stat.S_IMODE(mode)


def _replace(dir_fd: int, name: str, data: bytes, mode: int, shown: str) -> None:
    tmp = f".acp2-{secrets.token_hex(6)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
    try:
        fd = os.open(tmp, flags, 0o600, dir_fd=dir_fd)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(fd)
            os.fchmod(fd, mode)
        os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise ToolError(f"cannot write {shown}: {exc.strerror or exc}") from None


def _encode(text: str, target: SandboxPath) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise ToolError(
            f"the new content of {target.relative} is not valid Unicode (lone surrogate)"
        ) from None


def _mb(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MiB"
