"""Structured diffs: ``{type:"diff", changes, patch?}`` tool-call content (DF-01..DF-07).

``DiffChange`` is an open union tagged by ``operation``. ``add`` / ``delete`` / ``modify``
carry one ``path`` (the schema's ``DiffPathChange``); ``move`` / ``copy`` carry ``oldPath``
and ``path`` (``DiffPathPairChange``). Each operation has its own class so that msgspec can
dispatch on the tag; an unknown operation is kept as ``msgspec.Raw``.
"""

from __future__ import annotations

from typing import Annotated, TypeAlias

import msgspec
from msgspec import UNSET, Raw, UnsetType

from acp2.schema._base import LENIENT, SKIP_INVALID, Model
from acp2.schema.common import AbsolutePath, MediaType, MetaField

__all__ = [
    "Diff",
    "DiffAddChange",
    "DiffChange",
    "DiffCopyChange",
    "DiffDeleteChange",
    "DiffModifyChange",
    "DiffMoveChange",
    "DiffPatch",
    "DiffPathChange",
    "DiffPathPairChange",
]


class DiffPathChange(Model, gc=False, kw_only=True):
    """Fields of a single-path change (``add``, ``delete``, ``modify``); see its subclasses."""

    path: AbsolutePath
    #: ``text``, ``binary``, ``directory``, ``symlink`` or a custom / future value.
    file_type: Annotated[str | UnsetType | None, LENIENT] = UNSET
    mime_type: Annotated[MediaType | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class DiffPathPairChange(Model, gc=False, kw_only=True):
    """Fields of a two-path change (``move``, ``copy``); see its subclasses."""

    old_path: AbsolutePath
    path: AbsolutePath
    file_type: Annotated[str | UnsetType | None, LENIENT] = UNSET
    mime_type: Annotated[MediaType | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class DiffAddChange(DiffPathChange, tag_field="operation", tag="add", kw_only=True):
    """A diff change ``{operation:"add", path}``: the path was created."""


class DiffDeleteChange(DiffPathChange, tag_field="operation", tag="delete", kw_only=True):
    """A diff change ``{operation:"delete", path}``: the path was removed."""


class DiffModifyChange(DiffPathChange, tag_field="operation", tag="modify", kw_only=True):
    """A diff change ``{operation:"modify", path}``: the path's contents changed."""


class DiffMoveChange(DiffPathPairChange, tag_field="operation", tag="move", kw_only=True):
    """A diff change ``{operation:"move", oldPath, path}``: the path was renamed."""


class DiffCopyChange(DiffPathPairChange, tag_field="operation", tag="copy", kw_only=True):
    """A diff change ``{operation:"copy", oldPath, path}``: the path was copied."""


#: One changed path of a diff; an unknown ``operation`` is kept as ``msgspec.Raw``.
DiffChange: TypeAlias = (
    DiffAddChange | DiffDeleteChange | DiffModifyChange | DiffMoveChange | DiffCopyChange | Raw
)


class DiffPatch(Model, gc=False, kw_only=True):
    """A textual patch of a diff: ``format`` (``git_patch`` or custom) and ``text``."""

    format: str
    text: str
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class Diff(Model, tag_field="type", tag="diff", gc=False, kw_only=True):
    """Tool-call content ``{type:"diff"}``: authoritative ``changes`` plus an optional patch."""

    changes: Annotated[list[DiffChange], SKIP_INVALID]
    patch: Annotated[DiffPatch | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")
