"""acp2's own ``_`` extensions: their method table, models and ``_meta`` markers.

Several clients on one live session (issue 15). The spec has only a draft for this (RFD
"Multi-Client Session Attach", agent-client-protocol PR 533: ``session/attach``, roles,
first answer wins), so acp2 keeps its wire behind ``_`` names until it settles:

* ``_acp2/session/attach`` (client -> agent, request): attach this connection to a session
  another connection of the same agent is serving, as ``observer`` (read-only) or
  ``controller`` (may prompt, cancel and answer). Before its response the agent sends the
  attacher alone the snapshot: the whole history replayed, ``replay_complete``, a
  ``state_update`` and ``available_commands_update`` (as a resume with replay does); every
  later update of the session reaches it live. ``session/close`` detaches.
* The agent advertises it in ``capabilities.session._meta["acp2"]["attach"]``
  (:func:`attach_capability`); a client checks that with :func:`supports_attach`.
* An agent whose sessions live only in its process's memory says so with
  ``capabilities.session._meta["acp2"]["store"] == "memory"`` (:func:`memory_store_meta`),
  so a client never offers a resume that cannot work (:func:`keeps_sessions_in_memory`).
* ``_acp2/session/steer`` (client -> agent, request): text for the *running* work of a
  session, read by the agent at its next step (the coding agent: before its next model
  call), shown to every client as a ``user_message``. The answer says ``steered`` (with
  that message's id) or ``idle`` (nothing runs: send a prompt instead). Mid-turn input is
  an open RFD (``session/inject``, agent-client-protocol PR 1261); until it settles acp2
  keeps this behind a ``_`` name, advertised in
  ``capabilities.session._meta["acp2"]["steer"]`` (:func:`steer_capability`,
  :func:`supports_steer`): a peer that does not advertise it is never sent it.
* A permission or elicitation answer whose ``_meta["acp2"]["implicit"]`` is true was given
  by a policy that did not ask anyone (e.g. ``deny_all``): with several controllers, the
  first answer *not* so marked wins (:func:`implicit_meta`, :func:`is_implicit`).

This module is the one place these wire names are written, like :mod:`acp2.schema.methods`
for the spec's methods (``tests/schema/test_wire_names.py`` reads both).
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, TypeAlias

import msgspec
from msgspec import UNSET, UnsetType

from acp2.schema._base import LENIENT, SKIP_INVALID, Model
from acp2.schema.commands import AvailableCommand
from acp2.schema.common import AbsolutePath, MetaField, SessionId
from acp2.schema.config import SessionConfigOption
from acp2.schema.content import ContentBlock
from acp2.schema.methods import MethodSpec, request

__all__ = [
    "ATTACH_ROLES",
    "EXTENSIONS",
    "META_KEY",
    "SESSION_ATTACH",
    "SESSION_STEER",
    "AttachRole",
    "AttachSessionRequest",
    "AttachSessionResponse",
    "SteerSessionRequest",
    "SteerSessionResponse",
    "attach_capability",
    "implicit_meta",
    "is_implicit",
    "keeps_sessions_in_memory",
    "memory_store_meta",
    "steer_capability",
    "supports_attach",
    "supports_steer",
]

#: How a client attaches: ``observer`` only watches; ``controller`` may also prompt,
#: cancel and answer permission and elicitation requests.
AttachRole: TypeAlias = Literal["observer", "controller"]
ATTACH_ROLES: Final[tuple[AttachRole, ...]] = ("observer", "controller")

#: The ``_meta`` key under which acp2 puts its own markers.
META_KEY: Final = "acp2"


class AttachSessionRequest(Model, gc=False, kw_only=True):
    """Params of ``_acp2/session/attach``: the live session and the role asked for."""

    session_id: SessionId
    role: AttachRole
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class AttachSessionResponse(Model, gc=False, kw_only=True):
    """Result of ``_acp2/session/attach``, sent after the snapshot: the role granted, the
    session's ``cwd``, its config options and commands."""

    session_id: SessionId
    role: AttachRole
    cwd: AbsolutePath
    config_options: Annotated[list[SessionConfigOption] | UnsetType, LENIENT, SKIP_INVALID] = UNSET
    available_commands: Annotated[list[AvailableCommand] | UnsetType, LENIENT, SKIP_INVALID] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class SteerSessionRequest(Model, gc=False, kw_only=True):
    """Params of ``_acp2/session/steer``: the session and the content for its running work."""

    session_id: SessionId
    prompt: list[ContentBlock]
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class SteerSessionResponse(Model, gc=False, kw_only=True):
    """Result of ``_acp2/session/steer``: ``outcome`` ``steered`` (``message_id`` is the
    ``user_message`` that shows it) or ``idle`` (nothing was running; nothing was kept)."""

    outcome: str
    message_id: Annotated[str | UnsetType, LENIENT] = UNSET
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


