"""Display-only terminals owned by the agent: ``terminal_update``, ``terminal_output_chunk``.

Output travels base64-encoded: a ``terminal_update`` ``output`` is a snapshot of all the
bytes to keep; each ``terminal_output_chunk`` is decoded on its own and appended (TM-05,
TM-06). ``TerminalUpdate`` fields other than ``terminalId`` are patch fields.
"""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import UNSET, UnsetType

from acp2.schema._base import LENIENT, Model
from acp2.schema.common import AbsolutePath, MetaField, SessionId, TerminalId

__all__ = [
    "CancelTerminalRequest",
    "CancelTerminalResponse",
    "TerminalCancelCapabilities",
    "TerminalCapabilities",
    "TerminalExitStatus",
    "TerminalOutput",
    "TerminalOutputChunk",
    "TerminalSize",
    "TerminalUpdate",
]

_Dimension = Annotated[int, msgspec.Meta(ge=1, le=65535)]


class TerminalOutput(Model, gc=False, kw_only=True):
    """A terminal output snapshot: base64 ``data`` replacing every byte stored before."""

    data: str
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class TerminalExitStatus(Model, gc=False, kw_only=True):
    """How a terminal's process ended; its presence means the terminal has exited."""

    #: Aug ``uint32``, Nov ``int64`` (negative Windows codes): any integer is accepted.
    exit_code: Annotated[int | UnsetType | None, LENIENT] = UNSET
    #: A conventional signal name such as ``"SIGTERM"``.
    signal: Annotated[str | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class TerminalSize(Model, gc=False, kw_only=True):
    """A terminal's size in character cells (Nov): ``cols`` and ``rows``, 1..65535."""

    cols: _Dimension
    rows: _Dimension
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class TerminalCancelCapabilities(Model, gc=False, kw_only=True):
    """Marker (Nov): this terminal may be cancelled with ``terminal/cancel``."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class TerminalCapabilities(Model, gc=False, kw_only=True):
    """What a client may do with one terminal (Nov); replaced whole on each update."""

    cancel: Annotated[TerminalCancelCapabilities | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class TerminalUpdate(
    Model, tag_field="sessionUpdate", tag="terminal_update", gc=False, kw_only=True
):
    """Session update ``terminal_update``: create or patch the terminal ``terminalId``."""

    terminal_id: TerminalId
    command: Annotated[str | UnsetType | None, LENIENT] = UNSET
    cwd: Annotated[AbsolutePath | UnsetType | None, LENIENT] = UNSET
    output: Annotated[TerminalOutput | UnsetType | None, LENIENT] = UNSET
    exit_status: Annotated[TerminalExitStatus | UnsetType | None, LENIENT] = UNSET
    #: Nov: the terminal's size.
    size: Annotated[TerminalSize | UnsetType | None, LENIENT] = UNSET
    #: Nov: per-terminal capabilities, e.g. ``cancel``.
    capabilities: Annotated[TerminalCapabilities | UnsetType | None, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class TerminalOutputChunk(
    Model, tag_field="sessionUpdate", tag="terminal_output_chunk", gc=False, kw_only=True
):
    """Session update ``terminal_output_chunk``: append base64 ``data`` to a terminal."""

    terminal_id: TerminalId
    data: str
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class CancelTerminalRequest(Model, gc=False, kw_only=True):
    """Params of ``terminal/cancel`` (Nov): stop a terminal's process that advertises ``cancel``."""

    session_id: SessionId
    terminal_id: TerminalId
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class CancelTerminalResponse(Model, gc=False, kw_only=True):
    """Result of ``terminal/cancel`` (Nov): ``{}`` once the cancellation is accepted."""

    meta: MetaField = msgspec.field(default=UNSET, name="_meta")
