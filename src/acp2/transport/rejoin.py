"""The last resort of a remote link: a NEW connection when the old one cannot be resumed.

A durable link rides out drops by itself (:mod:`acp2.transport.ws_client`,
:mod:`acp2.transport.http_client`). When the server refuses the resume (it restarted, the
node died, the window no longer holds what was missed) or a plain link breaks, the link's
stream ends with :class:`~acp2.transport.remote_base.ResumeRefused` or
:class:`~acp2.transport.remote_base.LinkLost`. :class:`RejoiningTransport` then, under the
same byte stream:

1. opens a new connection (paced by the backoff) and sends it the ``initialize`` the rpc
   layer sent first (under an id of its own, its answer swallowed);
2. answers every request still waiting on the old connection with an error -- except
   prompts, which carry an ``idempotencyKey`` and are kept;
3. calls :attr:`RejoiningTransport.on_rejoin` (the client runtime re-resumes its live
   sessions there, replay de-duplicated: :func:`acp2.client.remote.connect_url`), then
   resends the kept prompts with their own ids and keys, so the agent's ledger answers a
   prompt it already took with the same work instead of running it twice.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import anyio
import anyio.abc
import msgspec
from anyio.abc import TaskGroup

from acp2.errors import ConnectionClosed
from acp2.schema.extensions import SESSION_ATTACH
from acp2.schema.methods import INITIALIZE, SESSION_PROMPT, SESSION_RESUME
from acp2.transport.backoff import Backoff
from acp2.transport.base import Transport
from acp2.transport.remote_base import (
    LineSplitter,
    LinkLost,
    Peek,
    RemoteRefused,
    ResumeRefused,
    peek,
)

__all__ = ["RejoiningTransport", "rejoining"]

log = logging.getLogger("acp2.transport.rejoin")

#: What the re-resume sends (a session joined with ``_acp2/session/attach`` is attached
#: again): sent at once while everything else waits for it to finish.
_REJOINING: frozenset[str] = frozenset({SESSION_RESUME.name, SESSION_ATTACH.name})

Opener = Callable[[], AbstractAsyncContextManager[Transport]]


class _Idempotent(msgspec.Struct):
    idempotencyKey: Any = None


_idempotent = msgspec.json.Decoder(_Idempotent)


class RejoiningTransport:
    """A remote byte stream that survives the loss of its connection (module docstring).

    ``current`` is the link in use; ``rejoins`` counts the new connections made;
    ``on_rejoin`` (set by the owner) is awaited, in a task, after each one.
    """

    def __init__(self, opener: Opener, backoff: Backoff, *, enabled: bool = True) -> None:
        self._enabled = enabled
        self._opener = opener
        self._backoff = backoff
        #: Where the links are held and the re-resume runs (set by :func:`rejoining`).
        self.task_group: TaskGroup | None = None
        self._release: anyio.Event | None = None
        self._released: anyio.Event | None = None
        self.current: Transport | None = None
        self.rejoins = 0
        self.on_rejoin: Callable[[], Awaitable[None]] | None = None
        self._splitter = LineSplitter()
        self._initialize: bytes | None = None
        self._waiting: dict[Any, bytes | None] = {}  # request id -> prompt bytes (kept) or None
        self._ids = itertools.count(1)
        self._ours: set[str] = set()
        self._ready = anyio.Event()
        self._rejoined = anyio.Event()
        #: Set while no re-resume runs; during one, other messages are held until the
        #: sessions are back.
        self._resumed = anyio.Event()
        self._resumed.set()
        self._resend: list[bytes] = []
        self._held: list[bytes] = []
        self._closing = False
        #: Why no new connection could be made, once the client gave up (for its errors).
        self.gave_up: BaseException | None = None

    async def open(self) -> None:
        """Open the first connection (raises what the opener raises)."""
        self.current = await self._open_link()
        self._ready.set()

    async def _open_link(self) -> Transport:
        """Open a link in a task of its own (its context is entered and left there)."""
        assert self.task_group is not None
        release, released = anyio.Event(), anyio.Event()
        link: Transport = await self.task_group.start(self._hold, release, released)
        self._release, self._released = release, released
        return link

    async def _hold(
        self,
        release: anyio.Event,
        released: anyio.Event,
        *,
        task_status: anyio.abc.TaskStatus[Transport],
    ) -> None:
        try:
            async with self._opener() as link:
                task_status.started(link)
                await release.wait()
        finally:
            released.set()

    async def _close_link(self) -> None:
        release, released = self._release, self._released
        self._release = self._released = None
        if release is not None and released is not None:
            release.set()
            with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                await released.wait()

    # -- the Transport protocol -----------------------------------------------------------

    async def receive(self) -> bytes:
        """The next chunk from the current connection; a lost connection is replaced
        first when it can be, else ``b""``."""
        while True:
            link = self.current
            data = await link.receive() if link is not None else b""
            if data:
                kept = self._note_answers(data)
                if kept.strip():
                    return kept
                continue  # only the answer to our own initialize
            if self._closing or not self._enabled or link is None or not _rejoinable(link):
                return b""
            try:
                await self._rejoin(link)
            except (ConnectionClosed, RemoteRefused) as exc:
                log.warning("could not rejoin the remote agent: %s", exc)
                self.gave_up = exc
                return b""
            failed = self._fail_waiting()
            if failed:
                return failed

    async def send(self, data: bytes) -> None:
        """Send on the current connection (waiting while a new one is being made)."""
        for message in self._splitter.feed(data):
            fields = self._note_request(message)
            await self._ready.wait()
            if fields.method not in _REJOINING and not self._resumed.is_set():
                # The rpc layer has one writer: waiting here would hold up the re-resume's
                # own session/resume behind this message. Held and sent once it is done.
                self._held.append(message)
                continue
            link = self.current
            if link is None:
                raise ConnectionClosed("the remote connection is closed")
            try:
                await link.send(message + b"\n")
            except ConnectionClosed:
                if not self._enabled or self._closing:
                    raise
                # The reader rejoins once it sees the end; a prompt is resent then, any
                # other message is lost with the link (as on a link that broke in flight).
                log.info("a message was lost with the remote link")

    async def aclose(self) -> None:
        """Close the current connection; idempotent."""
        if self._closing:
            return
        self._closing = True
        self._ready.set()
        await self._close_link()

    async def wait_rejoins(self, count: int) -> None:
        """Wait until :attr:`rejoins` reaches ``count`` (diagnostics and tests; the
        caller bounds the wait)."""
        while self.rejoins < count:
            await self._rejoined.wait()

    def __getattr__(self, name: str) -> Any:
        # The link's state (retention, reconnects, connection_id, ...) reads through.
        return getattr(self.current, name)

    # -- bookkeeping of requests ------------------------------------------------------------

    def _note_request(self, message: bytes) -> Peek:
        fields = peek(message)
        if fields.method == INITIALIZE.name and self._initialize is None:
            self._initialize = message
        if fields.is_request and _key(fields.id) is not None:
            kept = message if fields.method == SESSION_PROMPT.name and _keyed(fields) else None
            self._waiting[_key(fields.id)] = kept
        return fields

    def _note_answers(self, data: bytes) -> bytes:
        if not self._waiting and not self._ours:
            return data
        lines = data.split(b"\n")
        kept: list[bytes] = []
        for line in lines:
            fields = peek(line) if line.strip() else None
            if fields is not None and fields.is_response:
                if isinstance(fields.id, str) and fields.id in self._ours:
                    self._ours.discard(fields.id)
                    continue  # the answer to our own initialize of a new connection
                self._waiting.pop(_key(fields.id), None)
            kept.append(line)
        return b"\n".join(kept)

    def _fail_waiting(self) -> bytes:
        """Error answers for the requests the old connection took with it (not prompts)."""
        lost = [key for key, kept in self._waiting.items() if kept is None]
        answers = []
        for key in lost:
            del self._waiting[key]
            error = {"code": -32603, "message": "the remote connection was lost"}
            reply = {"jsonrpc": "2.0", "id": key[1], "error": error}
            answers.append(msgspec.json.encode(reply) + b"\n")
        return b"".join(answers)

    # -- rejoining ---------------------------------------------------------------------------

    async def _rejoin(self, lost: Transport) -> None:
        """Replace ``lost`` by a new, initialized connection, or raise."""
        log.info("the remote link cannot be resumed (%s): opening a new connection", _why(lost))
        self._ready = anyio.Event()
        self._resumed = anyio.Event()
        self.current = None
        # Only the prompts the lost link took with it are sent again.
        self._resend = [m for m in self._waiting.values() if m is not None]
        await self._close_link()
        for wait in self._backoff.delays():
            await anyio.sleep(wait)
            try:
                link = await self._open_link()
            except RemoteRefused as exc:
                if exc.status in (401, 403):
                    raise
                continue
            await self._initialize_on(link)
            self.current = link
            self.rejoins += 1
            self._ready.set()
            self._rejoined.set()
            self._rejoined = anyio.Event()
            if self.task_group is not None:
                self.task_group.start_soon(self._after_rejoin)
            return
        raise ConnectionClosed("no new connection could be made to the remote agent")

    async def _initialize_on(self, link: Transport) -> None:
        if self._initialize is None:
            raise ConnectionClosed("the lost connection was never initialized")
        ours = f"acp2-rejoin-{next(self._ids)}"
        self._ours.add(ours)
        request = msgspec.json.decode(self._initialize)
        request["id"] = ours
        await link.send(msgspec.json.encode(request) + b"\n")

    async def _after_rejoin(self) -> None:
        try:
            if self.on_rejoin is not None:
                await self.on_rejoin()
        except Exception:
            log.exception("re-resuming the sessions on the new connection failed")
        resend, self._resend = self._resend, []
        waiting = set(self._waiting.values())
        try:
            await self._flush([m for m in resend if m in waiting])
        except ConnectionClosed:
            log.info("the new remote link broke while the held messages were sent")
        finally:
            self._resumed.set()  # no await since the last look at _held: nothing is left

    async def _flush(self, queue: list[bytes]) -> None:
        """Send ``queue``, then what was held meanwhile, until nothing is held."""
        link = self.current
        while True:
            queue += self._held
            self._held = []
            if not queue or link is None:
                return
            for message in queue:
                await link.send(message + b"\n")
            queue = []


def _rejoinable(link: Transport) -> bool:
    return isinstance(getattr(link, "ended_by", None), ResumeRefused | LinkLost)


def _why(link: Transport) -> str:
    return str(getattr(link, "ended_by", "") or "the link ended")


def _key(value: Any) -> Any:
    return (type(value).__name__, value) if isinstance(value, int | str) else None


def _keyed(fields: Any) -> bool:
    try:
        return _idempotent.decode(fields.params).idempotencyKey is not None
    except (msgspec.DecodeError, msgspec.ValidationError):
        return False


@asynccontextmanager
async def rejoining(
    opener: Opener, backoff: Backoff | None = None, *, enabled: bool = True
) -> AsyncIterator[RejoiningTransport]:
    """Open a connection with ``opener`` (raising what it raises) and yield it wrapped in
    a :class:`RejoiningTransport` (which never rejoins unless ``enabled``); close it on
    exit."""
    transport = RejoiningTransport(opener, backoff or Backoff(), enabled=enabled)
    async with anyio.create_task_group() as tg:
        transport.task_group = tg
        await transport.open()
        try:
            yield transport
        finally:
            await transport.aclose()
            tg.cancel_scope.cancel()
