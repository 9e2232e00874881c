"""A v2 structured diff as v1's native ``{type:"diff", path, oldText, newText}`` content.

v2 diff content carries ``changes`` and a ``git_patch``, not the two texts of the file.
The patch still holds every line it shows: an added file's patch is the whole new text,
and each hunk of a modified file is an exact pair of regions (the changed lines and their
context, before and after). So a one-file text ``add`` or ``modify`` with a ``git_patch``
becomes native v1 diffs: the new file's text with ``oldText: null``, or one v1 diff per
hunk, whose first line numbers go in ``_meta["acp2"]`` (``oldLine`` / ``newLine``) since
v1 has no field for a region's position. Everything else (a delete, move or copy, a
binary file, several files, another patch format, a patch that does not parse) returns
``None`` and is rendered as text by the caller.
"""

from __future__ import annotations

import re
from typing import Any, Final

from msgspec import UNSET

import acp2.compat.v1.schema as v1
import acp2.schema as v2

__all__ = ["native_diffs"]

_HUNK: Final = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_TEXT_TYPES: Final = (UNSET, None, "text")
_NO_NEWLINE: Final = "\\ No newline at end of file"


class _Hunk:
    """One hunk's two regions while they are read, and their 1-based first lines."""

    __slots__ = ("new", "new_left", "new_line", "old", "old_left", "old_line")

    def __init__(self, match: re.Match[str]) -> None:
        self.old_line, self.new_line = int(match[1]), int(match[3])
        self.old_left = 1 if match[2] is None else int(match[2])
        self.new_left = 1 if match[4] is None else int(match[4])
        self.old: list[str] = []
        self.new: list[str] = []

    def take(self, line: str) -> bool:
        """Add one body line (without its newline); False when it does not fit."""
        sign, text = line[:1], line[1:] + "\n"
        if sign in (" ", "-"):
            self.old_left -= 1
            self.old.append(text)
        if sign in (" ", "+"):
            self.new_left -= 1
            self.new.append(text)
        return sign in (" ", "-", "+") and self.old_left >= 0 and self.new_left >= 0

    def no_newline(self, last: str) -> None:
        """The previous body line ``last`` ends its side(s) without a newline."""
        for side, signs in ((self.old, (" ", "-")), (self.new, (" ", "+"))):
            if last[:1] in signs and side:
                side[-1] = side[-1][:-1]

    @property
    def done(self) -> bool:
        return self.old_left == 0 and self.new_left == 0


def _hunks(text: str) -> list[_Hunk] | None:
    """The hunks of a one-file git patch, or None when it is not one that parses."""
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    hunks: list[_Hunk] = []
    last = ""
    for index, line in enumerate(lines):
        if line == _NO_NEWLINE and hunks:
            hunks[-1].no_newline(last)
        elif hunks and not hunks[-1].done:
            if not hunks[-1].take(line):
                return None
            last = line
        elif not _head_line(line, index, hunks):
            return None
    return hunks if all(h.done for h in hunks) else None


def _head_line(line: str, index: int, hunks: list[_Hunk]) -> bool:
    """Read a line outside a hunk body: a hunk header starts a hunk; False when the
    patch is not one text file (a second file, a binary patch, text after a hunk)."""
    if line.startswith("@@ "):
        match = _HUNK.match(line)
        if match is not None:
            hunks.append(_Hunk(match))
        return match is not None
    if line.startswith("diff --git ") and index > 0:
        return False
    return not hunks and not line.startswith(("Binary files", "GIT binary patch"))


def _meta(diff: v2.Diff, extra: dict[str, Any] | None) -> Any:
    if extra is None:
        return diff.meta
    meta = dict(diff.meta) if isinstance(diff.meta, dict) else {}
    meta["acp2"] = extra
    return meta


def native_diffs(diff: v2.Diff) -> list[v1.Diff] | None:
    """``diff`` as v1 diff content items, or None when v1's diff cannot say it exactly.

    A text file added: one item, ``oldText: null``, ``newText`` the whole file. A text
    file modified: one item per hunk, the regions before and after, with the hunk's
    first line numbers in ``_meta["acp2"]``. The v2 diff's own ``_meta`` is kept.
    """
    if len(diff.changes) != 1 or not isinstance(diff.patch, v2.DiffPatch):
        return None
    change = diff.changes[0]
    if not isinstance(change, v2.DiffAddChange | v2.DiffModifyChange):
        return None
    added = isinstance(change, v2.DiffAddChange)
    if change.file_type not in _TEXT_TYPES or diff.patch.format != "git_patch":
        return None
    hunks = _hunks(diff.patch.text)
    if hunks is None or (not added and not hunks) or (added and len(hunks) > 1):
        return None
    if added:
        new = "".join(hunks[0].new) if hunks else ""
        return [v1.Diff(path=change.path, old_text=None, new_text=new, meta=_meta(diff, None))]
    return [
        v1.Diff(
            path=change.path,
            old_text="".join(h.old),
            new_text="".join(h.new),
            meta=_meta(diff, {"oldLine": h.old_line, "newLine": h.new_line}),
        )
        for h in hunks
    ]
