"""v2 -> v1 projection: an acp2 agent's session updates as a v1 client expects them.

:class:`V1Projector` is the per-session state of that translation. Feed it each v2
``session/update`` (:meth:`V1Projector.project`) and send the v1 ``session/update``
params it returns -- none, one or several. Whatever v1 cannot express is dropped on
purpose and counted in :attr:`V1Projector.dropped` under the names of the "v1
projection" table in ``docs/v1-projection.md``. Pure: no IO, no event loop.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any, Final

from msgspec import UNSET, Raw

import acp2.compat.v1.schema as v1
import acp2.schema as v2
from acp2.compat.v1.convert import (
    Drops,
    block_to_v1,
    blocks_to_v1,
    commands_to_v1,
    config_options_to_v1,
)
from acp2.compat.v1.project_tools import ToolProjector
from acp2.schema.codec import decode_any

__all__ = ["V1Projector"]

_CHUNKS_TO_V1: Final[dict[type, type]] = {
    v2.UserMessageChunk: v1.UserMessageChunk,
    v2.AgentMessageChunk: v1.AgentMessageChunk,
    v2.AgentThoughtChunk: v1.AgentThoughtChunk,
}
_MESSAGES: Final[dict[type, tuple[str, type]]] = {
    v2.UserMessage: ("user_message", v1.UserMessageChunk),
    v2.AgentMessage: ("agent_message", v1.AgentMessageChunk),
    v2.AgentThought: ("agent_thought", v1.AgentThoughtChunk),
}
_V2_TEXT: Final = v2.TextContent
_PRIORITY_FALLBACK: Final = "medium"
_STATUS_FALLBACK: Final = "pending"


class V1Projector:
    """Projects one session's v2 updates onto v1 for a v1 client.

    ``boolean_options``: the client advertised ``session.configOptions.boolean``, so
    boolean config options may be sent. ``mode_config_id`` names the v2 ``mode`` config
    option that was offered to the client as v1 ``modes`` (see
    :func:`acp2.compat.v1.agent_side.new_session_result_to_v1`); its changes are also
    sent as ``current_mode_update``.
    """

    def __init__(
        self, session_id: str, *, boolean_options: bool = False, mode_config_id: str | None = None
    ) -> None:
        self.session_id = session_id
        self.boolean_options = boolean_options
        self.mode_config_id = mode_config_id
        #: What was not sent, by kind (names in ``docs/v1-projection.md``).
        self.dropped: Drops = Counter()
        self.tools = ToolProjector(self.dropped)
        self._spoken: set[tuple[type, str]] = set()
        self._plans: dict[str, list[v1.PlanEntry]] = {}
        self._cost: v1.Cost | None = None
        self._mode: str | None = None
        self._ack: str | bool = False
        #: The chunk kind and message id :meth:`plain_chunk` last noted as spoken.
        self._last_kind: type | None = None
        self._last_id = ""

    def prompt_sent(self, message_id: str | None = None) -> None:
        """Note that this client sent a prompt: its ``user_message`` acknowledgement (the
        one with ``message_id``, or else the next unseen one) is not sent back, because a
        v1 client shows its own prompt."""
        self._ack = message_id if message_id is not None else True

    def project(self, update: Any) -> list[v1.SessionNotification]:
        """The v1 ``session/update`` params to send for one v2 update (maybe none).

        ``update`` is a v2 ``SessionUpdate`` variant (``msgspec.Raw`` when unknown) or a
        whole :class:`acp2.schema.UpdateSessionNotification`.
        """
        if isinstance(update, v2.UpdateSessionNotification):
            update = update.update
        handler = _HANDLERS.get(type(update))
        if handler is None:
            self.dropped[_kind(update)] += 1
            return []
        return [
            v1.SessionNotification(session_id=self.session_id, update=out)
            for out in handler(self, update)
        ]

    def verbatim(self, params: v2.UpdateSessionNotification) -> bool:
        """True when ``params`` says in v1 exactly what its v2 encoding says: a message,
        thought or user chunk of plain text (no annotations, no notification ``_meta``),
        whose fields are the same in both versions. The caller may then send the v2
        encoding as is (the stream's hot path); it is counted as spoken, as
        :meth:`project` would. False means: :meth:`project` it."""
        return params.meta is UNSET and self.plain_chunk(params.update)

    def plain_chunk(self, update: Any) -> bool:
        """:meth:`verbatim` for an update sent without notification ``_meta`` (as the
        agent's emitter sends each one): True when the v2 encoding of ``update`` is its v1
        encoding too; it is then counted as spoken. Allocates nothing on a stream."""
        kind = type(update)
        if kind not in _CHUNKS_TO_V1:
            return False
        content = update.content
        if type(content) is not _V2_TEXT or content.annotations is not UNSET:
            return False
        message_id = update.message_id
        if message_id != self._last_id or kind is not self._last_kind:
            self._spoken.add((kind, message_id))  # a stream repeats one key: once a message
            self._last_kind, self._last_id = kind, message_id
        return True

    # -- messages -----------------------------------------------------------------------

    def _chunk(self, update: Any) -> list[Any]:
        block = block_to_v1(update.content, self.dropped)
        if block is None:
            return []
        self._spoken.add((type(update), update.message_id))
        cls = _CHUNKS_TO_V1[type(update)]
        return [cls(content=block, message_id=update.message_id, meta=update.meta)]

    def _message(self, update: Any) -> list[Any]:
        kind, chunk_cls = _MESSAGES[type(update)]
        if kind == "user_message" and self._is_ack(update.message_id):
            self.dropped["user_message.ack"] += 1
            return []
        chunk_tag = _chunk_type(chunk_cls)
        if update.content is UNSET or (chunk_tag, update.message_id) in self._spoken:
            # v1 can only append: a patch, replacement or clear after content is lost.
            self.dropped[f"{kind}.replace"] += 1
            return []
        self._spoken.add((chunk_tag, update.message_id))
        blocks = blocks_to_v1(update.content or [], self.dropped)
        return [chunk_cls(content=b, message_id=update.message_id) for b in blocks]

    def _is_ack(self, message_id: str) -> bool:
        if self._ack is True or self._ack == message_id:
            self._ack = False
            return True
        return False

    def _state(self, update: v2.StateUpdate) -> list[Any]:
        # v1 has no foreground state: `idle` answers the held prompt instead (agent_side).
        self.dropped["state_update"] += 1
        if update.state == "idle":
            self._ack = False  # a turn that never acknowledged its prompt has ended
        return []

    # -- plans --------------------------------------------------------------------------

    def _plan(self, update: v2.PlanUpdate) -> list[Any]:
        plan = update.plan
        if isinstance(plan, v2.PlanItems):
            self._plans[plan.plan_id] = [e for e in map(self._entry, plan.entries) if e]
        else:
            # An unknown plan type still replaces that plan's earlier content (PN-05).
            self.dropped["plan.unknown"] += 1
            plan_id = _raw_field(plan, "planId")
            if plan_id not in self._plans:
                return []
            del self._plans[plan_id]
        if len(self._plans) > 1:
            self.dropped["plan.merged"] += 1
        entries = [entry for entries in self._plans.values() for entry in entries]
        return [v1.Plan(entries=entries, meta=update.meta)]

    def _entry(self, entry: v2.PlanEntry) -> v1.PlanEntry | None:
        status, priority = entry.status, entry.priority
        if status == "cancelled":
            self.dropped["plan.entry.cancelled"] += 1
            return None
        if status not in v1.PLAN_ENTRY_STATUSES:
            self.dropped["plan.entry.status"] += 1
            status = _STATUS_FALLBACK
        if priority not in v1.PLAN_ENTRY_PRIORITIES:
            self.dropped["plan.entry.priority"] += 1
            priority = _PRIORITY_FALLBACK
        return v1.PlanEntry(
            content=entry.content, priority=priority, status=status, meta=entry.meta
        )

    # -- commands, config, info, usage ---------------------------------------------------

    def _commands(self, update: v2.AvailableCommandsUpdate) -> list[Any]:
        commands = commands_to_v1(update.available_commands, self.dropped)
        return [v1.AvailableCommandsUpdate(available_commands=commands, meta=update.meta)]

    def _config(self, update: v2.ConfigOptionUpdate) -> list[Any]:
        options = config_options_to_v1(
            update.config_options, booleans=self.boolean_options, dropped=self.dropped
        )
        out: list[Any] = [v1.ConfigOptionUpdate(config_options=options, meta=update.meta)]
        mode = self._mode_value(update.config_options)
        if mode is not None and mode != self._mode:
            self._mode = mode
            out.append(v1.CurrentModeUpdate(current_mode_id=mode))
        return out

    def _mode_value(self, options: list[Any]) -> str | None:
        for option in options:
            if (
                isinstance(option, v2.SessionConfigSelect)
                and option.config_id == self.mode_config_id
            ):
                return option.current_value
        return None

    def note_mode(self, mode_id: str | None) -> None:
        """Record the mode the client was last told (from a session response), so only a
        change is sent as ``current_mode_update``."""
        self._mode = mode_id

    def _info(self, update: v2.SessionInfoUpdate) -> list[Any]:
        return [
            v1.SessionInfoUpdate(title=update.title, updated_at=update.updated_at, meta=update.meta)
        ]

    def _usage(self, update: v2.UsageUpdate) -> list[Any]:
        # Nov: an omitted cost keeps the last one; v1 readers want it on every update.
        if update.cost is None:
            self._cost = None
        elif update.cost is not UNSET:
            self._cost = v1.Cost(
                amount=update.cost.amount, currency=update.cost.currency, meta=update.cost.meta
            )
        cost = self._cost if self._cost is not None else UNSET
        return [v1.UsageUpdate(used=update.used, size=update.size, cost=cost, meta=update.meta)]

    # -- tools and terminals ------------------------------------------------------------

    def _tool_call(self, update: v2.ToolCallUpdate) -> list[Any]:
        return self.tools.tool_call(update)

    def _tool_chunk(self, update: v2.ToolCallContentChunk) -> list[Any]:
        return self.tools.content_chunk(update)

    def _terminal(self, update: v2.TerminalUpdate) -> list[Any]:
        return self.tools.terminal(update)

    def _terminal_chunk(self, update: v2.TerminalOutputChunk) -> list[Any]:
        return self.tools.terminal_chunk(update)

    def permission(self, request: v2.RequestPermissionRequest) -> v1.RequestPermissionRequest:
        """A v2 ``session/request_permission`` as v1 (see :meth:`ToolProjector.permission`)."""
        return self.tools.permission(request)


def _chunk_type(chunk_cls: type) -> type:
    # Messages are keyed by the v2 chunk type of their kind: v1 chunk class -> v2 class.
    return next(v2cls for v2cls, v1cls in _CHUNKS_TO_V1.items() if v1cls is chunk_cls)


def _raw_field(raw: Raw, key: str) -> Any:
    obj = decode_any(raw)
    return obj.get(key) if isinstance(obj, dict) else None


def _kind(update: Any) -> str:
    """The counter name of an update v1 has no form for: its tag, or ``update.unknown``."""
    if isinstance(update, Raw):
        return "update.unknown"
    tag = getattr(getattr(update, "__struct_config__", None), "tag", None)
    return tag if isinstance(tag, str) else "update.unknown"


_HANDLERS: Final[dict[type, Callable[[V1Projector, Any], list[Any]]]] = {
    v2.UserMessageChunk: V1Projector._chunk,
    v2.AgentMessageChunk: V1Projector._chunk,
    v2.AgentThoughtChunk: V1Projector._chunk,
    v2.UserMessage: V1Projector._message,
    v2.AgentMessage: V1Projector._message,
    v2.AgentThought: V1Projector._message,
    v2.ToolCallUpdate: V1Projector._tool_call,
    v2.ToolCallContentChunk: V1Projector._tool_chunk,
    v2.TerminalUpdate: V1Projector._terminal,
    v2.TerminalOutputChunk: V1Projector._terminal_chunk,
    v2.StateUpdate: V1Projector._state,
    v2.PlanUpdate: V1Projector._plan,
    v2.AvailableCommandsUpdate: V1Projector._commands,
    v2.ConfigOptionUpdate: V1Projector._config,
    v2.SessionInfoUpdate: V1Projector._info,
    v2.UsageUpdate: V1Projector._usage,
}
