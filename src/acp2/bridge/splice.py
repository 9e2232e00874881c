"""The in-process front bridge's hot path: plain text chunks pass through as bytes.

An acp2 agent's ``agent_message_chunk`` / ``agent_thought_chunk`` of plain text (no
annotations, no ``_meta``) is, byte for byte, a valid v1 ``session/update`` with the
same meaning (:meth:`acp2.compat.v1.project.V1Projector.verbatim`). :class:`Splice` is
the ``frame_filter`` of the bridge's end of the in-process link
(:func:`acp2.bridge.front.serve_v1_client`): it sees each frame the agent's emitter
sends before anything decodes it, and queues such a frame, for a session the bridge
has open and not held back, on the v1 connection as it is. Every other frame goes on
to the projection, in the same call, so nothing overtakes anything.

Only for an agent in this process: its frames come from acp2's own encoder (the
emitter's byte layout, checked below), so recognising them by their bytes is safe.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Protocol

import acp2.schema as v2
from acp2.compat.v1.project import V1Projector
from acp2.rpc.connection import Connection
from acp2.rpc.messages import SESSION_UPDATE_PREFIX
from acp2.schema.codec import decode

__all__ = ["Splice"]

_HEAD: Final = SESSION_UPDATE_PREFIX + b'{"sessionId":'
_UPDATE: Final = b',"update":{"sessionUpdate":"'
#: The chunk kinds that pass, by the bytes after ``"sessionUpdate":"``.
_KINDS: Final = (
    (b'agent_message_chunk","messageId":"', v2.AgentMessageChunk),
    (b'agent_thought_chunk","messageId":"', v2.AgentThoughtChunk),
)
_TEXT: Final = b'","content":{"type":"text","text":"'
#: How a plain chunk's frame ends after its text: the text content, the update, the
#: params and the envelope close. Anything else after the text (annotations, ``_meta``,
#: keys v1 would be told differently) makes the frame take the projection.
_END: Final = b'"}}}}'
_BACKSLASH: Final = 92


class _Session(Protocol):
    @property
    def projector(self) -> V1Projector: ...
    @property
    def backlog(self) -> list[Any] | None: ...


class Splice:
    """Passes plain text chunks of the sessions in ``sessions`` (the JSON of a session
    id, its bytes on the wire -> its bridge state) to ``v1`` as they are (see the
    module). Call it with each frame; True: it took the frame."""

    __slots__ = ("_prefix", "_prefix_id", "_prefix_session", "_sessions", "_v1")

    def __init__(self, v1: Connection, sessions: Mapping[bytes, _Session]) -> None:
        self._v1 = v1
        self._sessions = sessions
        #: How the last frame that passed starts, up to its text, and its session.
        self._prefix = b""
        self._prefix_id = b""
        self._prefix_session: _Session | None = None

    def __call__(self, frame: bytes) -> bool:
        """Queue ``frame`` on the v1 connection if it passes; whether it did."""
        # A stream repeats one session, kind and message: its frames start as the last one
        # that passed, up to the text, and then only the text must end the frame.
        prefix = self._prefix
        if not (prefix and frame.startswith(prefix) and self._still_open()):
            if not self._parse(frame):
                return False
        elif not _text_ends_frame(frame, len(prefix)):
            return False
        # One frame of acp2's own encoder (no raw newline in it): queued without the
        # newline check send_frame_nowait makes, as the emitter's sink would take it.
        self._v1.send_frames_nowait(frame)
        return True

    def _still_open(self) -> bool:
        """Whether the session of the last frame that passed is still the open one."""
        session = self._sessions.get(self._prefix_id)
        return session is not None and session is self._prefix_session and session.backlog is None

    def _parse(self, frame: bytes) -> bool:
        if not frame.startswith(_HEAD):
            return False
        at = frame.find(_UPDATE, len(_HEAD))
        wire_id = frame[len(_HEAD) : at]
        session = self._sessions.get(wire_id) if at > 0 else None
        if session is None or session.backlog is not None:
            return False
        at += len(_UPDATE)
        found = _kind(frame, at)
        if found is None:
            return False
        tag, kind = found
        at += len(tag)
        text = frame.find(_TEXT, at)
        if text < 0 or not _text_ends_frame(frame, text + len(_TEXT)):
            return False
        session.projector.note_spoken(kind, decode(frame[at - 1 : text + 1], str))
        self._prefix = frame[: text + len(_TEXT)]
        self._prefix_id, self._prefix_session = wire_id, session
        return True


def _text_ends_frame(frame: bytes, start: int) -> bool:
    """Whether the JSON string that starts at ``start`` (after its opening quote) is
    closed by the quote of the frame's :data:`_END`: no unescaped quote before it."""
    end = len(frame) - len(_END)
    if end < start or not frame.endswith(_END):
        return False
    at = frame.find(b'"', start, end)
    while at >= 0:  # a quote inside the text must be escaped (rare: one look each)
        if not _escaped(frame, at, start):
            return False
        at = frame.find(b'"', at + 1, end)
    return frame[end - 1] != _BACKSLASH or not _escaped(frame, end, start)


def _escaped(frame: bytes, at: int, start: int) -> bool:
    """Whether the character at ``at`` follows an odd run of backslashes."""
    run = 0
    while at - run > start and frame[at - run - 1] == _BACKSLASH:
        run += 1
    return run % 2 == 1


def _kind(frame: bytes, at: int) -> tuple[bytes, type] | None:
    for tag, kind in _KINDS:
        if frame.startswith(tag, at):
            return tag, kind
    return None
