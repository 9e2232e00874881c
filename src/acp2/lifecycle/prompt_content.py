"""Which prompt blocks an agent takes (PL-02): one rule for every side that checks it.

``text`` and ``resource_link`` blocks are always accepted; ``image``, ``audio`` and
``resource`` (embedded context) only when the agent advertised
``session.prompt.image`` / ``.audio`` / ``.embeddedContext``; any other block type never
(nobody can advertise it). The agent runtime refuses such a prompt with ``-32602``, the
client refuses to send it, and the back bridge refuses it for a v1 agent whose
``promptCapabilities`` lack it, all through :func:`refusal`. Pure: no IO.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec
from msgspec import Raw

from acp2.schema import (
    AudioContent,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    supports,
)

__all__ = ["PromptTakes", "plain", "refusal"]


class PromptTakes(msgspec.Struct, frozen=True):
    """The optional block types an agent takes (its ``session.prompt`` markers)."""

    image: bool = False
    audio: bool = False
    embedded_context: bool = False

    @classmethod
    def of(cls, prompt: Any) -> PromptTakes:
        """What ``prompt`` (a v2 ``session.prompt`` capability object, or None / unset)
        advertises."""
        return cls(
            image=supports(getattr(prompt, "image", None)),
            audio=supports(getattr(prompt, "audio", None)),
            embedded_context=supports(getattr(prompt, "embedded_context", None)),
        )


def plain(blocks: Sequence[Any]) -> bool:
    """True for a non-empty prompt of text and resource links only, which every agent
    takes: the common prompt, checked by type lookups before :func:`refusal`."""
    for block in blocks:
        if type(block) not in _PLAIN:
            return False
    return bool(blocks)


def refusal(takes: PromptTakes, blocks: Sequence[Any]) -> str | None:
    """Why ``blocks`` may not be sent to an agent that takes ``takes``, or None when they
    may: an empty prompt, or the first block of a type the agent did not advertise."""
    if not blocks:
        return "A prompt needs at least one content block"
    for index, block in enumerate(blocks):
        if isinstance(block, TextContent | ResourceLink):
            continue
        marker = _MARKERS.get(type(block))
        if marker is None:
            return f"Prompt block {index} has a type no agent can advertise: {_kind(block)}"
        if not getattr(takes, marker[0]):
            return (
                f"Prompt block {index} is {_kind(block)}, but the agent does not advertise"
                f" session.prompt.{marker[1]}"
            )
    return None


_PLAIN = frozenset({TextContent, ResourceLink})
_MARKERS: dict[type, tuple[str, str]] = {
    ImageContent: ("image", "image"),
    AudioContent: ("audio", "audio"),
    EmbeddedResource: ("embedded_context", "embeddedContext"),
}


def _kind(block: Any) -> str:
    if isinstance(block, Raw):  # an unknown content type, kept raw by the decoder
        try:
            kind = msgspec.json.decode(block).get("type")
        except (msgspec.DecodeError, AttributeError):
            kind = None
        return str(kind) if kind is not None else "unknown"
    return str(getattr(block, "type", None) or type(block).__name__)
