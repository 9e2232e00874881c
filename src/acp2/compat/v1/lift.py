"""v1 -> v2 lifting: a v1 agent's session seen through the v2 model an acp2 client uses.

:class:`V1Lifter` is the per-session state. :meth:`V1Lifter.lift` turns one v1
``session/update`` into the v2 updates :func:`acp2.state.reduce` accepts, and the prompt
methods synthesize the v2 lifecycle v1 does not send: the user message (with a
client-generated ``messageId``) and ``running`` when the prompt is sent, ``idle`` with the
stop reason when the v1 ``session/prompt`` answer arrives. Pure: no IO, no event loop.

v1 reads ``null`` in a tool call patch as "unchanged", so it lifts to an omitted field.
The v1 subagent updates (``subagent_update``, ``session_message``, ``session_message_chunk``:
acp2's client opts in with ``clientCapabilities.subagents``) read as their v2 models.
Other unknown v1 update kinds are passed on as ``msgspec.Raw`` (the reducer keeps them in
``SessionState.unknown``) and counted in :attr:`V1Lifter.unknown`.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any, Final

import msgspec
from msgspec import UNSET, Raw

import acp2.compat.v1.lift_params as hot
import acp2.compat.v1.schema as v1
import acp2.schema as v2
from acp2.compat.v1.convert import (
    Drops,
    block_from_v1,
    blocks_to_v1,
    commands_from_v1,
    config_options_from_v1,
    recode,
)
from acp2.compat.v1.lift_options import has_option, unique_options, with_current_value
from acp2.compat.v1.tool_fields import locations_from_v1, tool_content_from_v1
from acp2.schema import tag_of
from acp2.schema.codec import decode

__all__ = ["MAIN_PLAN_ID", "MODE_CONFIG_ID", "V1Lifter"]

#: The ``planId`` of the one v1 plan.
MAIN_PLAN_ID: Final = "main"
#: The ``configId`` of the select option synthesized from v1 session modes.
MODE_CONFIG_ID: Final = "mode"

_CHUNKS: Final[dict[type, tuple[str, type]]] = {
    v1.UserMessageChunk: ("user", v2.UserMessageChunk),
    v1.AgentMessageChunk: ("agent", v2.AgentMessageChunk),
    v1.AgentThoughtChunk: ("thought", v2.AgentThoughtChunk),
    # The same kinds as the bridge decodes them (acp2.compat.v1.lift_params).
    hot.UserMessageChunk: ("user", v2.UserMessageChunk),
    hot.AgentMessageChunk: ("agent", v2.AgentMessageChunk),
    hot.AgentThoughtChunk: ("thought", v2.AgentThoughtChunk),
}


def _new_id() -> str:
    return uuid.uuid4().hex


class V1Lifter:
    """Lifts one v1 session onto v2. ``new_id`` makes message ids (tests pass their own)."""

    def __init__(self, session_id: str, *, new_id: Callable[[], str] = _new_id) -> None:
        self.session_id = session_id
        self.new_id = new_id
        #: v1 update kinds passed on raw, by ``sessionUpdate`` tag.
        self.unknown: Counter[str] = Counter()
        #: What could not be lifted, by kind (names in ``docs/v1-projection.md``).
        self.dropped: Drops = Counter()
        self._open: tuple[str, str] | None = None  # the (kind, id) chunks now append to
        self._announced: set[str] = set()
        #: Child sessions this session announced (Preview subagents) that the caller has
        #: not taken yet: it opens each like a session of its own, then clears the list.
        self.children: list[str] = []
        self._modes: v1.SessionModeState | None = None
        self._options: list[Any] = []
        self._in_turn = False
        self._asking = 0  # v1 permission requests the client has not answered yet

    # -- the prompt lifecycle -----------------------------------------------------------

    def prompt(self, request: v2.PromptRequest) -> tuple[v1.PromptRequest, str, list[Any]]:
        """Send a v2 prompt to the v1 agent: the v1 params, the user message's new
        ``messageId``, and the v2 updates to reduce now (``user_message``, ``running``)."""
        message_id = self.new_id()
        self._open = None  # a new turn starts new messages
        self._in_turn = True
        params = v1.PromptRequest(
            session_id=request.session_id,
            prompt=blocks_to_v1(request.prompt, self.dropped),
            meta=request.meta,
        )
        updates = [
            v2.UserMessage(message_id=message_id, content=list(request.prompt)),
            v2.StateUpdate(state="running"),
        ]
        return params, message_id, updates

    def prompt_done(self, result: v1.PromptResponse) -> list[Any]:
        """The v2 updates for the v1 prompt's answer: ``idle`` with its stop reason."""
        self._open, self._in_turn = None, False
        return [v2.StateUpdate(state="idle", stop_reason=result.stop_reason)]

    def prompt_failed(self, error: v2.Error) -> list[Any]:
        """The v2 updates for a v1 prompt answered with a JSON-RPC error after it was
        sent: ``idle`` with stop reason ``error`` and that error (Nov)."""
        self._open, self._in_turn = None, False
        return [v2.StateUpdate(state="idle", stop_reason="error", error=error)]

    def permission_asked(self) -> list[Any]:
        """The v2 updates for a v1 permission request going to the client: the first one
        pending in a turn blocks the foreground work, ``requires_action`` (PL-09)."""
        self._asking += 1
        if self._asking == 1 and self._in_turn:
            return [v2.StateUpdate(state="requires_action")]
        return []

    def permission_answered(self, *, cancelled: bool = False) -> list[Any]:
        """The v2 updates once a permission request is answered: ``running`` when it was
        the last one pending and the turn goes on; nothing after a ``session/cancel``
        (the turn's ``idle`` follows, PL-09's other way out of ``requires_action``)."""
        self._asking -= 1
        if self._asking == 0 and self._in_turn and not cancelled:
            return [v2.StateUpdate(state="running")]
        return []

    def snapshot(self) -> v2.StateUpdate:
        """The foreground state now, as the ``state_update`` a resume sends before its
        answer (SS-16): ``idle`` between turns."""
        if not self._in_turn:
            return v2.StateUpdate(state="idle")
        return v2.StateUpdate(state="requires_action" if self._asking else "running")

    # -- session setup ------------------------------------------------------------------

    def session_result(self, result: Any) -> list[Any]:
        """Record a v1 ``session/new`` / ``load`` / ``resume`` result's modes and config
        options; returns the v2 config options to seed the session with (v1 ``modes``
        become a ``category: "mode"`` select named :data:`MODE_CONFIG_ID`)."""
        if isinstance(result.modes, v1.SessionModeState):
            self._modes = result.modes
        if isinstance(result.config_options, list):
            self._options = self._agent_options(result.config_options)
        return self.config_options()

    def new_session_result(self, result: v1.NewSessionResponse) -> v2.NewSessionResponse:
        """A v1 ``session/new`` result as v2 (see :meth:`session_result`)."""
        options = self.session_result(result)
        return v2.NewSessionResponse(
            session_id=result.session_id, config_options=options or UNSET, meta=result.meta
        )

    def resume_result(
        self, result: v1.LoadSessionResponse | v1.ResumeSessionResponse
    ) -> v2.ResumeSessionResponse:
        """A v1 ``session/load`` or ``session/resume`` result as the v2 ``session/resume``
        result (see :meth:`session_result`)."""
        options = self.session_result(result)
        return v2.ResumeSessionResponse(config_options=options or UNSET, meta=result.meta)

    def config_options(self) -> list[Any]:
        """The current v2 config options, the synthesized mode option last; none is
        synthesized when the agent has its own ``mode`` option (ids stay unique)."""
        mode = None if self._owns_mode() else self._mode_option()
        return [*self._options, mode] if mode is not None else list(self._options)

    def _agent_options(self, options: list[Any]) -> list[Any]:
        return unique_options(config_options_from_v1(options), self.dropped)

    def _owns_mode(self) -> bool:
        return has_option(self._options, MODE_CONFIG_ID)

    def set_config_option(self, request: v2.SetSessionConfigOptionRequest) -> Any:
        """The v1 request for a v2 ``session/set_config_option``: ``session/set_mode``
        params for the synthesized mode option, else v1 ``set_config_option`` params."""
        if (
            request.config_id == MODE_CONFIG_ID
            and self._modes is not None
            and not self._owns_mode()
        ):
            return v1.SetSessionModeRequest(
                session_id=request.session_id, mode_id=str(request.value), meta=request.meta
            )
        return v1.SetSessionConfigOptionRequest(
            session_id=request.session_id,
            config_id=request.config_id,
            value=request.value,
            type="boolean" if request.type == "boolean" else UNSET,
            meta=request.meta,
        )

    def _mode_option(self) -> v2.SessionConfigSelect | None:
        modes = self._modes
        if modes is None:
            return None
        return v2.SessionConfigSelect(
            config_id=MODE_CONFIG_ID,
            name="Mode",
            category="mode",
            current_value=modes.current_mode_id,
            options=[
                v2.SessionConfigSelectOption(value=m.id, name=m.name, description=m.description)
                for m in modes.available_modes
            ],
        )

    # -- updates ------------------------------------------------------------------------

    def lift(self, update: Any) -> list[Any]:
        """The v2 updates for one v1 update (a ``SessionUpdate`` variant or a whole
        :class:`acp2.compat.v1.schema.SessionNotification`, or either as
        :mod:`acp2.compat.v1.lift_params` decodes them). Every update returned is a new
        object, or holds ones the v1 update held (that update is not used again)."""
        handler = _HANDLERS.get(type(update))
        if handler is not None:
            return handler(self, update)
        if isinstance(update, (hot.SessionNotification, v1.SessionNotification)):
            return self.lift(update.update)
        return self._unknown(update)

    def agent_chunk(
        self, update: hot.AgentMessageChunk | v1.AgentMessageChunk
    ) -> v2.AgentMessageChunk:
        """:meth:`lift` of an ``agent_message_chunk``: the one v2 update it lifts to (a
        stream's hot path: no dispatch, no list)."""
        message_id = update.message_id
        if isinstance(message_id, str):
            self._open = ("agent", message_id)
        else:  # as _message_id, inlined (once per streamed chunk)
            opened = self._open
            if opened is None or opened[0] != "agent":
                opened = self._open = ("agent", self.new_id())
            message_id = opened[1]
        block = update.content
        if type(block) is not v2.TextContent:
            block = block_from_v1(block)
        return v2.AgentMessageChunk(message_id=message_id, content=block, meta=update.meta)

    def _chunk(self, update: Any) -> list[Any]:
        kind, cls = _CHUNKS[type(update)]
        if kind == "user" and self._in_turn:
            # Some v1 agents echo the prompt back; the synthesized user message has it.
            self.dropped["user_message_chunk.echo"] += 1
            return []
        message_id = self._message_id(kind, update)
        return [cls(message_id=message_id, content=_block(update.content), meta=update.meta)]

    def _message_id(self, kind: str, update: Any) -> str:
        message_id = update.message_id
        if isinstance(message_id, str):
            self._open = (kind, message_id)
            return message_id
        # v1 ids are optional: one message lasts while its kind keeps streaming.
        opened = self._open
        if opened is None or opened[0] != kind:
            opened = self._open = (kind, self.new_id())
        return opened[1]

    def _tool_call(self, update: v1.ToolCall) -> list[Any]:
        self._open = None
        again = update.tool_call_id in self._announced
        self._announced.add(update.tool_call_id)
        # A repeated `tool_call` restates the whole call: what it leaves out is cleared.
        absent: Any = None if again else UNSET
        return [
            v2.ToolCallUpdate(
                tool_call_id=update.tool_call_id,
                title=update.title,
                kind=update.kind if update.kind is not UNSET else absent,
                status=update.status if update.status is not UNSET else absent,
                content=self._content(update.content) if update.content is not UNSET else absent,
                locations=_locations(update.locations) if update.locations is not UNSET else absent,
                raw_input=update.raw_input if update.raw_input is not UNSET else absent,
                raw_output=update.raw_output if update.raw_output is not UNSET else absent,
                meta=update.meta,
            )
        ]

    def _tool_call_update(self, update: v1.ToolCallUpdate) -> list[Any]:
        self._open = None
        self._announced.add(update.tool_call_id)

        def keep(value: Any) -> Any:
            return UNSET if value is None else value

        content, locations = keep(update.content), keep(update.locations)
        return [
            v2.ToolCallUpdate(
                tool_call_id=update.tool_call_id,
                title=keep(update.title),
                kind=keep(update.kind),
                status=keep(update.status),
                content=self._content(content) if content is not UNSET else UNSET,
                locations=_locations(locations) if locations is not UNSET else UNSET,
                raw_input=keep(update.raw_input),
                raw_output=keep(update.raw_output),
                meta=update.meta,
            )
        ]

    def _content(self, items: list[Any]) -> list[Any]:
        return tool_content_from_v1(items)

    def _plan(self, update: v1.Plan) -> list[Any]:
        entries = [recode(entry, v2.PlanEntry) for entry in update.entries]
        plan = v2.PlanItems(plan_id=MAIN_PLAN_ID, entries=entries)
        return [v2.PlanUpdate(plan=plan, meta=update.meta)]

    def _commands(self, update: v1.AvailableCommandsUpdate) -> list[Any]:
        commands = commands_from_v1(update.available_commands)
        return [v2.AvailableCommandsUpdate(available_commands=commands, meta=update.meta)]

    def _mode(self, update: v1.CurrentModeUpdate) -> list[Any]:
        mode_id = update.current_mode_id
        if self._owns_mode():
            # The agent's own `mode` option is the one shown: the update moves it.
            self._options = with_current_value(self._options, MODE_CONFIG_ID, mode_id)
        elif self._modes is None:
            self.dropped["current_mode_update.no_modes"] += 1
            return []
        if self._modes is not None:
            available = self._modes.available_modes
            self._modes = v1.SessionModeState(current_mode_id=mode_id, available_modes=available)
        return [v2.ConfigOptionUpdate(config_options=self.config_options(), meta=update.meta)]

    def _config(self, update: v1.ConfigOptionUpdate) -> list[Any]:
        self._options = self._agent_options(update.config_options)
        return [v2.ConfigOptionUpdate(config_options=self.config_options(), meta=update.meta)]

    def _info(self, update: v1.SessionInfoUpdate) -> list[Any]:
        return [recode(update, v2.SessionInfoUpdate)]

    def _usage(self, update: v1.UsageUpdate) -> list[Any]:
        return [recode(update, v2.UsageUpdate)]

    def _unknown(self, update: Any) -> list[Any]:
        tag = tag_of(update, "sessionUpdate") if isinstance(update, Raw) else None
        if tag in _SUBAGENT_TAGS:
            return self._subagents(update)
        self.unknown[tag or "?"] += 1
        return [update] if isinstance(update, Raw) else []

    def _subagents(self, update: Raw) -> list[Any]:
        """A v1 subagent update (the client opted in): the same JSON as v2's, decoded as
        v2; an announcement's child id noted in :attr:`children`. One that does not
        decode is passed on raw (counted in :attr:`unknown`)."""
        try:
            lifted = decode(bytes(update), v2.SessionUpdate)
        except (msgspec.ValidationError, msgspec.DecodeError):
            self.unknown[tag_of(update, "sessionUpdate") or "?"] += 1
            return [update]
        if type(lifted) is v2.SubagentUpdate and lifted.session_id not in self.children:
            self.children.append(lifted.session_id)
        return [lifted]


