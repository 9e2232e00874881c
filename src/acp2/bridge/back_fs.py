"""The v1 ``fs/*`` requests a v1 agent sends its client, served by the back bridge.

A path is served only below one of the session's roots (its ``cwd`` and additional
directories): the root is resolved once, the path must be absolute and, normalised, lie
below it, and the file is then opened with
:func:`acp2.beneath.open_beneath`, which follows no symlink on the way (so
a link inside the workspace that leads out is refused, not followed). A missing file
answers ``-32002`` with the message ``Resource not found: PATH`` (the code is what the
Python SDK's agents test, the text what Gemini CLI tests).
Writes are asked first (``ask``, a v2 permission request to the client); a refusal
answers :class:`WriteRefused` (``-32600``, saying the user refused). A path outside the
roots answers ``-32602``.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Awaitable, Callable, Sequence
from typing import Final

import anyio

import acp2.compat.v1.schema as v1
from acp2.beneath import BeneathError, open_beneath
from acp2.errors import InvalidParams, InvalidRequest, ResourceNotFound, WriteRefused

__all__ = ["MAX_READ_BYTES", "FileService", "WriteRefused", "read_text", "write_text"]

#: The most a single ``fs/read_text_file`` reads (larger files are refused).
MAX_READ_BYTES: Final = 16 * 1024 * 1024

#: Asks the user whether ``path`` may be written in session ``session_id``.
Ask = Callable[[str, str], Awaitable[bool]]


def _below(roots: Sequence[str], path: str) -> tuple[str, str]:
    """The (resolved root, relative path) that holds ``path``; ``InvalidParams`` if none."""
    if not os.path.isabs(path):
        raise InvalidParams(f"the path must be absolute: {path!r}")
    wanted = os.path.normpath(path)
    for root in roots:
        for base in dict.fromkeys((os.path.normpath(root), os.path.realpath(root))):
            rel = os.path.relpath(wanted, base)
            if rel != ".." and not rel.startswith(".." + os.sep) and rel != ".":
                return base, rel
    raise InvalidParams(f"the path is outside the session's directories: {path!r}")


def _open(roots: Sequence[str], path: str, flags: int) -> int:
    root, rel = _below(roots, path)
    try:
        return open_beneath(root, rel, flags | getattr(os, "O_CLOEXEC", 0))
    except BeneathError:
        raise InvalidParams(f"the path leaves the session's directories: {path!r}") from None
    except FileNotFoundError:
        # "Resource not found" opens the message as in the official SDKs' -32002: Gemini
        # CLI recognises a missing file by that text, not by the code, and otherwise fails
        # its write_file tool (which reads the file first) on every new file.
        raise ResourceNotFound(f"Resource not found: {path}", {"path": path}) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InvalidParams(f"the path is a symlink: {path!r}") from None
        raise InvalidRequest(f"cannot open {path}: {exc.strerror}") from None


def _lines(text: str, line: int | None, limit: int | None) -> str:
    if line is None and limit is None:
        return text
    rows = text.splitlines(keepends=True)
    start = max((line or 1) - 1, 0)  # v1 lines are 1-based
    end = None if limit is None else start + limit
    return "".join(rows[start:end])


def read_text(roots: Sequence[str], request: v1.ReadTextFileRequest) -> v1.ReadTextFileResponse:
    """Serve one ``fs/read_text_file`` below ``roots`` (see the module): the file's text,
    from 1-based ``line``, at most ``limit`` lines. Raises ``InvalidParams`` for a path
    outside, ``ResourceNotFound`` (``-32002``) for a missing file."""
    fd = _open(roots, request.path, os.O_RDONLY)
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(MAX_READ_BYTES + 1)
    if len(data) > MAX_READ_BYTES:
        raise InvalidRequest(f"the file is larger than {MAX_READ_BYTES} bytes: {request.path}")
    line = request.line if isinstance(request.line, int) else None
    limit = request.limit if isinstance(request.limit, int) else None
    text = data.decode("utf-8", errors="replace")
    return v1.ReadTextFileResponse(content=_lines(text, line, limit))


def write_text(roots: Sequence[str], request: v1.WriteTextFileRequest) -> None:
    """Write one ``fs/write_text_file`` below ``roots`` (created or truncated; the parent
    directory must exist). Raises as :func:`read_text` does."""
    fd = _open(roots, request.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    with os.fdopen(fd, "wb") as handle:
        handle.write(request.content.encode("utf-8"))


class FileService:
    """``fs/*`` for the sessions of one bridge: ``roots(session_id)`` gives a session's
    directories (None: unknown session), ``ask`` asks before each write. With
    ``missing_empty`` a missing file reads as empty text instead of ``-32002`` (for the
    agents that break on the error, :mod:`acp2.compat.v1.quirks`)."""

    def __init__(
        self,
        roots: Callable[[str], Sequence[str] | None],
        ask: Ask,
        *,
        missing_empty: bool = False,
    ) -> None:
        self._roots = roots
        self._ask = ask
        self._missing_empty = missing_empty

    def _session_roots(self, session_id: str) -> Sequence[str]:
        found = self._roots(session_id)
        if found is None:
            raise ResourceNotFound(f"unknown session {session_id}", {"sessionId": session_id})
        return found

    async def read(self, request: v1.ReadTextFileRequest) -> v1.ReadTextFileResponse:
        """The ``fs/read_text_file`` handler (file IO in a worker thread)."""
        roots = self._session_roots(request.session_id)
        try:
            return await anyio.to_thread.run_sync(read_text, roots, request)
        except ResourceNotFound:
            if not self._missing_empty:
                raise
            return v1.ReadTextFileResponse(content="")

    async def write(self, request: v1.WriteTextFileRequest) -> v1.WriteTextFileResponse:
        """The ``fs/write_text_file`` handler: asks, then writes; ``WriteRefused`` if not."""
        roots = self._session_roots(request.session_id)
        _below(roots, request.path)  # refuse a path outside before bothering the user
        if not await self._ask(request.session_id, request.path):
            raise WriteRefused()
        await anyio.to_thread.run_sync(write_text, roots, request)
        return v1.WriteTextFileResponse()
