"""The ``search`` tool: a regular expression over the workspace's text files.

Files that ``.gitignore`` excludes are skipped (see :mod:`acp2.coder.tools.gitignore`), as
are binary files, files over :attr:`FileLimits.search_file_bytes`, anything that is not a
regular file, and symlinks that lead out of the session's roots. Every file is opened
race-free through :meth:`Sandbox.open_file`.

The pattern is the model's, so it may backtrack catastrophically (``^(a+)+$``) in
Python's :mod:`re`, which holds the interpreter lock for the whole match: run in the agent,
it would freeze the event loop, ``session/cancel`` included. So the tool
(:func:`search_async`) uses RE2 (the optional ``google-re2`` package, extra ``re2``),
whose matching time is linear, in a worker thread; a pattern RE2 does not support
(backreferences, lookaround), or any pattern when RE2 is not installed, runs with
:mod:`re` in a child process (:mod:`acp2.coder.tools.search_worker`) that is killed on
cancellation or after :attr:`FileLimits.search_seconds`.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import anyio

from acp2.coder.tools.errors import ToolError
from acp2.coder.tools.gitignore import compile_glob, walk
from acp2.coder.tools.limits import DEFAULT_LIMITS, FileLimits
from acp2.coder.tools.sandbox import Sandbox, SandboxPath
from acp2.coder.tools.stopping import Stop, check, never, run_stoppable

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_MATCHES",
    "Matcher",
    "compile_pattern",
    "re2_module",
    "search",
    "search_async",
    "too_long",
]

#: Matches returned by one search (the default limit).
MAX_MATCHES = DEFAULT_LIMITS.search_matches
#: Larger files are not searched (the default limit).
MAX_FILE_BYTES = DEFAULT_LIMITS.search_file_bytes

#: A compiled pattern's ``search`` method: truthy when the line matches.
Matcher = Callable[[str], Any]

_re2_cache: list[ModuleType | None] = []


def re2_module() -> ModuleType | None:
    """The ``re2`` module of ``google-re2`` when installed (and not disabled with
    ``ACP2_SEARCH_ENGINE=re``), else None."""
    if os.environ.get("ACP2_SEARCH_ENGINE") == "re":
        return None
    if not _re2_cache:
        try:
            _re2_cache.append(importlib.import_module("re2"))
        except ImportError:
            _re2_cache.append(None)
    return _re2_cache[0]


def compile_pattern(pattern: str, ignore_case: bool, engine: str = "auto") -> Matcher:
    """Compile ``pattern`` with ``engine``: ``"re2"`` (ToolError when RE2 cannot take it),
    ``"re"`` (Python's, may backtrack), or ``"auto"`` (RE2 when it can, else ``re``)."""
    if engine in ("re2", "auto"):
        compiled = _compile_re2(pattern, ignore_case)
        if compiled is not None:
            return compiled
        if engine == "re2":
            raise ToolError("RE2 cannot run this pattern")
    try:
        return re.compile(pattern, re.IGNORECASE if ignore_case else 0).search
    except re.error as exc:
        raise ToolError(f"invalid regular expression: {exc}") from None


def _compile_re2(pattern: str, ignore_case: bool) -> Matcher | None:
    re2 = re2_module()
    if re2 is None:
        return None
    options = re2.Options()
    options.log_errors = False
    options.case_sensitive = not ignore_case
    try:
        matcher: Matcher = re2.compile(pattern, options).search
    except (re2.error, TypeError, ValueError):
        return None
    return matcher


async def search_async(
    sandbox: Sandbox,
    pattern: str,
    path: str = ".",
    glob: str | None = None,
    ignore_case: bool = False,
    limits: FileLimits = DEFAULT_LIMITS,
) -> list[str]:
    """:func:`search` without freezing the event loop, and always cancellable (see above)."""
    if _compile_re2(pattern, ignore_case) is not None:

        def run(stop: Stop) -> list[str]:
            args = (sandbox, pattern, path, glob, ignore_case, limits)
            return search(*args, engine="re2", stop=stop)

        with anyio.move_on_after(limits.search_seconds):
            return await run_stoppable(run)
        raise ToolError(too_long(limits))
    from acp2.coder.tools.search_worker import run_in_child

    return await run_in_child(sandbox, pattern, path, glob, ignore_case, limits)


def too_long(limits: FileLimits) -> str:
    """The tool error of a search stopped at its time limit."""
    return (
        f"the search took longer than {limits.search_seconds:g} s and was stopped; use a "
        "simpler pattern or a narrower path"
    )


def search(
    sandbox: Sandbox,
    pattern: str,
    path: str = ".",
    glob: str | None = None,
    ignore_case: bool = False,
    limits: FileLimits = DEFAULT_LIMITS,
    *,
    engine: str = "auto",
    stop: Stop = never,
) -> list[str]:
    """Return ``"relative/path:line: text"`` for each matching line, at most
    ``limits.search_matches``, in this thread (see :func:`search_async` for the tool).

    ``glob`` filters the files (relative to ``path``). Raises ToolError for a bad regex
    or a path outside the roots. ``stop`` is checked at every file.
    """
    matcher = compile_pattern(pattern, ignore_case, engine)
    base = sandbox.resolve(path)
    only = compile_glob(glob) if glob else None
    found: list[str] = []
    for rel, target in _files(sandbox, base):
        check(stop)
        if only is not None and not only.match(rel):
            continue
        for number, line in _matches(sandbox, target, matcher, limits.search_file_bytes):
            found.append(f"{target.relative}:{number}: {line}")
            if len(found) >= limits.search_matches:
                return found
    return found


def _files(sandbox: Sandbox, base: SandboxPath) -> Iterator[tuple[str, SandboxPath]]:
    if not os.path.isdir(base.real):
        yield "", base
        return
    try:
        fd = sandbox.open_dir(base.real, base.relative)
    except ToolError:
        return
    try:
        for _real, rel in walk(base.real, dir_fd=fd):
            try:
                yield rel, sandbox.resolve(os.path.join(base.shown, rel))
            except ToolError:  # a symlink leading out
                continue
    finally:
        os.close(fd)


def _matches(
    sandbox: Sandbox, target: SandboxPath, matcher: Matcher, max_bytes: int
) -> list[tuple[int, str]]:
    try:
        fd = sandbox.open_file(target)
    except ToolError:
        return []
    with os.fdopen(fd, "rb") as handle:
        if os.fstat(fd).st_size > max_bytes:
            return []
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes or b"\x00" in data[:8192]:
        return []
    text = data.decode("utf-8", errors="replace")
    return [
        (number, line.rstrip()[:300])
        for number, line in enumerate(text.splitlines(), start=1)
        if matcher(line)
    ]
