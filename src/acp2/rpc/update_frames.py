"""What a ``session/update`` frame's bytes say, for layers that must not parse it (sans-IO).

The server sorts every message the agent side sends (which SSE stream, which session's
history) at a rate where a full parse per update would dominate. The agent runtime
writes its updates in one layout (:func:`frame_head`, which :mod:`acp2.agent.emitter`
builds its frames from; ``tests/rpc/test_messages.py`` pins the prefix to the encoder):
the session id and the update's kind come first. The
functions here read them from that layout with a few ``startswith`` / ``find`` calls, and
fall back to a real, guarded parse for any other layout, so a caller gets the same
answer for every spelling of the same frame. This module is the one place outside
the rpc encoders that knows the layout.
"""

from __future__ import annotations

from typing import Final

import msgspec

from acp2.errors import InvalidRequest
from acp2.rpc.guarded import decode
from acp2.rpc.messages import SESSION_UPDATE_PREFIX
from acp2.schema.methods import SESSION_UPDATE

__all__ = [
    "KIND_HEAD",
    "UPDATE_HEAD",
    "announced_child",
    "fast_session",
    "frame_head",
    "run_head",
    "session_head",
    "update_frame",
    "update_of",
]

#: How a ``session/update`` in the agent's layout starts, up to its session id's text.
UPDATE_HEAD: Final = SESSION_UPDATE_PREFIX + b'{"sessionId":"'
#: What follows the session id's text, up to the update kind's text.
KIND_HEAD: Final = b'","update":{"sessionUpdate":"'
_START: Final = len(UPDATE_HEAD)


class _Kind(msgspec.Struct):
    session_update: str = msgspec.field(default="", name="sessionUpdate")


class _Params(msgspec.Struct):
    session_id: str = msgspec.field(default="", name="sessionId")
    update: _Kind = msgspec.field(default_factory=_Kind)


class _Notification(msgspec.Struct):
    method: str = ""
    params: _Params = msgspec.field(default_factory=_Params)


_notification: Final = msgspec.json.Decoder(_Notification)


class _Child(msgspec.Struct):
    session_update: str = msgspec.field(default="", name="sessionUpdate")
    session_id: str = msgspec.field(default="", name="sessionId")


class _ChildParams(msgspec.Struct):
    update: _Child = msgspec.field(default_factory=_Child)


class _ChildNotification(msgspec.Struct):
    method: str = ""
    params: _ChildParams = msgspec.field(default_factory=_ChildParams)


_child_notification: Final = msgspec.json.Decoder(_ChildNotification)
#: The kind text of an update that names a child session, closing quote included.
_SUBAGENT: Final = b'subagent_update"'


def session_head(session: str | None) -> bytes:
    """How every ``session/update`` of ``session`` in the agent's layout starts, up to the
    end of its id: a line with this prefix is one of that session's updates. Empty for
    None, and for an id JSON would escape (such lines take the slow path)."""
    if session is None or "\\" in session or '"' in session or not session.isprintable():
        return b""
    return UPDATE_HEAD + session.encode() + b'"'


def run_head(session: str) -> bytes:
    """How ``session``'s updates in the agent's layout start, up to their kind's text
    (``run_head(s) + kind + b'"'`` starts every update of that kind)."""
    return UPDATE_HEAD + session.encode() + KIND_HEAD


def fast_session(line: bytes) -> str | None:
    """The session id of a ``session/update`` in the agent's layout, else None (the
    caller reads the envelope properly)."""
    if not line.startswith(UPDATE_HEAD):
        return None
    end = line.find(b'"', _START)
    if end < 0 or b"\\" in line[_START:end]:
        return None
    try:
        return line[_START:end].decode()
    except UnicodeDecodeError:
        return None


def update_of(line: bytes) -> tuple[str, bytes] | None:
    """``(session id, update kind)`` of a ``session/update`` notification, or None for any
    other message (and for one without a session id or a kind)."""
    if line.startswith(UPDATE_HEAD):
        end = line.find(b'"', _START)
        if end > 0 and line.startswith(KIND_HEAD, end) and b"\\" not in line[_START:end]:
            kind_start = end + len(KIND_HEAD)
            kind = line[kind_start : line.find(b'"', kind_start)]
            return line[_START:end].decode(), kind
    elif not line.startswith(SESSION_UPDATE_PREFIX):
        return None
    try:  # another layout (a raw update, keys reordered): read it properly
        parsed = decode(_notification, line)
    except InvalidRequest:
        return None
    params = parsed.params
    kind = params.update.session_update.encode()
    if parsed.method != SESSION_UPDATE.name or not kind or not params.session_id:
        return None
    return params.session_id, kind


def frame_head(session: str) -> bytes:
    """What every ``session/update`` of ``session`` in the agent's layout starts with, up
    to its update: ``frame_head(s) + update + b"}}"`` is a whole frame (the agent runtime
    builds its frames so, with one concatenation per update)."""
    return SESSION_UPDATE_PREFIX + b'{"sessionId":' + msgspec.json.encode(session) + b',"update":'


def update_frame(session: str, update: bytes) -> bytes:
    """The ``session/update`` notification of ``session`` carrying ``update`` (the JSON
    bytes of one update), in the agent's layout."""
    return frame_head(session) + update + b"}}"


def announced_child(line: bytes) -> str | None:
    """The child session id a ``subagent_update`` notification names, else None (any
    other message, and one whose child id is missing or not text).

    Any other update in the agent's layout is told apart with a few ``startswith`` /
    ``find`` calls and no copy (a reader may call this on every notification); a
    ``subagent_update`` is parsed, and so is a message in another layout (key order,
    whitespace) that mentions the kind at all."""
    if line.startswith(UPDATE_HEAD):
        end = line.find(b'"', _START)
        if end < 0 or not line.startswith(KIND_HEAD, end):
            return None
        if not line.startswith(_SUBAGENT, end + len(KIND_HEAD)):
            return None
    elif b'"subagent_update"' not in line:
        return None
    try:
        parsed = decode(_child_notification, line)
    except InvalidRequest:
        return None
    update = parsed.params.update
    if parsed.method != SESSION_UPDATE.name or update.session_update != "subagent_update":
        return None
    return update.session_id or None
