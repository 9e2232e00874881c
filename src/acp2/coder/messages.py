"""The provider-neutral conversation: messages, tool requests, model replies, tool specs.

These are plain frozen values shared by the model loop (:mod:`acp2.coder.loop`), the
providers and the tools. Nothing here does IO.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "FINISH_LENGTH",
    "FINISH_REFUSAL",
    "FINISH_STOP",
    "FINISH_TOOL_CALLS",
    "Message",
    "ModelReply",
    "ModelRequest",
    "ToolRequest",
    "ToolSpec",
    "Usage",
]

Role = Literal["system", "user", "assistant", "tool"]

#: Normalised finish reasons of one model exchange.
FINISH_STOP = "stop"
FINISH_TOOL_CALLS = "tool_calls"
FINISH_LENGTH = "length"
FINISH_REFUSAL = "refusal"


@dataclass(frozen=True)
class ToolRequest:
    """One tool call the model asked for: the provider's ``id``, the tool ``name`` and
    its ``arguments`` as the raw JSON text the model produced (it may be invalid)."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class Message:
    """One conversation message.

    ``tool_calls`` only on assistant messages; ``tool_call_id`` only on tool results.
    """

    role: Role
    content: str = ""
    tool_calls: tuple[ToolRequest, ...] = ()
    tool_call_id: str | None = None


@dataclass(frozen=True)
class Usage:
    """Token counts the provider reported for one exchange; ``cached_tokens`` (prompt
    tokens read from the provider's cache) and ``reasoning_tokens`` are None when the
    provider did not say."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cached_tokens: int | None = None
    reasoning_tokens: int | None = None

    @property
    def used(self) -> int:
        """Tokens in the context after this exchange (total, or prompt + completion)."""
        return self.total_tokens or self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class ModelReply:
    """The complete result of one model exchange.

    ``finish`` is one of ``stop``, ``tool_calls``, ``length``, ``refusal`` (or whatever
    else the provider said, treated like ``stop``); ``usage`` is None when not reported.
    """

    text: str = ""
    reasoning: str = ""
    tool_calls: tuple[ToolRequest, ...] = ()
    finish: str = FINISH_STOP
    usage: Usage | None = None


@dataclass(frozen=True)
class ToolSpec:
    """A tool offered to the model.

    ``parameters`` is its JSON Schema; ``kind`` the ACP tool kind; ``permission`` the
    permission category the tool asks under (None = it never asks).
    """

    name: str
    description: str
    parameters: Mapping[str, Any]
    kind: str = "other"
    permission: str | None = None


@dataclass(frozen=True)
class ModelRequest:
    """What one model exchange sends: the whole conversation and the offered tools."""

    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = field(default=())
