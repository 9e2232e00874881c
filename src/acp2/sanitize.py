"""Making peer-controlled text safe to show on a terminal: the one sanitizer of acp2.

Everything an agent chooses (messages, thoughts, titles, commands, paths, terminal output,
plans, permission options, session titles, command names, errors, stderr tails) passes one
of these functions before it reaches a terminal, so the agent can never send the terminal
an instruction: no escape sequence (CSI, OSC, DCS, SOS/PM/APC, single-character ESC), no
C0/C1 control, no bidirectional override survives.

- :func:`prose`: multi-line text read by a person (messages, descriptions, errors).
  Escape sequences are removed whole; other controls are shown as ``^G`` / ``<U+009B>``;
  ``\\n`` and ``\\t`` are kept, ``\\r\\n`` becomes ``\\n`` and a lone ``\\r`` is dropped
  (so ``safe\\rEVIL`` shows both halves); bidi embeddings, overrides and isolates are shown.
- :func:`line`: a single-line label (titles, option names, command names). Like
  :func:`exact`, but newlines become ``⏎`` and tabs a space.
- :func:`exact`: what will run or be touched (commands, paths, patches, raw input).
  Nothing is removed: every control character, bidi control, zero-width or other
  invisible format character and unusual space is shown by name (``^[``, ``<U+202E>``),
  so the text on screen has the same characters, in the same order, as the text used.
- :func:`terminal`: output of a command. Only SGR colour and attribute sequences
  (``ESC [ … m``, without "conceal", which would hide text) may be kept, and only when
  asked; every other sequence is removed (no OSC, no cursor movement, no screen
  clearing); a line's ``\\r`` keeps what a terminal would leave visible last.

All functions are pure, return their argument unchanged when it is already safe (one
regular-expression scan), and never raise on any ``str``.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["exact", "line", "prose", "terminal", "visible"]

#: One complete escape sequence, 7-bit or 8-bit: CSI, OSC (ended by BEL or ST),
#: DCS / SOS / PM / APC (ended by ST), or an ESC with intermediates and a final byte. An
#: unterminated string sequence matches only its introducer (the rest stays as text).
_SEQUENCE: Final = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)"
    r"|(?:\x1b[PX^_]|[\x90\x98\x9e\x9f])[^\x1b\x9c]*(?:\x1b\\|\x9c)"
    r"|\x1b[ -/]*[0-~]"
)
#: An SGR sequence: colours and text attributes only.
_SGR: Final = re.compile(r"\x1b\[[0-9;:]*m")

_C0: Final = [c for c in range(0x20) if c not in (0x09, 0x0A)]
_C1: Final = list(range(0x80, 0xA0))
#: Bidi embeddings, overrides and isolates: they reorder what is displayed.
_BIDI: Final = [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]
#: Invisible or look-alike characters shown by name in exact text (zero-width characters,
#: marks, fillers, tags, line separators, spaces other than U+0020, variation selectors).
_INVISIBLE: Final = [
    0x00A0, 0x00AD, 0x034F, 0x061C, 0x115F, 0x1160, 0x1680, 0x180E,
    *range(0x2000, 0x2010), *range(0x2028, 0x202A), 0x202F, *range(0x205F, 0x2066),
    *range(0x206A, 0x2070), 0x3000, 0x3164, *range(0xFE00, 0xFE10), 0xFEFF, 0xFFA0,
    *range(0xFFF9, 0xFFFC), *range(0xE0000, 0xE0080), *range(0xE0100, 0xE01F0),
]  # fmt: skip


def visible(char: str) -> str:
    """How one special character is shown: ``^[`` for C0 and DEL, else ``<U+202E>``."""
    code = ord(char)
    if code < 0x20:
        return "^" + chr(code + 0x40)
    if code == 0x7F:
        return "^?"
    return f"<U+{code:04X}>"


def _table(codes: list[int]) -> dict[int, str]:
    return {code: visible(chr(code)) for code in codes}


def _class(codes: list[int]) -> re.Pattern[str]:
    """A character class of ``codes`` written as ranges (a long list of single characters
    makes the regular-expression engine test them one by one, per character scanned)."""
    ranges: list[list[int]] = []
    for code in sorted(set(codes)):
        if ranges and ranges[-1][1] == code - 1:
            ranges[-1][1] = code
        else:
            ranges.append([code, code])
    body = "".join(
        re.escape(chr(low)) + ("-" + re.escape(chr(high)) if high > low else "")
        for low, high in ranges
    )
    return re.compile("[" + body + "]")


_PROSE_TABLE: Final = _table([*_C0, 0x7F, *_C1, *_BIDI])
_PROSE_NEEDS: Final = _class([*_C0, 0x7F, *_C1, *_BIDI])
_EXACT_TABLE: Final = _table([*_C0, 0x7F, *_C1, *_BIDI, *_INVISIBLE])
_EXACT_NEEDS: Final = _class([*_C0, 0x7F, *_C1, *_BIDI, *_INVISIBLE])
_LINE_TABLE: Final = {**_EXACT_TABLE, 0x0A: "⏎", 0x09: " "}
_LINE_NEEDS: Final = _class([*_C0, 0x0A, 0x09, 0x7F, *_C1, *_BIDI, *_INVISIBLE])


# Substituting only the matches is much faster than str.translate over the whole text
# when special characters are rare, as they are.
def _show_prose(match: re.Match[str]) -> str:
    return _PROSE_TABLE[ord(match.group())]


def _show_exact(match: re.Match[str]) -> str:
    return _EXACT_TABLE[ord(match.group())]


def _show_line(match: re.Match[str]) -> str:
    return _LINE_TABLE[ord(match.group())]


def prose(text: str) -> str:
    """Multi-line text for reading: sequences removed, other controls shown, ``\\n`` /
    ``\\t`` kept."""
    if _PROSE_NEEDS.search(text) is None:
        return text
    text = _SEQUENCE.sub("", text.replace("\r\n", "\n")).replace("\r", "")
    return _PROSE_NEEDS.sub(_show_prose, text)


def exact(text: str) -> str:
    """Text as it will be used (a command, a path, a patch): every special character
    shown by name, nothing removed; ``\\n`` and ``\\t`` kept."""
    if _EXACT_NEEDS.search(text) is None:
        return text
    return _EXACT_NEEDS.sub(_show_exact, text)


def line(text: str) -> str:
    """A one-line label: like :func:`exact`, with newlines shown as ``⏎`` and tabs as
    spaces (``\\r\\n`` counts as one newline)."""
    if _LINE_NEEDS.search(text) is None:
        return text
    return _LINE_NEEDS.sub(_show_line, text.replace("\r\n", "\n"))


def terminal(text: str, *, colors: bool = False) -> str:
    """Command output: SGR colours kept only when ``colors`` is true, every other escape
    sequence removed, other controls shown; in each line, a ``\\r`` drops what came before
    it (a progress bar shows its last state)."""
    if _PROSE_NEEDS.search(text) is None:
        return text
    text = _SEQUENCE.sub(_keep_sgr if colors else "", text.replace("\r\n", "\n"))
    if "\r" in text:
        text = "\n".join(_after_return(part) for part in text.split("\n"))
    if colors:
        return _SGR_OR_SPECIAL.sub(_show_unless_sgr, text)
    return _PROSE_NEEDS.sub(_show_prose, text)


_SGR_OR_SPECIAL: Final = re.compile(_SGR.pattern + "|" + _PROSE_NEEDS.pattern)


def _keep_sgr(match: re.Match[str]) -> str:
    found = match.group()
    return _without_conceal(found) if _SGR.fullmatch(found) else ""


def _without_conceal(sgr: str) -> str:
    """The SGR sequence without "conceal" (8), which would hide text on screen; the
    numbers of extended colours (``38;5;8``, ``48;2;R;G;B``) are kept."""
    params = sgr[2:-1].split(";")
    kept: list[str] = []
    index = 0
    while index < len(params):
        param = params[index]
        if param in ("38", "48", "58") and index + 1 < len(params):
            width = {"5": 3, "2": 5}.get(params[index + 1], 1)
            kept.extend(params[index : index + width])
            index += width
            continue
        if param != "8":
            kept.append(param)
        index += 1
    return "\x1b[" + ";".join(kept) + "m" if kept else ""


def _show_unless_sgr(match: re.Match[str]) -> str:
    found = match.group()
    return found if len(found) > 1 else visible(found)


def _after_return(part: str) -> str:
    return part.rstrip("\r").rsplit("\r", 1)[-1]
