"""An MCP ``CallToolResult`` as what the model reads and what the client renders."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from acp2.schema import (
    AudioContent,
    Content,
    EmbeddedResource,
    EmbeddedResourceResource,
    ImageContent,
    ResourceLink,
    TextContent,
)

if TYPE_CHECKING:
    from mcp.types import CallToolResult

__all__ = ["MODEL_TEXT_LIMIT", "convert_result"]

#: Characters of one result the model reads (a flood is cut, and says so).
MODEL_TEXT_LIMIT = 100_000
#: Content items of one result shown to the client.
MAX_ITEMS = 64


def convert_result(result: CallToolResult) -> tuple[str, list[Content]]:
    """The text for the model and the tool-call content for the client: text, images,
    audio, resource links and embedded resources map to their ACP blocks; structured
    content, when there is no other, is shown as JSON. Both are bounded
    (:data:`MODEL_TEXT_LIMIT`, :data:`MAX_ITEMS`)."""
    texts: list[str] = []
    content: list[Content] = []
    for item in result.content[:MAX_ITEMS]:
        block, text = _block(item)
        if block is not None:
            content.append(Content(content=block))
        texts.append(text)
    if result.structured_content is not None and not texts:
        # Servers usually repeat structured content as text; shown once, as JSON, if not.
        shown = json.dumps(result.structured_content, ensure_ascii=False)[:MODEL_TEXT_LIMIT]
        content.append(Content(content=TextContent(text=shown)))
        texts.append(shown)
    text = "\n".join(texts) or "(no output)"
    if len(text) > MODEL_TEXT_LIMIT:
        text = text[:MODEL_TEXT_LIMIT] + "\n[output truncated]"
    return text, content


def _block(item: Any) -> tuple[Any, str]:
    kind = getattr(item, "type", None)
    if kind == "text":
        return TextContent(text=item.text[:MODEL_TEXT_LIMIT]), item.text
    if kind == "image":
        return ImageContent(data=item.data, mime_type=item.mime_type), f"[image {item.mime_type}]"
    if kind == "audio":
        return AudioContent(data=item.data, mime_type=item.mime_type), f"[audio {item.mime_type}]"
    if kind == "resource_link":
        return ResourceLink(name=item.name, uri=str(item.uri)), f"[resource {item.uri}]"
    if kind == "resource":
        return _embedded(item.resource)
    return None, f"[{kind} content]"


def _embedded(resource: Any) -> tuple[Any, str]:
    uri = str(resource.uri)
    mime = getattr(resource, "mime_type", None)
    text = getattr(resource, "text", None)
    if isinstance(text, str):
        inner = EmbeddedResourceResource(uri=uri, text=text[:MODEL_TEXT_LIMIT], mime_type=mime)
        return EmbeddedResource(resource=inner), f"{uri}:\n{text}"
    blob = getattr(resource, "blob", "")
    inner = EmbeddedResourceResource(uri=uri, blob=blob, mime_type=mime)
    return EmbeddedResource(resource=inner), f"[resource {uri}, {mime or 'binary'}]"