SESSION_STEER: Final = request(
    "_acp2/session/steer", SteerSessionRequest, SteerSessionResponse, "client", session=True
)

SESSION_ATTACH: Final = request(
    "_acp2/session/attach",
    AttachSessionRequest,
    AttachSessionResponse,
    "client",
    session=True,
    joins=True,
)

#: acp2's extension methods, keyed by wire name (not part of :data:`~acp2.schema.methods.METHODS`,
#: which is the spec's table).
EXTENSIONS: Final[dict[str, MethodSpec[Any, Any]]] = {
    SESSION_ATTACH.name: SESSION_ATTACH,
    SESSION_STEER.name: SESSION_STEER,
}


def attach_capability() -> dict[str, Any]:
    """The ``_meta`` of ``capabilities.session`` an agent that allows attaching sends."""
    return {META_KEY: {"attach": {"roles": list(ATTACH_ROLES)}}}


def memory_store_meta() -> dict[str, Any]:
    """The ``acp2`` entries of ``capabilities.session._meta`` of an agent whose sessions
    end with its process (an in-memory store): merge under :data:`META_KEY`."""
    return {"store": "memory"}


def keeps_sessions_in_memory(session_capabilities: Any) -> bool:
    """True when an agent's ``capabilities.session`` says its sessions end with its
    process (no resume after it exits); False when it says nothing."""
    meta = getattr(session_capabilities, "meta", None)
    ours = meta.get(META_KEY) if isinstance(meta, dict) else None
    return isinstance(ours, dict) and ours.get("store") == "memory"


def supports_attach(session_capabilities: Any) -> bool:
    """True when an agent's ``capabilities.session`` advertises ``_acp2/session/attach``."""
    meta = getattr(session_capabilities, "meta", None)
    ours = meta.get(META_KEY) if isinstance(meta, dict) else None
    return isinstance(ours, dict) and isinstance(ours.get("attach"), dict)


def steer_capability() -> dict[str, Any]:
    """The ``acp2`` entries of ``capabilities.session._meta`` of an agent that takes
    ``_acp2/session/steer``: merge under :data:`META_KEY`."""
    return {"steer": {}}


def supports_steer(session_capabilities: Any) -> bool:
    """True when an agent's ``capabilities.session`` advertises ``_acp2/session/steer``."""
    meta = getattr(session_capabilities, "meta", None)
    ours = meta.get(META_KEY) if isinstance(meta, dict) else None
    return isinstance(ours, dict) and isinstance(ours.get("steer"), dict)


def implicit_meta() -> dict[str, Any]:
    """The ``_meta`` of an answer no person gave (a policy that declines without asking)."""
    return {META_KEY: {"implicit": True}}


def is_implicit(answer: Any) -> bool:
    """True when ``answer`` (a permission or elicitation result) is marked implicit."""
    meta = getattr(answer, "meta", None)
    ours = meta.get(META_KEY) if isinstance(meta, dict) else None
    return isinstance(ours, dict) and ours.get("implicit") is True
