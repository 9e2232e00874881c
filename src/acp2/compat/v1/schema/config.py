"""v1 session config options (select / boolean) and ``session/set_config_option``."""

from __future__ import annotations

from typing import Annotated, TypeAlias

import msgspec
from msgspec import UNSET, Raw, UnsetType

from acp2.compat.v1.schema.common import (
    LENIENT,
    SKIP_INVALID,
    MetaField,
    Model,
    SessionConfigGroupId,
    SessionConfigId,
    SessionConfigValueId,
    SessionId,
)

__all__ = [
    "SessionConfigBoolean",
    "SessionConfigOption",
    "SessionConfigSelect",
    "SessionConfigSelectOption",
    "SessionConfigSelectOptions",
    "SetSessionConfigOptionRequest",
    "SetSessionConfigOptionResponse",
]


class SetSessionConfigOptionResponse(Model, gc=False, kw_only=True):
    """Result of v1 ``session/set_config_option``."""

    config_options: Annotated[list[SessionConfigOption], SKIP_INVALID]
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class _ConfigOption(Model, gc=False, kw_only=True):
    id: SessionConfigId
    name: str
    description: Annotated[str | UnsetType | None, LENIENT] = UNSET
    #: ``mode``, ``model``, ``model_config``, ``thought_level`` or a custom value.
    category: Annotated[str | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class SessionConfigSelect(_ConfigOption, tag_field="type", tag="select", kw_only=True):
    """Config option ``type:"select"``: ``currentValue`` among ``options`` (flat or grouped)."""

    current_value: SessionConfigValueId
    options: SessionConfigSelectOptions


class SessionConfigBoolean(_ConfigOption, tag_field="type", tag="boolean", kw_only=True):
    """Config option ``type:"boolean"``: an on/off ``currentValue``."""

    current_value: bool


#: A v1 session config option; an unknown ``type`` is kept as ``msgspec.Raw``.
SessionConfigOption: TypeAlias = SessionConfigSelect | SessionConfigBoolean | Raw


class SessionConfigSelectOption(Model, gc=False, kw_only=True):
    """A select choice ``{value, name, description?}`` or a group ``{group, name, options}``.

    The schema's untagged union of arrays (choices or groups) merged into one struct:
    exactly one of ``value`` (a choice) and ``group`` (a group) is present, and a group's
    ``options`` are choices, never groups.
    """

    name: str
    value: SessionConfigValueId | UnsetType = UNSET
    description: Annotated[str | UnsetType | None, LENIENT] = UNSET
    group: SessionConfigGroupId | UnsetType = UNSET
    options: Annotated[list[SessionConfigSelectOption] | UnsetType, LENIENT, SKIP_INVALID] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")

    def __post_init__(self) -> None:
        if self.group is UNSET:
            if self.value is UNSET or self.options is not UNSET:
                raise ValueError("a select option needs `value` and no `options`")
        elif self.value is not UNSET or self.options is UNSET:
            raise ValueError("a select group needs `options` and no `value`")
        elif any(option.group is not UNSET for option in self.options):
            raise ValueError("select groups cannot be nested")


#: A select's options: flat choices or groups (see :class:`SessionConfigSelectOption`).
SessionConfigSelectOptions: TypeAlias = list[SessionConfigSelectOption]


class SetSessionConfigOptionRequest(Model, gc=False, kw_only=True):
    """Params of v1 ``session/set_config_option``: a value id, or ``type:"boolean"`` + bool.

    The schema's untagged ``anyOf`` (``{type:"boolean", value: bool}`` or ``{value: id}``)
    merged into one struct; ``__post_init__`` checks that ``value`` matches ``type``.
    """

    session_id: SessionId
    config_id: SessionConfigId
    value: bool | str
    type: str | UnsetType = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")

    def __post_init__(self) -> None:
        if self.type == "boolean" and not isinstance(self.value, bool):
            raise ValueError("a boolean config value must be `true` or `false`")
        if self.type is UNSET and not isinstance(self.value, str):
            raise ValueError("a config value id must be a string")
