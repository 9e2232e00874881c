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


#: Lines of a changed region compared line by line; a larger one is one replaced block.
MAX_DIFF_LINES = 20_000
_CONTEXT = 3


def file_diff(path: str, old: str | None, new: str, max_lines: int = MAX_DIFF_LINES) -> Diff:
    """The diff content for one text file at absolute ``path``: ``old`` None = added."""
    change: DiffChange
    if old is None:
        change = DiffAddChange(path=path, file_type="text")
    else:
        change = DiffModifyChange(path=path, file_type="text")
    text = git_patch(path, old, new, max_lines)
    return Diff(changes=[change], patch=DiffPatch(format="git_patch", text=text))


def git_patch(path: str, old: str | None, new: str, max_lines: int = MAX_DIFF_LINES) -> str:
    """One ``diff --git`` section in Git's patch format, with absolute paths, no prefixes.

    The common leading and trailing lines are cut off first (linear time), so an edit of
    a large file compares only the changed region; a region of more than ``max_lines``
    lines is shown as one block of removed then added lines instead of being compared.
    """
    name = quote_path(path)
    head = [f"diff --git {name} {name}\n"]
    if old is None:
        head.append("new file mode 100644\n")
    # Git ends a ---/+++ name containing a space with a tab, so patch tools can parse it.
    tab = "\t" if " " in name else ""
    before = "/dev/null" if old is None else name + tab
    hunks = list(
        _hunks((old or "").splitlines(keepends=True), new.splitlines(keepends=True), max_lines)
    )
    if not hunks:  # no textual change (e.g. an empty file added)
        return "".join(head)
    lines = [f"--- {before}", f"+++ {name}{tab}", *hunks]
    return "".join(head + list(_lines(lines)))


def _hunks(old: list[str], new: list[str], max_lines: int) -> Iterator[str]:
    same = 0
    while same < min(len(old), len(new)) and old[same] == new[same]:
        same += 1
    tail = 0
    while tail < min(len(old), len(new)) - same and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    start = max(same - _CONTEXT, 0)
    keep = max(tail - _CONTEXT, 0)
    a, b = old[start : len(old) - keep], new[start : len(new) - keep]
    if len(a) + len(b) - 2 * (same - start) > max_lines:
        yield from _one_block(a, b, start, same - start, min(tail, _CONTEXT))
        return
    matcher = difflib.SequenceMatcher(None, a, b)
    for group in matcher.get_grouped_opcodes(_CONTEXT):
        yield _header(group[0][1] + start, group[-1][2] + start, group[0][3] + start,
                      group[-1][4] + start)  # fmt: skip
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                yield from (" " + line for line in a[i1:i2])
                continue
            yield from ("-" + line for line in a[i1:i2])
            yield from ("+" + line for line in b[j1:j2])


def _one_block(a: list[str], b: list[str], start: int, lead: int, trail: int) -> Iterator[str]:
    yield _header(start, start + len(a), start, start + len(b))
    yield from (" " + line for line in a[:lead])
    yield from ("-" + line for line in a[lead : len(a) - trail])
    yield from ("+" + line for line in b[lead : len(b) - trail])
    yield from (" " + line for line in a[len(a) - trail :])


def _header(a1: int, a2: int, b1: int, b2: int) -> str:
    return f"@@ -{_range(a1, a2)} +{_range(b1, b2)} @@"


def _range(start: int, stop: int) -> str:
    # As difflib (and Git) write a unified range: 1-based start, ",length" unless 1.
    length = stop - start
    if length == 1:
        return f"{start + 1}"
    return f"{start if length == 0 else start + 1},{length}"


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
