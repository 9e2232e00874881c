"""The :class:`Turn`: everything a prompt handler may report while it works.

A handler receives one Turn per piece of foreground work. Text and thoughts stream as
chunks under a stable ``messageId`` (call :meth:`Turn.new_message` to start another
message); tool calls and terminals are handles whose methods send upserts and chunks;
:meth:`Turn.request_permission`, :meth:`Turn.elicit` and :meth:`Turn.elicit_url` ask the
client and report ``requires_action`` / ``running`` around the wait. The handler's
return value is the stop reason.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from msgspec import UNSET

from acp2.agent import arguments
from acp2.agent.elicit import ElicitationResult, check_mode, elicit, form_request, url_request
from acp2.agent.handles import TerminalHandle, ToolCallHandle
from acp2.agent.permission import PermissionResult, ask_permission
from acp2.agent.tokens import add_tokens, token_counts
from acp2.schema import (
    AgentMessage,
    AgentMessageChunk,
    AgentThoughtChunk,
    AvailableCommand,
    AvailableCommandsUpdate,
    Cost,
    ElicitationSchema,
    PlanEntry,
    PlanItems,
    PlanUpdate,
    TextContent,
    Usage,
    UsageUpdate,
)

if TYPE_CHECKING:
    from acp2.agent.children import ChildBody, Delegation
    from acp2.agent.context import TurnContext
    from acp2.agent.mcp import SessionMcp
    from acp2.agent.session import AgentSession
    from acp2.schema import ContentBlock, PermissionOption, SessionUpdate

__all__ = ["Turn"]


class Turn:
    """One piece of foreground work in a session, as seen by the agent author.

    ``prompt`` is the list of content blocks the user sent (empty for agent-initiated
    work), ``message_id`` the id of the inserted user message (None for agent-initiated
    work), ``session`` the :class:`~acp2.agent.session.AgentSession`. The runtime creates
    turns; ``context`` is all a turn reaches of it (:class:`~acp2.agent.context.TurnContext`).
    """

    def __init__(
        self,
        context: TurnContext,
        prompt: Sequence[ContentBlock],
        message_id: str | None,
    ) -> None:
        self._context = context
        self.session: AgentSession = context.session
        self._emitter = context.emitter
        self.prompt = list(prompt)
        self.message_id = message_id
        self._agent_msg: str | None = None
        self._thought_msg: str | None = None
        self._tool_calls: dict[str, ToolCallHandle] = {}
        self._terminals: dict[str, TerminalHandle] = {}
        self._waiting = 0
        #: The token counts reported with :meth:`tokens`, sent on this work's idle.
        self.token_usage: Usage | None = None

    @property
    def mcp(self) -> SessionMcp:
        """The session's MCP servers: ``await turn.mcp.servers()`` (see :mod:`acp2.agent.mcp`)."""
        return self.session.mcp

    @property
    def text(self) -> str:
        """The text of the prompt: its text blocks joined by newlines."""
        return "\n".join(b.text for b in self.prompt if isinstance(b, TextContent))

    @property
    def cancelled(self) -> bool:
        """True once the client asked to cancel this work, or its connection was found
        closed (the handler is being cancelled)."""
        return self.session.cancel_requested

    # -- messages -----------------------------------------------------------------

    def new_message(self) -> None:
        """Make the next :meth:`say` / :meth:`think` start a new message."""
        self._agent_msg = None
        self._thought_msg = None

    async def say(self, text: str) -> str:
        """Stream ``text`` as an ``agent_message_chunk``; return the message id.

        Raises ``TypeError`` (nothing sent) when ``text`` is not a string."""
        if type(text) is not str:
            arguments.text(text, "say()")
        if self._agent_msg is None:
            self._agent_msg = self.session.new_message_id("agent")
        await self._emitter.emit_async(
            AgentMessageChunk(message_id=self._agent_msg, content=TextContent(text=text))
        )
        return self._agent_msg

    async def think(self, text: str) -> str:
        """Stream ``text`` as an ``agent_thought_chunk``; return the thought's message id.

        Raises ``TypeError`` (nothing sent) when ``text`` is not a string."""
        if type(text) is not str:
            arguments.text(text, "think()")
        if self._thought_msg is None:
            self._thought_msg = self.session.new_message_id("thought")
        await self._emitter.emit_async(
            AgentThoughtChunk(message_id=self._thought_msg, content=TextContent(text=text))
        )
        return self._thought_msg

    async def message(
        self, content: str | Sequence[ContentBlock | str] | None, *, message_id: str | None = None
    ) -> str:
        """Upsert a whole agent message (replace, or clear with None); return its id.

        ``content`` is a string, a content block, or a list of them (strings become text
        blocks); anything else raises ``TypeError`` and nothing is sent.
        """
        blocks = None if content is None else arguments.content_blocks(content, "message()")
        mid = message_id or self.session.new_message_id("agent")
        await self._emitter.emit_async(AgentMessage(message_id=mid, content=blocks))
        return mid

    # -- plans, usage, commands ----------------------------------------------------

    async def plan(
        self, entries: Sequence[PlanEntry | str | Mapping[str, Any]], *, plan_id: str = "plan"
    ) -> None:
        """Send the full entry list of plan ``plan_id`` (PN-02: a full replacement).

        Each entry is a ``PlanEntry``, a dict (``content``, and optional ``priority``
        -- default ``medium`` -- and ``status`` -- default ``pending``), or a string (its
        content). Anything else, or a single entry instead of a list, raises ``TypeError``.
        """
        items = arguments.plan_entries(entries, "plan()")
        arguments.text(plan_id, "plan(plan_id=)")
        await self._emitter.emit_async(PlanUpdate(plan=PlanItems(plan_id=plan_id, entries=items)))

    async def usage(self, used: int, size: int, *, cost: tuple[float, str] | None = None) -> None:
        """Report context usage in tokens, with an optional cumulative ``(amount, currency)``."""
        update = UsageUpdate(used=used, size=size)
        if cost is not None:
            update.cost = Cost(amount=cost[0], currency=cost[1])
        await self._emitter.emit_async(update)

    def tokens(
        self,
        input_tokens: int,
        output_tokens: int,
        *,
        thought: int | None = None,
        cached_read: int | None = None,
        cached_write: int | None = None,
    ) -> None:
        """Count tokens this work spent (one model exchange, say); the sum of every call
        goes out as ``usage`` on the idle that ends the work (Preview, an extra key every
        draft allows there), ``totalTokens`` being input plus output. Negative or non-int
        counts raise ``TypeError`` / ``ValueError`` and count nothing."""
        counts = token_counts(input_tokens, output_tokens, thought, cached_read, cached_write)
        self.token_usage = add_tokens(self.token_usage, *counts)

    async def commands(self, commands: Sequence[AvailableCommand | Mapping[str, Any]]) -> None:
        """Replace the session's available slash commands (models or dicts with ``name``
        and ``description``; ``TypeError`` otherwise)."""
        checked = arguments.commands(commands, "commands()")
        await self._emitter.emit_async(AvailableCommandsUpdate(available_commands=checked))

    async def send(self, update: SessionUpdate) -> None:
        """Send any session update as it is (the escape hatch for custom ``_`` variants)."""
        await self._emitter.emit_async(update)

    async def delegate(
        self,
        task: str,
        body: ChildBody,
        *,
        title: str | None = None,
        description: str | None = None,
        cancellable: bool = True,
        tool_call: ToolCallHandle | None = None,
    ) -> Delegation:
        """Run ``task`` in a child session of this turn's session (Preview subagents) and
        wait for its report: see :func:`acp2.agent.children.delegate`."""
        from acp2.agent.children import delegate  # here: most agents never delegate

        return await delegate(
            self.session,
            task,
            body,
            title=title,
            description=description,
            cancellable=cancellable,
            tool_call=tool_call,
        )

    # -- tool calls and terminals ----------------------------------------------------

    async def tool_call(
        self,
        title: str,
        *,
        kind: str = "other",
        raw_input: Any = UNSET,
        locations: Any = UNSET,
        name: Any = UNSET,
        content: Any = UNSET,
        tool_call_id: str | None = None,
    ) -> ToolCallHandle:
        """Report a new tool call (status ``pending``) and return its handle.

        ``content`` (one item or a list, as for :meth:`ToolCallHandle.add_content`, e.g. a
        diff preview) goes out with the first update, so no second ``tool_call_update`` is
        needed for it. Arguments that do not fit raise ``TypeError``; nothing is sent.
        The handle can outlive this turn: ``await handle.detach(body)`` moves it to the
        background (:class:`~acp2.agent.background.Cancellable`).
        """
        arguments.text(title, "tool_call() title")
        call_id = tool_call_id or self._next_id("call")
        handle = ToolCallHandle(self._emitter, call_id, self.session)
        self._tool_calls[call_id] = handle
        await handle.update(
            title=title,
            kind=kind,
            status="pending",
            raw_input=raw_input,
            locations=locations,
            name=name,
            content=content,
        )
        return handle

    async def terminal(
        self, command: str | None = None, *, cwd: str | None = None
    ) -> TerminalHandle:
        """Open a display-only terminal (TM-01: the agent owns its id) and return its handle
        (detach it to keep a process running after the turn, as for tool calls)."""
        handle = TerminalHandle(self._emitter, self._next_id("term"), self.session)
        self._terminals[handle.terminal_id] = handle
        await handle.start(command=command, cwd=cwd or self.session.cwd)
        return handle

    def _next_id(self, prefix: str) -> str:
        return f"{prefix}_{secrets.token_hex(6)}"

    def unfinished_tool_calls(self) -> list[ToolCallHandle]:
        """Tool calls of this turn that have not reached a final status, but for those
        detached to the background (they outlive the turn, D-15)."""
        return [h for h in self._tool_calls.values() if not h.finished and not h.detached]

    # -- permissions ------------------------------------------------------------------

    async def request_permission(
        self,
        title: str,
        *,
        options: Sequence[PermissionOption | Mapping[str, Any]] | None = None,
        description: str | None = None,
        tool_call: ToolCallHandle | None = None,
        command: str | None = None,
        cwd: str | None = None,
    ) -> PermissionResult:
        """Ask the user; report ``requires_action`` while waiting and ``running`` after.

        Returns the user's choice. An unknown outcome, or an option that was not offered,
        is never an approval (PR-08). Cancellation of the turn cancels the request
        (the client gets ``$/cancel_request``). ``options`` are ``PermissionOption``
        models or dicts (``option_id``, ``name``, ``kind``); default: allow / reject, once
        / always. Arguments that do not fit raise ``TypeError`` before anything is sent.
        """
        arguments.text(title, "request_permission() title")
        if options is not None:
            options = arguments.permission_options(options, "request_permission(options=)")
        async with self._blocked():
            return await ask_permission(
                self._context.ask_permission,
                self.session.id,
                self.session.cwd,
                title,
                options=options,
                description=description,
                tool_call=tool_call,
                command=command,
                cwd=cwd,
            )

    # -- elicitation ------------------------------------------------------------------

    async def elicit(
        self,
        message: str,
        *,
        schema: ElicitationSchema | Mapping[str, Any],
        tool_call: ToolCallHandle | None = None,
    ) -> ElicitationResult:
        """Ask the user to fill in a form (``elicitation/create``, form mode); report
        ``requires_action`` while waiting and ``running`` after, as a permission wait does.

        ``schema`` is an :class:`~acp2.schema.ElicitationSchema` or its JSON form (a flat
        object of primitive fields, EL-04; never ask for secrets this way, EL-06).
        Returns accept (with ``content`` checked against ``schema``), decline or cancel.
        Raises :class:`~acp2.agent.ElicitationUnsupported` (nothing sent) when the client
        did not advertise form mode, ``TypeError`` for a bad schema,
        :class:`~acp2.agent.ElicitationContentError` when the accepted content does not
        fit the schema. Cancelling the work withdraws the request (``$/cancel_request``).
        """
        arguments.text(message, "elicit() message")
        check_mode(self._context.client_capabilities(), "form")
        call_id = tool_call.tool_call_id if tool_call is not None else None
        request = form_request(self.session.id, message, schema, call_id)
        async with self._blocked():
            return await elicit(self._context.elicit, request)

    async def elicit_url(
        self,
        message: str,
        *,
        url: str,
        elicitation_id: str | None = None,
        tool_call: ToolCallHandle | None = None,
    ) -> ElicitationResult:
        """Ask the user to open ``url`` (``elicitation/create``, URL mode), with
        ``requires_action`` / ``running`` around the wait like :meth:`elicit`.

        The result's ``elicitation_id`` is ``elicitation_id`` or a fresh unique one;
        ``accept`` means only that the user agreed to open the link (EL-10): when the
        out-of-band flow has finished, call :meth:`complete_elicitation` with that id.
        Raises :class:`~acp2.agent.ElicitationUnsupported` (nothing sent) when the client
        did not advertise URL mode -- fall back without a form (EL-06).
        """
        arguments.text(message, "elicit_url() message")
        arguments.text(url, "elicit_url() url")
        check_mode(self._context.client_capabilities(), "url")
        call_id = tool_call.tool_call_id if tool_call is not None else None
        request = url_request(self.session.id, message, url, elicitation_id, call_id)
        async with self._blocked():
            return await elicit(self._context.elicit, request)

    async def complete_elicitation(self, elicitation_id: str) -> None:
        """Send ``elicitation/complete``: the URL elicitation's out-of-band flow finished
        (EL-11; sent only on the connection the request went to). Not a state change."""
        await self._context.complete_elicitation(elicitation_id)

    @asynccontextmanager
    async def _blocked(self) -> AsyncIterator[None]:
        """Report ``requires_action`` while the body waits for the user, ``running`` after
        the last wait ends (PL-09, EL-14)."""
        # Only the session's current work reports states: a task the handler leaked past
        # its idle must not make an idle session look busy.
        active = self.session.is_current(self)
        self._waiting += 1
        if self._waiting == 1 and active:
            self.session.report("block")
        try:
            yield
        finally:
            self._waiting -= 1
            still_active = active and self.session.is_current(self)
            if self._waiting == 0 and still_active and not self.session.cancel_requested:
                self.session.report("unblock")
