"""The in-process front bridge's hot path: plain text chunks pass through as bytes.

An acp2 agent's ``agent_message_chunk`` / ``agent_thought_chunk`` of plain text (no
annotations, no ``_meta``) is, byte for byte, a valid v1 ``session/update`` with the
same meaning (:meth:`acp2.compat.v1.project.V1Projector.verbatim`). :class:`Splice`
stands in for the agent's end of the in-process link
(:func:`acp2.bridge.front.serve_v1_client`): it sees each frame the agent's emitter
sends before anything decodes it, and queues such a frame, for a session the bridge
has open and not held back, on the v1 connection as it is. A ``state_update`` or a
``user_message`` of such a session (each turn has one ``user_message``, ``running`` and
``idle``) is decoded from its update's bytes alone and handed to ``project`` (the front
bridge's projection), without the envelope decode and the link's hand-over. Every other
frame goes on to the projection through the link, in the same call, so nothing
overtakes anything.

:meth:`Splice.send` is the agent's sink itself
(:meth:`acp2.bridge.local.LocalEnd.send_frames_through`): the stream's hot path -- a
chunk that starts as the last one that passed -- is one call and a few byte compares.

Only for an agent in this process: its frames come from acp2's own encoder (the
emitter's byte layout, checked below), so recognising them by their bytes is safe.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, Final, Protocol

import msgspec

import acp2.schema as v2
from acp2.compat.v1.project import V1Projector
from acp2.errors import ConnectionClosed
from acp2.rpc.connection import Connection
from acp2.rpc.messages import SESSION_UPDATE_PREFIX
from acp2.schema.codec import decode

__all__ = ["Splice"]

log = logging.getLogger("acp2.bridge")

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
_END_LEN: Final = len(_END)
_BACKSLASH: Final = 92
#: The prefix before any frame passed: no frame starts with it (frames start with ``{``).
_NEVER: Final = b"\x00"
#: The update kinds decoded from their own bytes (``"sessionUpdate":"`` ends before the
#: tag) and handed to the projection directly: the turn's bookkeeping frames.
_DIRECT: Final = (
    (b'state_update"', v2.StateUpdate),
    (b'user_message"', v2.UserMessage),
)
#: What :meth:`Splice._parse` found: queue the frame as it is, it was projected, or
#: the full path must take it.
_PASS: Final = "pass"
_TAKEN: Final = "taken"
_REFUSED: Final = "refused"
#: Where the update object starts, counted back from the end of ``_UPDATE``.
_UPDATE_BACK: Final = len(b'{"sessionUpdate":"')


class _Session(Protocol):
    @property
    def projector(self) -> V1Projector: ...
    @property
    def backlog(self) -> list[Any] | None: ...


#: The projection of one decoded update of an open session: ``project(session, update)``.
Project = Callable[[Any, Any], None]


class Splice:
    """Passes plain text chunks of the sessions in ``sessions`` (the JSON of a session
    id, its bytes on the wire -> its bridge state) to ``v1`` as they are (see the
    module). Call it with each frame; True: it took the frame.

    With ``project``, the turn's state updates and user messages of those sessions are
    decoded here and given to it (taken too). ``fallback`` is where :meth:`send` hands
    the frames it does not take."""

    __slots__ = (
        "_fallback",
        "_prefix",
        "_prefix_id",
        "_prefix_session",
        "_project",
        "_put",
        "_sessions",
        "_start",
        "_v1",
    )

    def __init__(
        self,
        v1: Connection,
        sessions: Mapping[bytes, _Session],
        *,
        project: Project | None = None,
        fallback: Callable[[bytes], None] | None = None,
    ) -> None:
        self._v1 = v1
        self._put = v1.send_frames_nowait
        self._sessions = sessions
        self._project = project
        self._fallback = fallback
        #: How the last frame that passed starts, up to its text, and its session.
        self._prefix = _NEVER
        self._start = 0
        self._prefix_id = b""
        self._prefix_session: _Session | None = None

    def __call__(self, frame: bytes) -> bool:
        """Queue ``frame`` on the v1 connection if it passes (or project it, see the
        class); whether it took it."""
        # A stream repeats one session, kind and message: its frames start as the last one
        # that passed, up to the text, and then only the text must end the frame.
        prefix = self._prefix
        if not (frame.startswith(prefix) and self._still_open()):
            verdict = self._parse(frame)
            if verdict is not _PASS:
                return verdict is _TAKEN
        elif not _text_ends_frame(frame, len(prefix)):
            return False
        # One frame of acp2's own encoder (no raw newline in it): queued without the
        # newline check send_frame_nowait makes, as the emitter's sink would take it.
        self._put(frame)
        return True

    def send(self, frame: bytes) -> None:
        """Take ``frame`` as :meth:`__call__` does, or hand it to ``fallback``: the
        agent's sink (the common case inlined: one call per streamed chunk)."""
        if frame.startswith(self._prefix):
            end = len(frame) - _END_LEN
            # The first quote after the text is the one that closes it, right before the
            # frame's end (no quote in the text, the text does not end in a backslash).
            if (
                frame.find(b'"', self._start) == end
                and frame[end - 1] != _BACKSLASH
                and frame.endswith(_END)
                and self._sessions.get(self._prefix_id) is (session := self._prefix_session)
                and session.backlog is None  # type: ignore[union-attr]
            ):
                self._put(frame)
                return
        if not self(frame):
            assert self._fallback is not None
            self._fallback(frame)

    def _still_open(self) -> bool:
        """Whether the session of the last frame that passed is still the open one."""
        session = self._sessions.get(self._prefix_id)
        return session is not None and session is self._prefix_session and session.backlog is None

    def _parse(self, frame: bytes) -> object:
        """:data:`_PASS` (a plain chunk: queue it), :data:`_TAKEN` (projected here) or
        :data:`_REFUSED` (for the full path)."""
        if not frame.startswith(_HEAD):
            return _REFUSED
        at = frame.find(_UPDATE, len(_HEAD))
        wire_id = frame[len(_HEAD) : at]
        session = self._sessions.get(wire_id) if at > 0 else None
        if session is None or session.backlog is not None:
            return _REFUSED
        at += len(_UPDATE)
        found = _kind(frame, at)
        if found is None:
            return _TAKEN if self._direct(frame, at, session) else _REFUSED
        tag, kind = found
        at += len(tag)
        text = frame.find(_TEXT, at)
        if text < 0 or not _text_ends_frame(frame, text + len(_TEXT)):
            return _REFUSED
        session.projector.note_spoken(kind, decode(frame[at - 1 : text + 1], str))
        self._prefix = frame[: text + len(_TEXT)]
        self._start = len(self._prefix)
        self._prefix_id, self._prefix_session = wire_id, session
        return _PASS

    def _direct(self, frame: bytes, at: int, session: _Session) -> bool:
        """Decode a bookkeeping update (:data:`_DIRECT`) from its own bytes and project
        it; False (for the full path) for any other kind, or when those bytes are not the
        update alone (``_meta`` after it, a field its type refuses)."""
        if self._project is None:
            return False
        for tag, kind in _DIRECT:
            if frame.startswith(tag, at):
                try:
                    update = decode(frame[at - _UPDATE_BACK : -2], kind)
                except msgspec.DecodeError:  # also a ValidationError: not the update alone
                    return False
                try:
                    self._project(session, update)
                except ConnectionClosed:
                    raise  # the emitter's concern: it drops the frame
                except Exception:  # as the link's hand-over does: the sender never sees it
                    log.exception("v1 bridge: projecting a %s failed", kind.__name__)
                return True
        return False


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
