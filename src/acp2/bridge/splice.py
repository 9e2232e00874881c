"""The in-process front bridge's hot path: plain text chunks pass through as bytes.

An acp2 agent's ``agent_message_chunk`` / ``agent_thought_chunk`` of plain text (no
annotations, no ``_meta``) is, byte for byte, a valid v1 ``session/update`` with the
same meaning (:meth:`acp2.compat.v1.project.V1Projector.verbatim`). :class:`Splice`
wraps the bridge's end of the in-process pair (:func:`acp2.bridge.front.serve_v1_client`)
and reads the agent's output line by line before the bridge's v2 connection does: such a
line, for a session the bridge has open and not held back, is queued on the v1
connection as it is; every other line goes on to the v2 connection, in order. When the
v2 connection stops to await something, the rest waits until it reads on, so nothing
overtakes an earlier message; when the v1 client reads slower than the agent writes,
the splice waits for the v1 connection to drain (the backpressure of the slow path).

Only for an agent in this process: its frames come from acp2's own encoder (the
emitter's byte layout, checked below), so recognising them by their bytes is safe. A
partial line (a big frame written in pieces) goes to the v2 connection's framer, up
to its end, and so does a line over the message size limit, which the framer refuses.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, Protocol

import acp2.schema as v2
from acp2.compat.v1.project import V1Projector
from acp2.rpc.connection import Connection
from acp2.rpc.framing import DEFAULT_MAX_MESSAGE_SIZE
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
#: A longer line takes the slow path, whose framer applies the message size limit.
MAX_LINE: Final = DEFAULT_MAX_MESSAGE_SIZE
#: Keys that never occur inside an encoded JSON string (their quotes would be escaped):
#: a line holding one has an annotation or ``_meta`` v1 would be told differently.
_OTHER_KEYS: Final = (b'"_meta"', b'"annotations"')


class _Session(Protocol):
    @property
    def projector(self) -> V1Projector: ...
    @property
    def backlog(self) -> list[Any] | None: ...


class Splice:
    """``inner`` (a direct transport) with the hot path of the module docstring; every
    line takes the slow path until :meth:`attach` names the bridge's state."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.send_nowait: Callable[[bytes], int] = inner.send_nowait
        self._v1: Connection | None = None
        self._sessions: Mapping[bytes, _Session] = {}
        self._consume: Callable[[bytes], bool] = _refuse
        self._pending = b""
        self._partial = False
        self._congested = False
        #: How the last line that passed starts, up to its text, and its session.
        self._prefix = b""
        self._prefix_id = b""
        self._prefix_session: _Session | None = None

    def attach(self, v1: Connection, sessions: Mapping[bytes, _Session]) -> None:
        """Pass chunks to ``v1`` (the bridge's v1 connection) for the sessions in
        ``sessions``: the JSON of a session id (its bytes on the wire) -> its state."""
        self._v1 = v1
        self._sessions = sessions

    async def send(self, data: bytes) -> None:
        """Send on the inner transport."""
        await self.inner.send(data)

    async def receive(self) -> bytes:
        """Not used by a connection over this transport (it pumps); kept for the protocol."""
        data: bytes = await self.inner.receive()
        return data

    async def aclose(self) -> None:
        """Close the inner transport."""
        await self.inner.aclose()

    async def pump(self, consume: Callable[[bytes], bool]) -> bool:
        """Pump the inner transport through the splice (see the module)."""
        self._consume = consume
        while True:
            if self._pending:
                pending, self._pending = self._pending, b""
                if self._feed(pending):
                    continue
            elif not await self.inner.pump(self._feed):
                return False  # the end of the stream
            if not self._congested:
                return True  # the connection has an event to await first
            self._congested = False
            assert self._v1 is not None
            await self._v1.drain()

    def _feed(self, chunk: bytes) -> bool:
        """Handle ``chunk`` line by line; False stops the pump (the rest is pending)."""
        start = 0
        if self._partial:
            # The end of a line the framer holds the start of: it gets that much.
            nl = chunk.find(b"\n")
            if nl < 0:
                return self._consume(chunk)
            self._partial, start = False, nl + 1
            if not self._consume(chunk[:start]):
                self._pending = chunk[start:]
                return False
        last = chunk.rfind(b"\n") + 1
        while start < last:
            end = self._run(chunk, start, last)
            if end > start:
                v1 = self._v1
                assert v1 is not None
                v1.send_frames_nowait(chunk[start : end - 1])
                start = end
                if v1.congested:
                    self._pending, self._congested = chunk[start:], True
                    return False
                continue
            nl = chunk.find(b"\n", start) + 1
            if not self._consume(chunk[start:nl]):
                self._pending = chunk[nl:]
                return False
            start = nl
        if start < len(chunk):
            self._partial = True
            return self._consume(chunk[start:])
        return True

    def _run(self, chunk: bytes, start: int, last: int) -> int:
        """Where the run of passing lines from ``start`` ends (after its last newline):
        ``start`` when the line there does not pass."""
        v1 = self._v1
        if v1 is None or v1.closed:
            return start
        # A stream repeats one session, kind and message: its lines start as the last one
        # that passed, up to the text, and only the other keys need looking for.
        prefix = self._prefix
        if prefix and chunk.startswith(prefix, start) and self._still_open():
            end = start
        else:
            end = chunk.find(b"\n", start) + 1
            if not self._parse(chunk[start : end - 1]):
                return start
            prefix = self._prefix
        while end < last and chunk.startswith(prefix, end):
            nl = chunk.find(b"\n", end)
            if nl - end > MAX_LINE:
                break
            end = nl + 1
        for key in _OTHER_KEYS:
            at = chunk.find(key, start, end)
            if at >= 0:  # the run ends before the line holding it
                end = chunk.rfind(b"\n", start, at) + 1 if at > start else start
        return max(end, start)

    def _still_open(self) -> bool:
        """Whether the session of the last line that passed is still the open one."""
        session = self._sessions.get(self._prefix_id)
        return session is not None and session is self._prefix_session and session.backlog is None

    def _parse(self, line: bytes) -> bool:
        if len(line) > MAX_LINE or not line.startswith(_HEAD):
            return False
        at = line.find(_UPDATE, len(_HEAD))
        wire_id = line[len(_HEAD) : at]
        session = self._sessions.get(wire_id) if at > 0 else None
        if session is None or session.backlog is not None:
            return False
        at += len(_UPDATE)
        found = _kind(line, at)
        if found is None:
            return False
        tag, kind = found
        at += len(tag)
        text = line.find(_TEXT, at)
        if text < 0 or _OTHER_KEYS[0] in line or _OTHER_KEYS[1] in line:
            return False
        session.projector.note_spoken(kind, decode(line[at - 1 : text + 1], str))
        self._prefix = line[: text + len(_TEXT)]
        self._prefix_id, self._prefix_session = wire_id, session
        return True


def _kind(line: bytes, at: int) -> tuple[bytes, type] | None:
    for tag, kind in _KINDS:
        if line.startswith(tag, at):
            return tag, kind
    return None


def _refuse(chunk: bytes) -> bool:
    raise AssertionError("Splice fed before pump()")
