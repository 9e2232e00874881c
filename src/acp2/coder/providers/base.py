"""What every model provider implements, and the error it raises."""

from __future__ import annotations

from typing import Protocol

from acp2.coder.messages import ModelReply, ModelRequest
from acp2.errors import ModelError

__all__ = ["ChatModel", "ModelError", "StreamSink"]


class StreamSink(Protocol):
    """Receives an exchange's output as it streams."""

    async def text(self, delta: str) -> None:
        """A piece of the answer text."""

    async def reasoning(self, delta: str) -> None:
        """A piece of the model's reasoning."""


class ChatModel(Protocol):
    """A chat model with tool calling.

    ``complete`` streams one exchange's text and reasoning to ``sink`` as they arrive and
    returns the whole reply; it raises :class:`ModelError` on failure. Cancelling the
    calling task aborts the exchange (closing any network stream).
    """

    name: str

    async def complete(self, request: ModelRequest, sink: StreamSink) -> ModelReply:
        """Run one exchange."""
        ...
