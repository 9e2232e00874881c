"""v1 content blocks: text, image, audio, resource links and embedded resources.

``ContentBlock`` is an open union tagged by ``type``; an unknown block is kept as
``msgspec.Raw``. v1 blocks differ from v2 (no icons, looser annotations), so they are
modelled here, not borrowed from :mod:`acp2.schema`.
"""

from __future__ import annotations

from typing import Annotated, TypeAlias

import msgspec
from msgspec import UNSET, Raw, UnsetType

from acp2.compat.v1.schema.common import (
    LENIENT,
    SKIP_INVALID,
    MetaField,
    Model,
)

__all__ = [
    "Annotations",
    "AudioContent",
    "ContentBlock",
    "EmbeddedResource",
    "EmbeddedResourceResource",
    "ImageContent",
    "ResourceLink",
    "TextContent",
]


class Annotations(Model, gc=False, kw_only=True):
    """Display hints on a content block: audience, last modification, priority."""

    audience: Annotated[list[str] | UnsetType | None, LENIENT, SKIP_INVALID] = UNSET
    last_modified: Annotated[str | UnsetType | None, LENIENT] = UNSET
    priority: Annotated[float | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class TextContent(Model, tag_field="type", tag="text", gc=False, kw_only=True):
    """A ``text`` content block (Markdown)."""

    annotations: Annotated[Annotations | UnsetType | None, LENIENT] = UNSET
    text: str
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ImageContent(Model, tag_field="type", tag="image", gc=False, kw_only=True):
    """An ``image`` content block: base64 ``data``, its MIME type, optional ``uri``."""

    annotations: Annotated[Annotations | UnsetType | None, LENIENT] = UNSET
    data: str
    mime_type: str
    uri: Annotated[str | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class AudioContent(Model, tag_field="type", tag="audio", gc=False, kw_only=True):
    """An ``audio`` content block: base64 ``data`` and its MIME type."""

    annotations: Annotated[Annotations | UnsetType | None, LENIENT] = UNSET
    data: str
    mime_type: str
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ResourceLink(Model, tag_field="type", tag="resource_link", gc=False, kw_only=True):
    """A ``resource_link`` content block: a URI the receiver may fetch, with metadata."""

    annotations: Annotated[Annotations | UnsetType | None, LENIENT] = UNSET
    description: Annotated[str | UnsetType | None, LENIENT] = UNSET
    mime_type: Annotated[str | UnsetType | None, LENIENT] = UNSET
    name: str
    size: Annotated[int | UnsetType | None, LENIENT] = UNSET
    title: Annotated[str | UnsetType | None, LENIENT] = UNSET
    uri: str
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class EmbeddedResource(Model, tag_field="type", tag="resource", gc=False, kw_only=True):
    """A ``resource`` content block: the resource's contents embedded in the message."""

    annotations: Annotated[Annotations | UnsetType | None, LENIENT] = UNSET
    resource: EmbeddedResourceResource
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class EmbeddedResourceResource(Model, gc=False, kw_only=True):
    """The contents of a v1 embedded resource: ``uri`` plus ``text`` or base64 ``blob``.

    The schema's untagged union ``TextResourceContents | BlobResourceContents`` merged into
    one struct (msgspec cannot decode an untagged union of objects); ``__post_init__``
    requires ``text`` or ``blob``.
    """

    uri: str
    text: str | UnsetType = UNSET
    blob: str | UnsetType = UNSET
    mime_type: Annotated[str | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")

    def __post_init__(self) -> None:
        if self.text is UNSET and self.blob is UNSET:
            raise ValueError("resource contents need `text` or `blob`")


#: A v1 content block; an unknown ``type`` is kept as ``msgspec.Raw``.
ContentBlock: TypeAlias = (
    TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource | Raw
)
