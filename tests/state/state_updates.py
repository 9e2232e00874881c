"""Build ``session/update`` payloads as JSON dicts and reduce them through the real codec."""

from __future__ import annotations

import base64
import json
from typing import Any, Final

from acp2.schema.codec import decode
from acp2.schema.updates import UpdateSessionNotification
from acp2.state import SessionState, reduce

__all__ = [
    "OMIT",
    "b64",
    "chunk",
    "decode_update",
    "feed",
    "message",
    "state_update",
    "terminal_chunk",
    "text",
    "texts",
    "tool",
]

SESSION: Final = "sess_1"
#: Leave a key out of the JSON (as opposed to ``None`` = JSON ``null``).
OMIT: Final = object()

_CHUNK = {
    "user": "user_message_chunk",
    "agent": "agent_message_chunk",
    "thought": "agent_thought_chunk",
}
_MESSAGE = {"user": "user_message", "agent": "agent_message", "thought": "agent_thought"}


def decode_update(update: dict[str, Any]) -> UpdateSessionNotification:
    """Encode ``update`` inside a ``session/update`` params object and decode it."""
    params = {"sessionId": SESSION, "update": update}
    return decode(json.dumps(params).encode(), UpdateSessionNotification)


def feed(*updates: dict[str, Any], state: SessionState | None = None) -> SessionState:
    """Reduce every update, in order, into ``state`` (a new one by default)."""
    state = SessionState() if state is None else state
    for update in updates:
        assert reduce(state, decode_update(update)) is state
    return state


def _fields(tag: str, **fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": tag, **{k: v for k, v in fields.items() if v is not OMIT}}


def text(value: str) -> dict[str, Any]:
    """A ``text`` content block."""
    return {"type": "text", "text": value}


def texts(blocks: list[Any]) -> list[str]:
    """The text of each (decoded) text block, for compact assertions."""
    return [block.text for block in blocks]


def chunk(kind: str, message_id: str, value: str, **extra: Any) -> dict[str, Any]:
    """A ``*_chunk`` update for ``kind`` (user / agent / thought) carrying one text block."""
    return _fields(_CHUNK[kind], messageId=message_id, content=text(value), **extra)


def message(kind: str, message_id: str, content: Any = OMIT, meta: Any = OMIT) -> dict[str, Any]:
    """A whole-message upsert; ``content`` is a list of strings, ``None`` or OMIT."""
    if isinstance(content, list):
        content = [text(value) for value in content]
    return _fields(_MESSAGE[kind], messageId=message_id, content=content, _meta=meta)


def tool(tool_call_id: str, **fields: Any) -> dict[str, Any]:
    """A ``tool_call_update`` with wire-named ``fields`` (``meta`` becomes ``_meta``)."""
    if "meta" in fields:
        fields["_meta"] = fields.pop("meta")
    return _fields("tool_call_update", toolCallId=tool_call_id, **fields)


def state_update(state: str, **fields: Any) -> dict[str, Any]:
    """A ``state_update`` snapshot with wire-named ``fields``."""
    return _fields("state_update", state=state, **fields)


def b64(data: bytes) -> str:
    """Standard base64 with padding (RFC 4648)."""
    return base64.b64encode(data).decode("ascii")


def terminal_chunk(terminal_id: str, data: bytes) -> dict[str, Any]:
    """A ``terminal_output_chunk`` carrying ``data``."""
    return _fields("terminal_output_chunk", terminalId=terminal_id, data=b64(data))
