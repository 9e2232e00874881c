"""What the agent wrote, one stdout line at a time, and how to read it (pure).

The checker keeps every line exactly as written (:class:`Frame`), parses it strictly
(UTF-8, JSON without ``NaN``), and classifies it with small predicates. Ids are compared
with their JSON type: ``1`` and ``"1"`` are different ids, and ``true`` is not ``1``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from acp2.schema.methods import SESSION_UPDATE

__all__ = [
    "MESSAGE_KINDS",
    "Frame",
    "envelope_problem",
    "is_answer",
    "is_notification",
    "is_request",
    "is_response",
    "parse_line",
    "same_id",
    "session_update",
    "short",
]

#: Update kinds that are messages or message chunks (they all need a ``messageId``).
MESSAGE_KINDS = frozenset(
    {
        "user_message",
        "user_message_chunk",
        "agent_message",
        "agent_message_chunk",
        "agent_thought",
        "agent_thought_chunk",
    }
)

_NOT_PARSED = object()


@dataclass
class Frame:
    """One line the agent wrote to stdout (without its ``\\n``).

    ``t`` is seconds since the process started; ``step`` names what the checker was doing
    when it arrived; ``value`` is the parsed JSON, or None with ``problem`` saying why not.
    """

    index: int
    t: float
    raw: bytes
    step: str
    value: Any = None
    problem: str | None = None

    @property
    def ok(self) -> bool:
        """True when the line parsed as JSON."""
        return self.problem is None

    def evidence(self, limit: int = 240) -> str:
        """A one-line, truncated rendering for the report: time, step and bytes."""
        return f"+{self.t:.3f}s [{self.step}] <- {short(self.raw, limit)}"


def short(raw: bytes | str, limit: int = 240) -> str:
    """``raw`` as printable text, cut to ``limit`` characters with a size note."""
    text = raw if isinstance(raw, str) else raw.decode("utf-8", errors="backslashreplace")
    text = text.replace("\n", "\\n").replace("\r", "\\r")
    if len(text) > limit:
        return f"{text[:limit]}... ({len(text)} chars)"
    return text


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_line(raw: bytes) -> tuple[Any, str | None]:
    """Parse one line strictly; return ``(value, None)`` or ``(None, problem)``."""
    line = raw[:-1] if raw.endswith(b"\r") else raw
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8 ({exc.reason} at byte {exc.start})"
    try:
        return json.loads(text, parse_constant=_reject_constant), None
    except ValueError as exc:
        return None, f"not JSON ({exc})"


def _is_id(value: Any) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)


def same_id(a: Any, b: Any) -> bool:
    """True when two JSON-RPC ids are the same value with the same JSON type."""
    if isinstance(a, bool) or isinstance(b, bool):
        return False
    return type(a) is type(b) and a == b


def is_request(value: Any) -> bool:
    """A JSON-RPC request object: ``method`` and ``id``."""
    return isinstance(value, dict) and "method" in value and "id" in value


def is_notification(value: Any) -> bool:
    """A JSON-RPC notification object: ``method`` and no ``id``."""
    return isinstance(value, dict) and "method" in value and "id" not in value


def is_response(value: Any) -> bool:
    """A JSON-RPC response object: ``id`` and ``result`` or ``error``, no ``method``."""
    return (
        isinstance(value, dict)
        and "method" not in value
        and "id" in value
        and ("result" in value or "error" in value)
    )


def is_answer(value: Any) -> bool:
    """Something that answers a message: an array (a batch answer) or an object without
    ``method`` that carries an ``id`` or an ``error``. Notifications and the agent's own
    requests never count as answers, however they are timed."""
    if isinstance(value, list):
        return True
    return isinstance(value, dict) and "method" not in value and ("id" in value or "error" in value)


def session_update(value: Any) -> dict[str, Any] | None:
    """The ``update`` object of a ``session/update`` notification, else None."""
    if not is_notification(value) or value.get("method") != SESSION_UPDATE.name:
        return None
    params = value.get("params")
    update = params.get("update") if isinstance(params, dict) else None
    return update if isinstance(update, dict) else None


def envelope_problem(value: Any) -> str | None:
    """Why ``value`` is not a JSON-RPC 2.0 message, or None when it is one (TR-01).

    An array is judged entry by entry (an Aug batch response); the batch rows decide
    whether an array was a fitting answer.
    """
    if isinstance(value, list):
        for entry in value:
            problem = envelope_problem(entry)
            if problem:
                return f"batch entry: {problem}"
        return None if value else "an empty array is not a message"
    if not isinstance(value, dict):
        return f"a JSON {type(value).__name__}, not an object"
    if value.get("jsonrpc") != "2.0":
        return 'missing "jsonrpc": "2.0"'
    if "method" in value:
        return _call_problem(value)
    return _response_problem(value)


def _call_problem(value: dict[str, Any]) -> str | None:
    if not isinstance(value["method"], str):
        return "method is not a string"
    if "id" in value and value["id"] is not None and not _is_id(value["id"]):
        return "request id is not a string or integer"
    return None


def _response_problem(value: dict[str, Any]) -> str | None:
    if "id" not in value:
        return "neither a request, a notification nor a response"
    if ("result" in value) == ("error" in value):
        return "a response needs exactly one of result / error"
    if value["id"] is not None and not _is_id(value["id"]):
        return "response id is not a string, integer or null"
    return None
