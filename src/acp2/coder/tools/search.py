"""The ``search`` tool: a regular expression over the workspace's text files.

Files that ``.gitignore`` excludes are skipped (see :mod:`acp2.coder.tools.gitignore`), as
are binary files, files over :data:`MAX_FILE_BYTES`, and symlinks that lead out of the
session's roots.
"""

from __future__ import annotations

import os
import re

from acp2.coder.tools.errors import ToolError
from acp2.coder.tools.gitignore import compile_glob, walk
from acp2.coder.tools.sandbox import Sandbox

__all__ = ["MAX_FILE_BYTES", "MAX_MATCHES", "search"]

#: Matches returned by one search.
MAX_MATCHES = 200
#: Larger files are not searched.
MAX_FILE_BYTES = 1_000_000


def search(
    sandbox: Sandbox,
    pattern: str,
    path: str = ".",
    glob: str | None = None,
    ignore_case: bool = False,
) -> list[str]:
    """Return ``"relative/path:line: text"`` for each matching line, at most MAX_MATCHES.

    ``glob`` filters the files (relative to ``path``). Raises ToolError for a bad regex
    or a path outside the roots.
    """
    try:
        regex = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        raise ToolError(f"invalid regular expression: {exc}") from None
    base = sandbox.resolve(path)
    files = [(base.real, "")] if os.path.isfile(base.real) else list(walk(base.real))
    only = compile_glob(glob) if glob else None
    found: list[str] = []
    for real, rel in files:
        if only is not None and not only.match(rel):
            continue
        shown = sandbox.display(os.path.join(base.shown, rel) if rel else base.shown)
        for number, line in _matches(sandbox, real, regex):
            found.append(f"{shown}:{number}: {line}")
            if len(found) >= MAX_MATCHES:
                return found
    return found


def _matches(sandbox: Sandbox, real: str, regex: re.Pattern[str]) -> list[tuple[int, str]]:
    if os.path.islink(real) and not sandbox.contains(os.path.realpath(real)):
        return []
    try:
        if os.path.getsize(real) > MAX_FILE_BYTES:
            return []
        with open(real, "rb") as handle:
            data = handle.read()
    except OSError:
        return []
    if b"\x00" in data[:8192]:
        return []
    text = data.decode("utf-8", errors="replace")
    return [
        (number, line.rstrip()[:300])
        for number, line in enumerate(text.splitlines(), start=1)
        if regex.search(line)
    ]
