"""The keys typed while the agent works: read, edited, queued.

During a turn prompt_toolkit is not reading, so :class:`TurnKeys` reads the terminal
itself (through a duplicate of its file descriptor, so the selector never confuses it
with prompt_toolkit's reader), only while the live region is on screen: a permission
prompt pauses the region, and with it this reader. Bytes go to a
:class:`~acp2.ui.lineedit.LineEditor`; the line being typed and the queued prompts are drawn
in the live region. Esc on its own interrupts the turn (as Ctrl-C does once); ``/cancel``
takes effect at once (and ``/bg``, ``/cancel-bg``: they
do not touch the turn); an observer's prompt is refused at once; every other line is
queued and sent, in order, once the agent is idle. Bracketed paste is switched on meanwhile, so a
pasted text with newlines stays one prompt.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, TextIO

import anyio

from acp2.ui.commands import parse_line
from acp2.ui.lineedit import LineEditor
from acp2.ui.live import PausableLive
from acp2.ui.watching import OBSERVER_READ_ONLY

if TYPE_CHECKING:
    from acp2.ui.interactive import InteractiveChat

__all__ = [
    "AT_ONCE",
    "BRACKETED_PASTE_OFF",
    "BRACKETED_PASTE_ON",
    "ESC_WAIT",
    "TurnKeys",
    "quiet_input",
]

#: Built-ins typed during a turn that run at once instead of waiting in the queue
#: (background work and subagents run beside the turn; ``/steer`` goes into it;
#: ``/cancel`` has its own path).
AT_ONCE = frozenset({"bg", "cancel-bg", "subagents", "subagent", "cancel-subagent", "steer"})

#: Seconds a key may follow Esc and make one key with it (Esc-Enter); prompt_toolkit's
#: default too. After that the Esc alone interrupts the turn.
ESC_WAIT = 0.5

BRACKETED_PASTE_ON = "\x1b[?2004h"
BRACKETED_PASTE_OFF = "\x1b[?2004l"


@contextlib.contextmanager
def quiet_input(stream: TextIO) -> Iterator[None]:
    """Keys typed outside a prompt are neither echoed (over the live region) nor
    line-buffered: they wait, byte for byte, for the next prompt, so a Ctrl-D typed as a
    turn ends still quits. Ctrl-C still raises SIGINT. prompt_toolkit switches to raw
    mode for each prompt and back to this afterwards. No-op off a terminal."""
    try:
        import termios

        fd = stream.fileno()
        saved = termios.tcgetattr(fd)
    except (ImportError, OSError, ValueError):
        yield
        return
    quiet = list(saved)
    quiet[3] &= ~(termios.ECHO | termios.ICANON)
    termios.tcsetattr(fd, termios.TCSANOW, quiet)
    try:
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSANOW, saved)


def _terminal_fd(stream: TextIO) -> int | None:
    try:
        fd = stream.fileno()
    except (OSError, ValueError, AttributeError):
        return None
    return fd if os.isatty(fd) else None


class TurnKeys:
    """Reads the keys of one turn for ``chat``; ``editor.text`` is what is being typed."""

    def __init__(self, chat: InteractiveChat) -> None:
        self.chat = chat
        self.editor = LineEditor()
        self._reading = False
        self._paste_for = -1  # the live region's start count paste mode was set for
        self._frame = anyio.Event()  # set at each frame of the chat

    async def run(self, live: PausableLive) -> None:
        """Read until cancelled (no-op when stdin is not a terminal)."""
        fd = _terminal_fd(self.chat.stdin)
        if fd is None:
            return
        copy = os.dup(fd)
        self._reading = True
        try:
            await self._read(copy, live)
        finally:
            self._reading = False
            os.close(copy)
            self._paste_mode(False)

    def tick(self, live: PausableLive) -> None:
        """Called at each frame: after a pause (a permission prompt switched bracketed
        paste off on leaving), switch it on again."""
        frame, self._frame = self._frame, anyio.Event()
        frame.set()
        if self._reading and live.active and live.starts != self._paste_for:
            self._paste_for = live.starts
            self._paste_mode(True)

    async def _read(self, fd: int, live: PausableLive) -> None:
        while True:
            if not live.active:
                await live.wait_active()
            self.tick(live)
            await anyio.wait_readable(fd)
            if not live.active:
                continue  # paused for a permission prompt: it reads this key
            if self.chat.asker.busy:
                # A permission question that keeps the region on screen reads the keys
                # itself; the fd stays readable until it does: wait a frame, do not spin.
                await self._frame.wait()
                continue
            try:
                data = os.read(fd, 4096)
            except BlockingIOError:
                continue
            if not data:
                return
            for kind, text in self.editor.feed(data):
                self.handle(kind, text)
            if self.editor.escape_pending:
                await self._escape(fd)

    async def _escape(self, fd: int) -> None:
        """An Esc with nothing after it in the same read: when no key follows within
        :data:`ESC_WAIT` (as prompt_toolkit decides), it is the Esc key: interrupt."""
        with anyio.move_on_after(ESC_WAIT) as waited:
            await anyio.wait_readable(fd)
        if waited.cancelled_caught:
            for kind, text in self.editor.escape_alone():
                self.handle(kind, text)

    def handle(self, kind: str, text: str) -> None:
        """Act on one editor event."""
        chat = self.chat
        if kind == "interrupt":
            chat.interrupt()
        elif kind == "thoughts":
            chat.toggle_thoughts()
        elif kind == "output":
            chat.toggle_output()
        elif kind == "eof":
            chat.leaving = True
            if chat.region is not None:
                chat.region.hint = "ctrl-d: leaving once the agent is idle"
        elif kind == "submit":
            names = [str(getattr(c, "name", "")) for c in chat.session.state.available_commands]
            parsed = parse_line(text.strip(), names)
            if parsed.kind == "builtin" and parsed.name == "cancel":
                chat.request_cancel()
            elif parsed.kind == "builtin" and parsed.name in AT_ONCE:
                chat.run_at_once(parsed.name, parsed.arg)
            elif (
                parsed.kind not in ("builtin", "unknown")
                and chat.session.role == "observer"
                and not text.strip().startswith("!")  # a local command: an observer may
            ):
                chat.note(OBSERVER_READ_ONLY)  # refused now: queueing it would promise a send
            else:
                chat.queue.append(text.strip())

    def _paste_mode(self, on: bool) -> None:
        with contextlib.suppress(OSError, ValueError):
            out = self.chat.console.file
            out.write(BRACKETED_PASTE_ON if on else BRACKETED_PASTE_OFF)
            out.flush()
