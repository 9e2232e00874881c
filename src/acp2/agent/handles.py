"""Handles for the entities a turn reports: tool calls and display-only terminals.

Both can be detached to the background and advertise ``cancel``
(:class:`~acp2.agent.background.Cancellable`, RFD "v2 Background Work").
"""

from __future__ import annotations

import base64
from typing import Any, Literal

from msgspec import UNSET

from acp2.agent import arguments
from acp2.agent.background import BackgroundOwner, Cancellable
from acp2.agent.emitter import Emitter
from acp2.schema import (
    BackgroundTerminal,
    BackgroundToolCall,
    SessionReference,
    Terminal,
    TerminalCancelCapabilities,
    TerminalCapabilities,
    TerminalExitStatus,
    TerminalOutput,
    TerminalOutputChunk,
    TerminalUpdate,
    ToolCallCancelCapabilities,
    ToolCallCapabilities,
    ToolCallContentChunk,
    ToolCallUpdate,
)

__all__ = ["FINAL_STATUSES", "TerminalHandle", "ToolCallHandle"]

#: Tool-call statuses after which a call is finished.
FINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})


class ToolCallHandle(Cancellable):
    """A tool call reported by the agent; each method sends one ``tool_call_update``.

    Patch rules apply (TC-03): a keyword left out is unchanged, ``None`` clears it.
    ``session`` (given by :meth:`Turn.tool_call <acp2.agent.Turn.tool_call>`) lets the
    call be detached and cancelled (:class:`~acp2.agent.background.Cancellable`); the
    final update of a call that advertised ``cancel`` withdraws it.
    """

    kind: Literal["tool_call"] = "tool_call"

    def __init__(
        self, emitter: Emitter, tool_call_id: str, session: BackgroundOwner | None = None
    ) -> None:
        self.tool_call_id = tool_call_id
        self.status = "pending"
        self._emitter = emitter
        self._init_cancellable(session)

    @property
    def item_id(self) -> str:
        """The tool call id."""
        return self.tool_call_id

    @property
    def session_id(self) -> str:
        """The id of the session the call was reported in."""
        return self._emitter.session_id

    @property
    def finished(self) -> bool:
        """True once the call reached ``completed``, ``failed`` or ``cancelled``."""
        return self.status in FINAL_STATUSES

    def listing(self) -> BackgroundToolCall:
        """The call as a ``background`` entry."""
        return BackgroundToolCall(tool_call_id=self.tool_call_id)

    async def update(self, **fields: Any) -> None:
        """Send a patch: any ToolCallUpdate field (title, kind, status, content, ...).

        ``content`` takes one item or a list (see :meth:`add_content` for what an item
        may be), ``locations`` paths or ``ToolCallLocation``; a value that does not fit
        raises ``TypeError`` and nothing is sent.
        """
        patch = _patch(fields)
        was_finished = self.finished
        status = patch.get("status")
        if isinstance(status, str):
            self.status = status
        elif "status" in patch:
            self.status = "pending"
        ending = self.finished and not was_finished
        if ending and self._final_capabilities() and "capabilities" not in patch:
            patch["capabilities"] = ToolCallCapabilities()  # cancel no longer advertised
        await self._emitter.emit_async(ToolCallUpdate(tool_call_id=self.tool_call_id, **patch))
        if ending:
            self._ended()  # after its final update: the next snapshot drops it (PL-25)

    async def _announce_cancel(self, advertised: bool) -> None:
        cancel = ToolCallCancelCapabilities() if advertised else UNSET
        await self.update(capabilities=ToolCallCapabilities(cancel=cancel))

    async def _finalize(self, *, failed: bool) -> None:
        if failed:
            await self.fail()
        elif self.cancel_requested:
            await self.cancel()
        else:
            await self.complete()

    async def start(self) -> None:
        """Mark the call ``in_progress`` (after any permission, PL-13)."""
        await self.update(status="in_progress")

    async def add_content(self, content: Any) -> None:
        """Append one item to the call's content with ``tool_call_content_chunk`` (TC-05).

        ``content`` is a string (sent as text), a content block (``TextContent``,
        ``ImageContent``, ``ResourceLink``, ...), tool-call content (``Content``,
        ``Diff``, ``Terminal``), the dict of any of these, or a :class:`TerminalHandle`.
        Anything else raises ``TypeError`` and nothing is sent.
        """
        item = arguments.tool_call_content(content, "add_content()")
        await self._emitter.emit_async(
            ToolCallContentChunk(tool_call_id=self.tool_call_id, content=item)
        )

    async def show_terminal(self, terminal: TerminalHandle) -> None:
        """Append a reference to a display-only terminal to the call's content."""
        await self.add_content(Terminal(terminal_id=terminal.terminal_id))

    async def show_session(self, session_id: str) -> None:
        """Append a reference to the session ``session_id`` to the call's content (Preview
        ``session`` content: the call delegated to, messaged or waited on it). The client
        must already know that session: a child is announced before it is referenced
        (:meth:`AgentSession.spawn_child <acp2.agent.session.AgentSession.spawn_child>`
        with ``tool_call=`` does both, in that order)."""
        await self.add_content(
            SessionReference(session_id=arguments.text(session_id, "show_session()"))
        )

    async def complete(self, *, content: Any = UNSET, raw_output: Any = UNSET) -> None:
        """Mark the call ``completed``, optionally replacing its content (one item or a
        list, as for :meth:`add_content`; ``None`` clears it)."""
        await self.update(status="completed", content=content, raw_output=raw_output)

    async def fail(self, *, content: Any = UNSET, raw_output: Any = UNSET) -> None:
        """Mark the call ``failed``, optionally replacing its content (one item or a
        list, as for :meth:`add_content`, e.g. the error text; ``None`` clears it)."""
        await self.update(status="failed", content=content, raw_output=raw_output)

    async def cancel(self) -> None:
        """Mark the call ``cancelled``."""
        await self.update(status="cancelled")


