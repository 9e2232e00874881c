"""Content blocks: what prompts, messages and tool calls carry (text, images, resources).

``ContentBlock`` is an open union tagged by ``type``: a block whose type is unknown
decodes to ``msgspec.Raw`` and re-encodes unchanged (CT-01, EX-07).
"""

from __future__ import annotations

from typing import Annotated, TypeAlias

import msgspec
from msgspec import UNSET, Raw, UnsetType

from acp2.schema._base import LENIENT, SKIP_INVALID, Model
from acp2.schema.common import MediaType, MetaField

__all__ = [
    "Annotations",
    "AudioContent",
    "ContentBlock",
    "EmbeddedResource",
    "EmbeddedResourceResource",
    "Icon",
    "ImageContent",
    "ResourceLink",
    "TextContent",
]


class Annotations(Model, gc=False, kw_only=True):
    """Display hints on a content block: audience, last modification, priority (0-1)."""

    audience: Annotated[list[str] | UnsetType | None, LENIENT, SKIP_INVALID] = UNSET
    #: ISO 8601 date-time (Aug requires the RFC 3339 form; Nov only "should").
    last_modified: Annotated[str | UnsetType | None, LENIENT] = UNSET
    priority: Annotated[Annotated[float, msgspec.Meta(ge=0, le=1)] | UnsetType | None, LENIENT] = (
        UNSET
    )
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class Icon(Model, gc=False, kw_only=True):
    """An icon of a resource link: ``src`` (https: or data: URI), MIME type, sizes, theme."""

    src: str
    mime_type: Annotated[MediaType | UnsetType | None, LENIENT] = UNSET
    sizes: Annotated[list[str] | UnsetType | None, LENIENT, SKIP_INVALID] = UNSET
    #: ``light``, ``dark`` or a custom / future value.
    theme: Annotated[str | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class TextContent(Model, tag_field="type", tag="text", gc=False, kw_only=True):
    """A ``text`` content block (Markdown)."""

    text: str
    annotations: Annotated[Annotations | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ImageContent(Model, tag_field="type", tag="image", gc=False, kw_only=True):
    """An ``image`` content block: base64 ``data`` and its MIME type."""

    data: str
    mime_type: MediaType
    uri: Annotated[str | UnsetType | None, LENIENT] = UNSET
    annotations: Annotated[Annotations | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class AudioContent(Model, tag_field="type", tag="audio", gc=False, kw_only=True):
    """An ``audio`` content block: base64 ``data`` and its MIME type."""

    data: str
    mime_type: MediaType
    annotations: Annotated[Annotations | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ResourceLink(Model, tag_field="type", tag="resource_link", gc=False, kw_only=True):
    """A ``resource_link`` content block: a reference (URI) the receiver may fetch."""

    name: str
    uri: str
    title: Annotated[str | UnsetType | None, LENIENT] = UNSET
    description: Annotated[str | UnsetType | None, LENIENT] = UNSET
    icons: Annotated[list[Icon] | UnsetType | None, LENIENT, SKIP_INVALID] = UNSET
    mime_type: Annotated[MediaType | UnsetType | None, LENIENT] = UNSET
    #: Size in bytes (Aug ``int64``, Nov ``uint64``: any integer is accepted).
    size: Annotated[int | UnsetType | None, LENIENT] = UNSET
    annotations: Annotated[Annotations | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class EmbeddedResourceResource(Model, gc=False, kw_only=True):
    """The contents of an embedded resource: ``uri`` plus ``text`` or base64 ``blob``.

    The schema's untagged union ``TextResourceContents | BlobResourceContents`` merged
    into one struct (msgspec cannot decode an untagged union of objects); at least one of
    ``text`` / ``blob`` must be present.
    """

    uri: str
    text: str | UnsetType = UNSET
    blob: str | UnsetType = UNSET
    mime_type: Annotated[MediaType | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")

    def __post_init__(self) -> None:
        if self.text is UNSET and self.blob is UNSET:
            raise ValueError("resource contents need `text` or `blob`")


class EmbeddedResource(Model, tag_field="type", tag="resource", gc=False, kw_only=True):
    """A ``resource`` content block: the resource's contents embedded in the message."""

    resource: EmbeddedResourceResource
    annotations: Annotated[Annotations | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


#: A content block; an unknown ``type`` is kept as ``msgspec.Raw``.
ContentBlock: TypeAlias = (
    TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource | Raw
)
