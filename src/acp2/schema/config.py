"""Session config options: selects and booleans, ``session/set_config_option`` (CO-*).

``SessionConfigOption`` is an open union tagged by ``type`` (``select``, ``boolean``);
an unknown type is kept as ``msgspec.Raw`` (CO-04). A select's ``options`` are either a
flat list of values or a list of groups -- an untagged union msgspec cannot decode -- so
one class, :class:`SessionConfigSelectOption`, carries both shapes: a value
(``value``, ``name``) or a group (``groupId``, ``name``, ``options``).
"""

from __future__ import annotations

from typing import Annotated, Any, TypeAlias

import msgspec
from msgspec import UNSET, Raw, UnsetType

from acp2.schema._base import LENIENT, SKIP_INVALID, Model
from acp2.schema.common import (
    MetaField,
    SessionConfigGroupId,
    SessionConfigId,
    SessionConfigValueId,
    SessionId,
)

__all__ = [
    "ConfigOptionUpdate",
    "SessionConfigBoolean",
    "SessionConfigOption",
    "SessionConfigSelect",
    "SessionConfigSelectOption",
    "SessionConfigSelectOptions",
    "SetSessionConfigOptionRequest",
    "SetSessionConfigOptionResponse",
]


class SessionConfigSelectOption(Model, gc=False, kw_only=True):
    """A select choice ``{value, name, description?}`` or a group ``{groupId, name, options}``.

    Exactly one of ``value`` (a choice) and ``group_id`` (a group) is present; a group's
    ``options`` are choices, never groups.
    """

    name: str
    value: SessionConfigValueId | UnsetType = UNSET
    description: Annotated[str | UnsetType | None, LENIENT] = UNSET
    group_id: SessionConfigGroupId | UnsetType = UNSET
    options: Annotated[list[SessionConfigSelectOption] | UnsetType, LENIENT, SKIP_INVALID] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")

    def __post_init__(self) -> None:
        if self.group_id is UNSET:
            if self.value is UNSET or self.options is not UNSET:
                raise ValueError("a select option needs `value` and no `options`")
        elif self.value is not UNSET or self.options is UNSET:
            raise ValueError("a select group needs `options` and no `value`")
        elif any(option.group_id is not UNSET for option in self.options):
            raise ValueError("select groups cannot be nested")

    @property
    def is_group(self) -> bool:
        """Whether this entry is a group of choices rather than a choice."""
        return self.group_id is not UNSET


#: A select's choices: all flat choices, or all groups.
SessionConfigSelectOptions: TypeAlias = list[SessionConfigSelectOption]


class _ConfigOptionBase(Model, gc=False, kw_only=True):
    config_id: SessionConfigId
    name: str
    description: Annotated[str | UnsetType | None, LENIENT] = UNSET
    #: ``mode``, ``model``, ``model_config``, ``thought_level`` or custom: a UX hint only.
    category: Annotated[str | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class SessionConfigSelect(_ConfigOptionBase, tag_field="type", tag="select", kw_only=True):
    """Config option ``{type:"select"}``: ``currentValue`` is one of ``options``' values."""

    current_value: SessionConfigValueId
    options: SessionConfigSelectOptions

    def __post_init__(self) -> None:
        if len({option.is_group for option in self.options}) > 1:
            raise ValueError("select options mix choices and groups")


class SessionConfigBoolean(_ConfigOptionBase, tag_field="type", tag="boolean", kw_only=True):
    """Config option ``{type:"boolean"}`` with a boolean ``currentValue``."""

    current_value: bool


#: A session config option; an unknown ``type`` is kept as ``msgspec.Raw``.
SessionConfigOption: TypeAlias = SessionConfigSelect | SessionConfigBoolean | Raw


class SetSessionConfigOptionRequest(Model, gc=False, kw_only=True):
    """Params of ``session/set_config_option``: set ``configId`` to ``value``.

    ``type`` says how to read ``value``: ``"id"`` (a select value id, a string),
    ``"boolean"`` (a bool) or a custom / future type with any JSON value.
    """

    session_id: SessionId
    config_id: SessionConfigId
    type: str
    value: Any
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")

    def __post_init__(self) -> None:
        if self.type == "id" and not isinstance(self.value, str):
            raise ValueError("`value` of type `id` must be a string")
        if self.type == "boolean" and not isinstance(self.value, bool):
            raise ValueError("`value` of type `boolean` must be a boolean")


class SetSessionConfigOptionResponse(Model, gc=False, kw_only=True):
    """Result of ``session/set_config_option``: the complete, current option list."""

    config_options: Annotated[list[SessionConfigOption], LENIENT, SKIP_INVALID]
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ConfigOptionUpdate(
    Model, tag_field="sessionUpdate", tag="config_option_update", gc=False, kw_only=True
):
    """Session update ``config_option_update``: the complete option list."""

    config_options: Annotated[list[SessionConfigOption], LENIENT, SKIP_INVALID]
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")