_TEXT_FIELDS = ("title", "kind", "status", "name")


def _patch(fields: dict[str, Any]) -> dict[str, Any]:
    """The fields given (UNSET left out), checked: TypeError before anything is sent."""
    patch = {k: v for k, v in fields.items() if v is not UNSET}
    for key in _TEXT_FIELDS:
        if key in patch:
            arguments.optional_text(patch[key], f"{key}=")
    if "content" in patch:
        patch["content"] = arguments.tool_call_contents(patch["content"], "content=")
    if "locations" in patch:
        patch["locations"] = arguments.locations(patch["locations"], "locations=")
    return patch


class TerminalHandle(Cancellable):
    """A display-only terminal owned by the agent (TM-01).

    Output is sent as base64 ``terminal_output_chunk`` updates, in order; the exit status
    as a ``terminal_update`` patch. With a ``session`` (given by :meth:`Turn.terminal
    <acp2.agent.Turn.terminal>`) the terminal can be detached and cancelled
    (:class:`~acp2.agent.background.Cancellable`); a cancel request means "stop the
    process", confirmed by :meth:`exit` -- it does not release the terminal.
    """

    kind: Literal["terminal"] = "terminal"

    def __init__(
        self, emitter: Emitter, terminal_id: str, session: BackgroundOwner | None = None
    ) -> None:
        self.terminal_id = terminal_id
        self.exited = False
        self._emitter = emitter
        self._init_cancellable(session)

    @property
    def item_id(self) -> str:
        """The terminal id."""
        return self.terminal_id

    @property
    def finished(self) -> bool:
        """True once the terminal reported its exit."""
        return self.exited

    def listing(self) -> BackgroundTerminal:
        """The terminal as a ``background`` entry."""
        return BackgroundTerminal(terminal_id=self.terminal_id)

    async def _announce_cancel(self, advertised: bool) -> None:
        cancel = TerminalCancelCapabilities() if advertised else UNSET
        update = TerminalUpdate(
            terminal_id=self.terminal_id, capabilities=TerminalCapabilities(cancel=cancel)
        )
        await self._emitter.emit_async(update)

    async def _finalize(self, *, failed: bool) -> None:
        await self.exit()

    async def start(self, *, command: str | None, cwd: str | None) -> None:
        """Announce the terminal with its command and absolute cwd (TM-04)."""
        arguments.optional_text(command, "terminal() command")
        arguments.optional_text(cwd, "terminal(cwd=)")
        update = TerminalUpdate(terminal_id=self.terminal_id)
        if command is not None:
            update.command = command
        if cwd is not None:
            update.cwd = cwd
        await self._emitter.emit_async(update)

    async def write(self, data: bytes | str) -> None:
        """Append raw output bytes (any split: clients decode chunks separately, TM-06);
        a string is sent as UTF-8. Anything else raises ``TypeError``."""
        data = _output_bytes(data, "write()")
        if data:
            await self._emitter.emit_async(
                TerminalOutputChunk(
                    terminal_id=self.terminal_id, data=base64.b64encode(data).decode("ascii")
                )
            )

    async def snapshot(self, data: bytes | str) -> None:
        """Replace everything the client holds for this terminal with ``data`` (TM-05);
        a string is sent as UTF-8."""
        data = _output_bytes(data, "snapshot()")
        await self._emitter.emit_async(
            TerminalUpdate(
                terminal_id=self.terminal_id,
                output=TerminalOutput(data=base64.b64encode(data).decode("ascii")),
            )
        )

    async def exit(self, exit_code: int | None = None, signal: str | None = None) -> None:
        """Report the exit status; the terminal counts as finished (TM-07). A terminal
        that advertised ``cancel`` withdraws it in the same update, and a background one
        leaves the background after it."""
        status = TerminalExitStatus()
        if exit_code is not None:
            status.exit_code = exit_code
        if signal is not None:
            status.signal = signal
        ending = not self.exited
        self.exited = True
        update = TerminalUpdate(terminal_id=self.terminal_id, exit_status=status)
        if ending and self._final_capabilities():
            update.capabilities = TerminalCapabilities()
        await self._emitter.emit_async(update)
        if ending:
            self._ended()


def _output_bytes(data: bytes | str, what: str) -> bytes:
    if isinstance(data, str):
        return data.encode("utf-8")
    if isinstance(data, bytes | bytearray | memoryview):
        return bytes(data)
    raise TypeError(f"{what} takes bytes or a string, not {type(data).__name__}")
