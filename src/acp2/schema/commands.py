"""Slash commands: ``available_commands_update`` and the command list (CM-01..CM-03)."""

from __future__ import annotations

from typing import Annotated, TypeAlias

import msgspec
from msgspec import UNSET, Raw, UnsetType

from acp2.schema._base import LENIENT, SKIP_INVALID, Model
from acp2.schema.common import MetaField

__all__ = [
    "AvailableCommand",
    "AvailableCommandInput",
    "AvailableCommandsUpdate",
    "Command",
    "TextCommandInput",
]


class TextCommandInput(Model, tag_field="type", tag="text", gc=False, kw_only=True):
    """Command input ``{type:"text", hint}``: free text typed after the command name."""

    hint: str
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


#: A command's structured input; an unknown ``type`` is kept as ``msgspec.Raw``.
AvailableCommandInput: TypeAlias = TextCommandInput | Raw


class AvailableCommand(Model, gc=False, kw_only=True):
    """A slash command the agent offers: ``name`` (no ``/``), ``description``, ``input?``.

    ``type`` is Nov's discriminator: Aug commands have none, so a missing ``type`` decodes
    as ``"command"``, and it is always sent because TS 2.4.0 drops commands without it
    (D-28). Other values (future command kinds) are accepted and kept.
    """

    type: str = "command"
    name: str
    description: str
    input: Annotated[AvailableCommandInput | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


#: Nov's name for the ``type:"command"`` variant of ``AvailableCommand``.
Command: TypeAlias = AvailableCommand


class AvailableCommandsUpdate(
    Model, tag_field="sessionUpdate", tag="available_commands_update", gc=False, kw_only=True
):
    """Session update ``available_commands_update``: the complete command list."""

    available_commands: Annotated[list[AvailableCommand], LENIENT, SKIP_INVALID]
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")
