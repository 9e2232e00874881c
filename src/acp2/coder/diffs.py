"""Diff content for file edits: structured ``changes`` plus a ``git_patch`` (DF-01..DF-05).

Every path is absolute, in ``changes`` and in the patch text; the patch has no ``a/`` /
``b/`` prefixes, uses ``/dev/null`` for the missing side of an added file, and quotes
unusual names the way Git does.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator

from acp2.schema import Diff, DiffAddChange, DiffChange, DiffModifyChange, DiffPatch

__all__ = ["file_diff", "git_patch", "quote_path"]

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r", "\a": "\\a",
            "\b": "\\b", "\f": "\\f", "\v": "\\v"}  # fmt: skip


def file_diff(path: str, old: str | None, new: str) -> Diff:
    """The diff content for one text file at absolute ``path``: ``old`` None = added."""
    change: DiffChange
    if old is None:
        change = DiffAddChange(path=path, file_type="text")
    else:
        change = DiffModifyChange(path=path, file_type="text")
    return Diff(
        changes=[change], patch=DiffPatch(format="git_patch", text=git_patch(path, old, new))
    )


def git_patch(path: str, old: str | None, new: str) -> str:
    """One ``diff --git`` section in Git's patch format, with absolute paths, no prefixes."""
    name = quote_path(path)
    head = [f"diff --git {name} {name}\n"]
    if old is None:
        head.append("new file mode 100644\n")
    # Git ends a ---/+++ name containing a space with a tab, so patch tools can parse it.
    tab = "\t" if " " in name else ""
    before = "/dev/null" if old is None else name + tab
    old_lines = (old or "").splitlines(keepends=True)
    new_lines = new.splitlines(keepends=True)
    lines = difflib.unified_diff(old_lines, new_lines, before, name + tab, n=3, lineterm="")
    body = list(_lines(lines))
    if not body:  # no textual change (e.g. an empty file added)
        return "".join(head)
    return "".join(head + body)


def _lines(lines: Iterable[str]) -> Iterator[str]:
    # With lineterm="", headers and hunk markers come without a newline; content lines
    # keep theirs, so one without a newline is the last line of a file lacking one.
    for index, line in enumerate(lines):
        if index < 2 or line.startswith("@@ "):
            yield line + "\n"
        elif line.endswith("\n"):
            yield line
        else:
            yield line + "\n\\ No newline at end of file\n"


def quote_path(path: str) -> str:
    """Quote ``path`` like Git does when it has quotes, backslashes, control or non-ASCII
    characters (C-style escapes, octal UTF-8 bytes, in double quotes); else return it."""
    if all(32 <= ord(c) < 127 and c not in '"\\' for c in path):
        return path
    out = []
    for char in path:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif 32 <= ord(char) < 127:
            out.append(char)
        else:
            out.extend(f"\\{byte:03o}" for byte in char.encode("utf-8"))
    return '"' + "".join(out) + '"'
