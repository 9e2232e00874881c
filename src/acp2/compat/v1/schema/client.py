"""v1 client-side methods an agent calls: ``fs/*`` text files and ``terminal/*``."""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import UNSET, UnsetType

from acp2.compat.v1.schema.common import (
    LENIENT,
    SKIP_INVALID,
    MetaField,
    Model,
    SessionId,
    TerminalId,
    UInt,
)
from acp2.compat.v1.schema.session import EnvVariable

__all__ = [
    "CreateTerminalRequest",
    "CreateTerminalResponse",
    "KillTerminalRequest",
    "KillTerminalResponse",
    "ReadTextFileRequest",
    "ReadTextFileResponse",
    "ReleaseTerminalRequest",
    "ReleaseTerminalResponse",
    "TerminalExitStatus",
    "TerminalOutputRequest",
    "TerminalOutputResponse",
    "WaitForTerminalExitRequest",
    "WaitForTerminalExitResponse",
    "WriteTextFileRequest",
    "WriteTextFileResponse",
]


class ReadTextFileRequest(Model, gc=False, kw_only=True):
    """Params of v1 ``fs/read_text_file``."""

    session_id: SessionId
    path: str
    line: Annotated[UInt | UnsetType | None, LENIENT] = UNSET
    limit: Annotated[UInt | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ReadTextFileResponse(Model, gc=False, kw_only=True):
    """Result of v1 ``fs/read_text_file``."""

    content: str
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class WriteTextFileRequest(Model, gc=False, kw_only=True):
    """Params of v1 ``fs/write_text_file``."""

    session_id: SessionId
    path: str
    content: str
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class WriteTextFileResponse(Model, gc=False, kw_only=True):
    """Result of v1 ``fs/write_text_file``."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class CreateTerminalRequest(Model, gc=False, kw_only=True):
    """Params of v1 ``terminal/create``."""

    session_id: SessionId
    command: str
    args: Annotated[list[str] | UnsetType, LENIENT, SKIP_INVALID] = UNSET
    env: Annotated[list[EnvVariable] | UnsetType, LENIENT, SKIP_INVALID] = UNSET
    cwd: Annotated[str | UnsetType | None, LENIENT] = UNSET
    output_byte_limit: Annotated[UInt | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class CreateTerminalResponse(Model, gc=False, kw_only=True):
    """Result of v1 ``terminal/create``."""

    terminal_id: TerminalId
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class TerminalOutputRequest(Model, gc=False, kw_only=True):
    """Params of v1 ``terminal/output``."""

    session_id: SessionId
    terminal_id: TerminalId
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class TerminalExitStatus(Model, gc=False, kw_only=True):
    """How a terminal's command ended: ``exitCode`` or ``signal`` (either may be null)."""

    exit_code: Annotated[UInt | UnsetType | None, LENIENT] = UNSET
    signal: Annotated[str | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class TerminalOutputResponse(Model, gc=False, kw_only=True):
    """Result of v1 ``terminal/output``."""

    output: str
    truncated: bool
    exit_status: Annotated[TerminalExitStatus | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class WaitForTerminalExitRequest(Model, gc=False, kw_only=True):
    """Params of v1 ``terminal/wait_for_exit``."""

    session_id: SessionId
    terminal_id: TerminalId
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class WaitForTerminalExitResponse(Model, gc=False, kw_only=True):
    """Result of v1 ``terminal/wait_for_exit``."""

    exit_code: Annotated[UInt | UnsetType | None, LENIENT] = UNSET
    signal: Annotated[str | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class KillTerminalRequest(Model, gc=False, kw_only=True):
    """Params of v1 ``terminal/kill``."""

    session_id: SessionId
    terminal_id: TerminalId
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class KillTerminalResponse(Model, gc=False, kw_only=True):
    """Result of v1 ``terminal/kill``."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ReleaseTerminalRequest(Model, gc=False, kw_only=True):
    """Params of v1 ``terminal/release``."""

    session_id: SessionId
    terminal_id: TerminalId
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class ReleaseTerminalResponse(Model, gc=False, kw_only=True):
    """Result of v1 ``terminal/release``."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")
