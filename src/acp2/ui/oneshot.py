"""What ``acp2 run`` shows: the reply streamed as it arrives, the permission question, and
JSON lines that are safe to print (no rich needed; prompt_toolkit only for one-key answers).

- :class:`ReplyStream`: an update listener that writes each agent message's new text as it
  arrives (sanitized with :func:`acp2.sanitize.prose`), messages separated by a blank
  line, so a person at a terminal sees the reply grow.
- :class:`RunAsker`: the ``ask`` permission policy. It writes the request to ``err`` with
  the same wording as the chat transcript (:func:`acp2.client.permission_text.request_text`: title,
  what will run, the diff, the raw input, ``[y] Allow once  [a] Always allow  [n] Reject``)
  and reads the answer: one key when ``stdin`` is a terminal, else a line.
- :func:`json_line`: a JSON text with C1 controls, DEL, bidi controls and line separators
  written as ``\\uXXXX`` escapes, so the same value never carries raw terminal controls.
- :class:`PermissionLog`: wraps a policy so that ``--json`` prints each request and its
  answer as ``{"permissionRequest": {...}, "n": 1}`` and
  ``{"permissionResponse": {"outcome": {...}}, "n": 1}``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import Any, Final, TextIO

from acp2 import sanitize
from acp2.client import PermissionPolicy, PermissionRequest
from acp2.client.permission_text import asked, choice_text, parse_choice, request_text
from acp2.client.permissions import run_policy, to_response
from acp2.schema import AgentMessage, AgentMessageChunk, PermissionOption
from acp2.schema.codec import encode
from acp2.ui.lines import LineReader

__all__ = ["Interrupt", "PermissionLog", "ReplyStream", "RunAsker", "json_line"]

_JSON_UNSAFE: Final = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def json_line(raw: bytes | str) -> str:
    """``raw`` JSON with every C1 control, DEL, bidi control and line separator escaped
    (``\\u009b``): the same JSON value, never a raw control on a terminal. (Raw C0
    controls cannot occur: JSON forbids them and acp2 rejects such frames.)"""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class ReplyStream:
    """An update listener (``session.add_listener``) writing agent message text to
    ``out`` as it arrives; ``session_state`` gives the reduced messages. ``wrote`` is
    True once anything was written; :meth:`end` finishes the last line."""

    def __init__(self, session_state: Callable[[], Any], out: TextIO) -> None:
        self.state = session_state
        self.out = out
        self.wrote = False
        self._raw: dict[str, str] = {}
        self._at_line_start = True

    def __call__(self, update: Any, raw: bytes) -> None:
        """Write the new text of the message ``update`` touched (other updates: nothing)."""
        if not isinstance(update, AgentMessageChunk | AgentMessage):
            return
        message = self.state().messages.get(("agent", update.message_id))
        if message is None:
            return
        self._show(update.message_id, message.text)

    def _show(self, message_id: str, text: str) -> None:
        before = self._raw.get(message_id)
        if before is None and self._raw:
            self._write("\n" if self._at_line_start else "\n\n")
        delta = text[len(before) :] if before is not None and text.startswith(before) else None
        if delta is None:
            delta = text if before is None else "\n" + text  # replaced: show it again
        self._raw[message_id] = text
        self._write(sanitize.prose(delta))

    def _write(self, text: str) -> None:
        if text:
            self.out.write(text)
            self.out.flush()
            self.wrote = True
            self._at_line_start = text.endswith("\n")

    def end(self) -> None:
        """End the reply with a newline (when something was written)."""
        if self.wrote and not self._at_line_start:
            self._write("\n")

    def break_line(self) -> None:
        """Start a new line before something else is shown on the terminal."""
        if not self._at_line_start:
            self._write("\n")


class Interrupt:
    """Ctrl-C pressed at a permission question of ``acp2 run``: calling it sets
    ``pressed`` and cancels ``scope`` (the wait for the turn), so the turn is cancelled."""

    def __init__(self) -> None:
        self.pressed = False
        self.scope: Any = None

    def __call__(self) -> None:
        """Record the key press and stop waiting for the turn."""
        self.pressed = True
        if self.scope is not None:
            self.scope.cancel()


class RunAsker:
    """The ``ask`` policy of ``acp2 run``: the request on ``err``, the answer from
    ``stdin`` (one key on a terminal, a line otherwise). ``before`` runs first (it ends
    the streamed line). Ctrl-C at the one-key question declines the request and calls
    ``interrupt`` (``acp2 run`` cancels the turn with it), as the question's help says."""

    def __init__(
        self,
        stdin: TextIO,
        err: TextIO,
        before: Callable[[], None] | None = None,
        interrupt: Callable[[], None] | None = None,
    ) -> None:
        self.stdin = stdin
        self.err = err
        self.before = before
        self.interrupt = interrupt
        self._lines = LineReader(stdin)

    async def __call__(self, request: PermissionRequest) -> PermissionOption | None:
        """Ask about ``request`` and return the chosen option (None: declined)."""
        if self.before is not None:
            self.before()
        # On a terminal the one-key chooser lists the options: print them only once.
        keys = _is_terminal(self.stdin) and _is_terminal(self.err)
        self.err.write(request_text(request, offers=not keys) + "\n")
        self.err.flush()
        option = await self._read(request)
        self.err.write(f"-> {choice_text(option)}\n")
        self.err.flush()
        return option

    async def _read(self, request: PermissionRequest) -> PermissionOption | None:
        if _is_terminal(self.stdin) and _is_terminal(self.err):
            return await self._key(request)
        self.err.write(f"choose [{asked(request).hint}]: ")
        self.err.flush()
        choice = parse_choice(request, await self._lines.readline())
        return choice if isinstance(choice, PermissionOption) else None

    async def _key(self, request: PermissionRequest) -> PermissionOption | None:
        from prompt_toolkit.output import create_output

        from acp2.ui.keys import SHOW_RAW, KeyChooser

        shown = asked(request)
        output = create_output(stdout=self.err)
        chooser = KeyChooser(shown, output=output)
        while True:
            try:
                choice = await chooser.choose()
            except KeyboardInterrupt:
                if self.interrupt is not None:
                    self.interrupt()
                return None
            except EOFError:
                return None
            if choice != SHOW_RAW:
                option = choice if isinstance(choice, PermissionOption) else None
                await self._remember(request, option, output)
                return option
            self.err.write(f"raw input:\n{shown.raw_input_full}\n")

    async def _remember(self, request: PermissionRequest, option: Any, output: Any) -> None:
        """After an "always" answer, offer to save it as a rule (:mod:`acp2.ui.remember`)."""
        from acp2.ui.remember import offer_to_remember

        said = await offer_to_remember(request, option, output)
        if said is not None:
            self.err.write(said + "\n")


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class PermissionLog:
    """A policy that runs ``policy`` and writes the request and its answer as JSON lines
    with ``write`` (see the module doc)."""

    def __init__(self, policy: PermissionPolicy, write: Callable[[str], None]) -> None:
        self.policy = policy
        self.write = write
        self.count = 0

    async def __call__(self, request: PermissionRequest) -> PermissionOption | str | None:
        """Log ``request``, decide it with the wrapped policy, log the response."""
        self.count += 1
        number = self.count
        params = json_line(encode(request.params))
        self.write(f'{{"permissionRequest":{params},"n":{number}}}')
        choice = await run_policy(self.policy, request)
        response = json_line(encode(to_response(choice, request.params.options)))
        self.write(f'{{"permissionResponse":{response},"n":{number}}}')
        return choice


def stdin_prompt(stream: TextIO | None = None) -> str:
    """The prompt read from ``stream`` (default stdin) up to its end, without the final
    newline: what ``-`` as the prompt of ``acp2 run`` means."""
    text = (stream or sys.stdin).read()
    return text[:-1] if text.endswith("\n") else text
