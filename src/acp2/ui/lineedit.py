"""A small line editor for the keys typed while the agent works (pure, no IO).

prompt_toolkit owns the terminal only between turns; during a turn the chat reads the
raw bytes itself and feeds them to :class:`LineEditor`, which keeps the line being
typed and reports events:

- ``("submit", text)``: Enter on a non-blank line (the prompt is queued);
- ``("thoughts", "")`` / ``("output", "")``: Ctrl-T / Ctrl-O (expand or collapse);
- ``("eof", "")``: Ctrl-D on an empty line (quit once the work is done);
- ``("interrupt", "")``: Esc on its own (:meth:`LineEditor.escape_alone`, called by the
  reader when no key followed the Esc in time).

Esc-Enter / Alt-Enter insert a newline, a bracketed paste is inserted as typed (its
newlines kept), Backspace, Ctrl-U (clear) and Ctrl-W (delete a word) edit; other
escape sequences (arrows, function keys) and control characters are ignored.
"""

from __future__ import annotations

import codecs
from typing import Final

__all__ = ["PASTE_END", "PASTE_START", "LineEditor"]

PASTE_START: Final = "\x1b[200~"
PASTE_END: Final = "\x1b[201~"

_KEY_EVENTS: Final = {"\x14": "thoughts", "\x0f": "output"}
#: Characters of one escape sequence or paste kept at most (a runaway paste is cut).
MAX_PENDING: Final = 1 << 20


class LineEditor:
    """Turns typed bytes into the current ``text`` and a list of events."""

    def __init__(self) -> None:
        self.text = ""
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._state = "normal"  # normal | esc | csi | ss3 | paste
        self._seq = ""

    def feed(self, data: bytes) -> list[tuple[str, str]]:
        """Process ``data``; return the events it completed, in order."""
        events: list[tuple[str, str]] = []
        for char in self._decoder.decode(data):
            event = self._char(char)
            if event is not None:
                events.append(event)
        return events

    def _char(self, char: str) -> tuple[str, str] | None:
        state = self._state
        if state == "paste":
            self._paste(char)
            return None
        if state == "esc":
            self._after_escape(char)
            return None
        if state in ("csi", "ss3"):
            self._sequence(char)
            return None
        return self._normal(char)

    def _normal(self, char: str) -> tuple[str, str] | None:
        if char in "\r\n":
            return self._submit()
        if char == "\x1b":
            self._state = "esc"
        elif char in ("\x7f", "\x08"):
            self.text = self.text[:-1]
        elif char == "\x15":
            self.text = ""
        elif char == "\x17":
            self.text = self.text.rstrip()
            self.text = self.text[: self.text.rfind(" ") + 1] if " " in self.text else ""
        elif char in _KEY_EVENTS:
            return (_KEY_EVENTS[char], "")
        elif char == "\x04":
            return ("eof", "") if not self.text else None
        elif char >= " " or char == "\t":
            self.text += " " if char == "\t" else char
        return None

    @property
    def escape_pending(self) -> bool:
        """True right after an Esc: a key may follow (Esc-Enter, an arrow's sequence)."""
        return self._state == "esc"

    def escape_alone(self) -> list[tuple[str, str]]:
        """Nothing followed the pending Esc in time: it was the Esc key itself."""
        if self._state != "esc":
            return []
        self._state = "normal"
        return [("interrupt", "")]

    def _submit(self) -> tuple[str, str] | None:
        text, self.text = self.text, ""
        return ("submit", text) if text.strip() else None

    def _after_escape(self, char: str) -> None:
        self._state = "normal"
        if char in "\r\n":
            self.text += "\n"
        elif char == "[":
            self._state, self._seq = "csi", ""
        elif char == "O":
            self._state = "ss3"
        elif char == "\x1b":
            self._state = "esc"

    def _sequence(self, char: str) -> None:
        if self._state == "ss3":
            self._state = "normal"
            return
        self._seq += char
        if "@" <= char <= "~" or len(self._seq) > 32:
            if self._seq == "200~":
                self._state, self._seq = "paste", ""
            else:
                self._state = "normal"

    def _paste(self, char: str) -> None:
        self._seq += char
        if self._seq.endswith(PASTE_END) or len(self._seq) > MAX_PENDING:
            pasted = self._seq.removesuffix(PASTE_END)
            self.text += pasted.replace("\r\n", "\n").replace("\r", "\n")
            self._state, self._seq = "normal", ""
