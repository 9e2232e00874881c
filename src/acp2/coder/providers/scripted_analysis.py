"""What the scripted model "understands" about a workspace, as pure functions.

It recognises Python test files, finds the functions the tests call, and looks inside
those functions for a few classic slips (a loop that skips the first or last element, a
mean divided by the wrong count). That is generic enough for the sample project of
``acp2 demo`` and harmless elsewhere: when nothing matches, it only summarises.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = ["Finding", "find_fix", "is_test_file", "summarise", "verdict_of"]

_TEST_FILE = re.compile(r"(^|/)(test_[^/]*|[^/]*_test)\.py\Z")
_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
_DEF = re.compile(r"^([ \t]*)def[ \t]+([A-Za-z_]\w*)\s*\(", re.MULTILINE)

#: (pattern, replacement, why) -- each a classic slip and its fix.
_SLIPS: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (
        re.compile(r"range\(1, len\((\w+)\)\)"),
        r"range(len(\1))",
        "its loop starts at index 1, so the first value is skipped",
    ),
    (
        re.compile(r"range\(len\((\w+)\) - 1\)"),
        r"range(len(\1))",
        "its loop stops one element early, so the last value is skipped",
    ),
    (
        re.compile(r"/ \(len\((\w+)\) [+-] 1\)"),
        r"/ len(\1)",
        "it divides by the wrong count",
    ),
)


@dataclass(frozen=True)
class Finding:
    """A suspected bug: replace ``old`` by ``new`` in ``path`` (inside ``function``)."""

    path: str
    function: str
    old: str
    new: str
    why: str
    test: str | None


def is_test_file(path: str) -> bool:
    """True for ``test_*.py`` and ``*_test.py`` files."""
    return bool(_TEST_FILE.search(path))


def find_fix(files: Mapping[str, str]) -> Finding | None:
    """Look for a classic slip in the functions the test files call; None if there is none."""
    tests = {p: t for p, t in files.items() if is_test_file(p)}
    called = {name for text in tests.values() for name in _CALL.findall(text)}
    for path, text in files.items():
        if path in tests or not path.endswith(".py"):
            continue
        for name, body in _functions(text):
            if name not in called:
                continue
            for line in body:
                fixed = _fix_line(line)
                if fixed is not None:
                    old = _unique(text, body, line)
                    new = old.replace(line, fixed[0])
                    return Finding(path, name, old, new, fixed[1], _test_of(tests, name))
    return None


def _functions(text: str) -> Iterable[tuple[str, list[str]]]:
    lines = text.splitlines()
    for match in _DEF.finditer(text):
        start = text.count("\n", 0, match.start())
        indent = len(match.group(1))
        body = []
        for line in lines[start + 1 :]:
            if line.strip() and len(line) - len(line.lstrip()) <= indent:
                break
            body.append(line)
        yield match.group(2), body


def _fix_line(line: str) -> tuple[str, str] | None:
    for pattern, replacement, why in _SLIPS:
        if pattern.search(line):
            return pattern.sub(replacement, line, count=1), why
    return None


def _unique(text: str, body: list[str], line: str) -> str:
    """The line, with preceding body lines added until it occurs once in ``text``."""
    at = body.index(line)
    snippet = line
    while text.count(snippet) > 1 and at > 0:
        at -= 1
        snippet = body[at] + "\n" + snippet
    return snippet


def _test_of(tests: Mapping[str, str], function: str) -> str | None:
    for text in tests.values():
        for name, body in _functions(text):
            if name.startswith("test") and any(function + "(" in line for line in body):
                return name
    return None


def summarise(paths: list[str], readme: str | None) -> str:
    """A short description of a workspace from its file list and README text."""
    if not paths:
        return "The workspace is empty."
    kinds = Counter(_extension(p) for p in paths)
    common = ", ".join(f"{count} {ext}" for ext, count in kinds.most_common(5))
    tops = sorted({p.split("/", 1)[0] for p in paths})
    shown = ", ".join(tops[:8]) + (", ..." if len(tops) > 8 else "")
    text = f"The workspace has {len(paths)} files ({common}). At the top level: {shown}."
    if readme:
        first = next((ln.strip("# ").strip() for ln in readme.splitlines() if ln.strip()), "")
        if first:
            text += f' The README starts with "{first}".'
    return text


def _extension(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[-1] + " files" if "." in name.strip(".") else "other files"


def verdict_of(output: str) -> str:
    """The test runner's verdict (``Ran 6 tests: OK``) from unittest output, without the
    timing so that the model's words stay deterministic."""
    ran = re.findall(r"^(Ran \d+ tests?) in [\d.]+s$", output, re.MULTILINE)
    verdict = re.findall(r"^(OK.*|FAILED.*)$", output, re.MULTILINE)
    parts = [ran[-1] if ran else "", verdict[-1] if verdict else ""]
    return ": ".join(p for p in parts if p) or "see the output above"