def _block(block: Any) -> Any:
    # A text block lift_params decoded is v2's already, made for this chunk alone.
    return block if type(block) is v2.TextContent else block_from_v1(block)


def _locations(locations: list[v1.ToolCallLocation]) -> list[v2.ToolCallLocation]:
    return locations_from_v1(locations)


#: The v1 subagent updates (``protocol/v1/subagents``), lifted as the v2 updates they
#: read as.
_SUBAGENT_TAGS: Final = frozenset({"subagent_update", "session_message", "session_message_chunk"})

_HANDLERS: Final[dict[type, Callable[[V1Lifter, Any], list[Any]]]] = {
    v1.UserMessageChunk: V1Lifter._chunk,
    v1.AgentMessageChunk: V1Lifter._chunk,
    v1.AgentThoughtChunk: V1Lifter._chunk,
    hot.UserMessageChunk: V1Lifter._chunk,
    hot.AgentMessageChunk: V1Lifter._chunk,
    hot.AgentThoughtChunk: V1Lifter._chunk,
    v1.ToolCall: V1Lifter._tool_call,
    v1.SessionToolCallUpdate: V1Lifter._tool_call_update,
    v1.Plan: V1Lifter._plan,
    v1.AvailableCommandsUpdate: V1Lifter._commands,
    v1.CurrentModeUpdate: V1Lifter._mode,
    v1.ConfigOptionUpdate: V1Lifter._config,
    v1.SessionInfoUpdate: V1Lifter._info,
    v1.UsageUpdate: V1Lifter._usage,
}
