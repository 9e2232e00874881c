"""What a person reads when an agent fails to start: the wording, in one place.

Used by ``acp2.client`` (and so ``acp2 run`` and ``acp2 chat``) and by ``acp2 check``,
so the three commands say the same thing about the same mistake, and every message
names what to do next. Pure functions and a small sans-IO scanner; no I/O here.

The agent's own text (its stderr, a stray stdout line) is untrusted: it is quoted only
after :func:`sanitize` (acp2's one sanitizer, :mod:`acp2.sanitize`) made it inert, so it
cannot move the cursor, clear the screen or change the terminal's title.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
from collections.abc import Sequence
from typing import Final

import msgspec

from acp2.sanitize import prose

__all__ = [
    "QUOTE_CHARS",
    "StrayLineScanner",
    "early_exit",
    "not_answered",
    "quote_line",
    "sanitize",
    "start_failure",
    "stderr_excerpt",
    "stray_output",
]

#: How much of a stray stdout line a message quotes.
QUOTE_CHARS: Final = 200
#: How many stderr lines (each cut to this many characters) a message quotes.
STDERR_LINES: Final = 20
STDERR_LINE_CHARS: Final = 400
#: A line longer than this is not parsed by the scanner: it is taken to be a message.
SCAN_LIMIT: Final = 64 * 1024

_PACKAGE = re.compile(r"^(@[\w.-]+/)?[A-Za-z0-9][\w.-]*(@[\w.^~<>=*-]+)?$")


def sanitize(text: str, *, newlines: bool = False) -> str:
    """``text`` made safe by :func:`acp2.sanitize.prose` (escape sequences removed, other
    controls shown as ``^G``); tabs become spaces, newlines are kept only with
    ``newlines=True``."""
    text = prose(text).replace("\t", " ")
    return text if newlines else text.replace("\n", " ")


def quote_line(raw: bytes, limit: int = QUOTE_CHARS) -> str:
    """One line of peer output, decoded, sanitized and cut to ``limit`` characters, quoted."""
    text = sanitize(raw.decode("utf-8", errors="replace").rstrip("\r\n"))
    if len(text) > limit:
        text = text[:limit] + "…"
    return repr(text)


def stderr_excerpt(tail: str) -> str:
    """The last lines of an agent's stderr, sanitized (empty when it wrote nothing)."""
    lines = sanitize(tail, newlines=True).strip().splitlines()[-STDERR_LINES:]
    return "\n".join("  " + line[-STDERR_LINE_CHARS:] for line in lines)


def _command(argv: Sequence[str]) -> str:
    return shlex.join(argv)


def _package_hint(name: str, argv: Sequence[str]) -> str:
    """Suggest ``npx`` / ``uvx`` when ``name`` could be a package rather than a file."""
    rest = list(argv[1:])
    npx, uvx = _command(["npx", name, *rest]), _command(["uvx", name, *rest])
    if name.startswith("@") and name.count("/") == 1:
        return f" (it looks like an npm package: try `{npx}`)"
    if "/" in name:
        return " (no such file: check the path)"
    if not _PACKAGE.match(name):
        return " (check the spelling, or give its full path)"
    return (
        " (check the spelling, or give its full path; if it is a package, run it with its "
        f"launcher: `{npx}` for npm, `{uvx}` for PyPI)"
    )


def start_failure(argv: Sequence[str], exc: OSError, cwd: str | None = None) -> str:
    """Why ``argv`` could not be started, and what to do about it."""
    name = argv[0] if argv else ""
    if cwd is not None and not os.path.isdir(cwd):
        return f"the working directory does not exist: {cwd} (check --cwd)"
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {name}{_package_hint(name, argv)}"
    if isinstance(exc, PermissionError):
        return (
            f"cannot run {name}: permission denied (make it executable with "
            f"`chmod +x {shlex.quote(name)}`, or start it through its interpreter)"
        )
    return f"cannot start {name}: {exc.strerror or exc}"


def _exit_words(status: int | None) -> str:
    if status is None:
        return "the agent closed its stdout"
    if status < 0:
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = f"signal {-status}"
        return f"the agent was killed by {name}"
    return f"the agent exited with status {status}"


def early_exit(
    argv: Sequence[str], status: int | None, stderr_tail: str, stray: str | None = None
) -> str:
    """The agent went away before answering ``initialize``: its status, stderr and a hint.

    ``stray`` is the quoted first non-JSON line it wrote on stdout, if any.
    """
    text = f"{_exit_words(status)} before answering initialize"
    excerpt = stderr_excerpt(stderr_tail)
    text += f"; its stderr ended with:\n{excerpt}\n" if excerpt else " (nothing on stderr).\n"
    if stray is not None:
        return text + _stray_words(stray)
    return text + f"To see why, run the agent by itself: {_command(argv)}"


def _stray_words(stray: str) -> str:
    return (
        f"The agent wrote a line that is not JSON on stdout: {stray}\n"
        "stdout must carry only ACP messages; a stray print is the usual cause: "
        "write logs to stderr."
    )


def stray_output(stray: str, seconds: float) -> str:
    """The agent wrote non-JSON on stdout and then did not answer ``initialize``."""
    return f"{_stray_words(stray)} (It did not answer initialize in the {seconds:g} s after.)"


def not_answered(seconds: float, stderr_tail: str) -> str:
    """The agent stayed silent: no ``initialize`` answer within ``seconds``."""
    text = (
        f"the agent did not answer initialize within {seconds:g} s: is this the command "
        "that speaks ACP on stdio? (some agents need a flag such as --acp or --stdio)"
    )
    excerpt = stderr_excerpt(stderr_tail)
    return f"{text}; its stderr ended with:\n{excerpt}" if excerpt else text


class StrayLineScanner:
    """Finds the first stdout line that is not JSON, in chunks as they arrive.

    ``feed(chunk)`` returns the quoted line (see :func:`quote_line`) once, the first
    time a complete non-blank line fails to parse as JSON; None otherwise. Only the
    first :data:`SCAN_LIMIT` bytes of a line are kept: a longer line is judged by its
    first character, so memory stays bounded.
    """

    def __init__(self) -> None:
        self.found: str | None = None
        self._line = bytearray()
        self._overflow = False

    def feed(self, chunk: bytes) -> str | None:
        """Scan ``chunk``; return the first stray line found in it (only once)."""
        if self.found is not None:
            return None
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            self._add(chunk[start:end])
            start = end + 1
            if self._line_is_stray():
                self.found = quote_line(bytes(self._line))
                return self.found
            self._line.clear()
            self._overflow = False
        self._add(chunk[start:])
        return None

    def _add(self, part: bytes) -> None:
        room = SCAN_LIMIT - len(self._line)
        if len(part) > room:
            self._overflow = True
            part = part[: max(room, 0)]
        self._line += part

    def _line_is_stray(self) -> bool:
        stripped = bytes(self._line).strip()
        if not stripped:
            return False
        if stripped[:1] not in (b"{", b"["):
            return True
        if self._overflow:
            return False
        try:
            msgspec.json.decode(stripped)
        except msgspec.DecodeError:
            return True
        return False
