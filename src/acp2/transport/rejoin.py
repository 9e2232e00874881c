"""The last resort of a remote link: a NEW connection when the old one cannot be resumed.

A durable link rides out drops by itself (:mod:`acp2.transport.ws_client`,
:mod:`acp2.transport.http_client`). When the server refuses the resume (it restarted, the
node died, the window no longer holds what was missed) or a plain link breaks, the link's
stream ends with :class:`~acp2.transport.remote_base.ResumeRefused` or
:class:`~acp2.transport.remote_base.LinkLost`. :class:`RejoiningTransport` then, under the
same byte stream:

1. opens a new connection (paced by the backoff) and sends it :meth:`Book.hello`;
2. hands the rpc layer :meth:`Book.fail_lost` (the answers to what the old connection
   took with it and is not sent again);
3. calls :attr:`RejoiningTransport.on_rejoin` (the client runtime re-resumes its live
   sessions there: :func:`acp2.client.remote.connect_url`), holding every message the
   book does not let through meanwhile, then sends :meth:`Book.to_resend` (those
   :meth:`Book.still_waiting`) and what was held.

The transport carries frames only: what a message means -- which requests are sent
again, which are failed, what the ``initialize`` of a new connection is -- is the
:class:`Book`'s, the client runtime's :class:`acp2.client.rejoin_book.RejoinBook`.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Protocol

import anyio
import anyio.abc
from anyio.abc import TaskGroup

from acp2.errors import ConnectionClosed
from acp2.transport.backoff import Backoff
from acp2.transport.base import Transport
from acp2.transport.remote_base import (
    LinkLost,
    RemoteRefused,
    ResumeRefused,
    outgoing_framer,
    whole_messages,
)

__all__ = ["Book", "RejoiningTransport", "rejoining"]

log = logging.getLogger("acp2.transport.rejoin")

Opener = Callable[[], AbstractAsyncContextManager[Transport]]


class Book(Protocol):
    """What a :class:`RejoiningTransport` asks about the messages it carries (the client
    runtime's :class:`acp2.client.rejoin_book.RejoinBook` answers)."""

    def sent(self, message: bytes) -> bool:
        """Note ``message`` (one, without newline) going out; True when it may go out
        while the sessions are being resumed."""
        ...

    def received(self, data: bytes) -> bytes:
        """Note what ``data`` answers; return what the rpc layer should get of it."""
        ...

    def hello(self) -> bytes:
        """The first bytes of a new connection (raises ``ConnectionClosed`` when there
        are none)."""
        ...

    def to_resend(self) -> list[bytes]:
        """The messages a new connection sends again once the sessions are resumed."""
        ...

    def still_waiting(self, messages: list[bytes]) -> list[bytes]:
        """Those of ``messages`` still worth sending."""
        ...

    def fail_lost(self) -> bytes:
        """The answers the rpc layer gets for what was lost with the old connection."""
        ...


class RejoiningTransport:
    """A remote byte stream that survives the loss of its connection (module docstring).

    ``current`` is the link in use; ``rejoins`` counts the new connections made;
    ``on_rejoin`` (set by the owner) is awaited, in a task, after each one. ``book``
    decides what the messages in flight become (:class:`Book`).
    """

    def __init__(
        self, opener: Opener, backoff: Backoff, book: Book, *, enabled: bool = True
    ) -> None:
        self._book = book
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
        self._framer = outgoing_framer()
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
                kept = self._book.received(data)
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
            failed = self._book.fail_lost()
            if failed:
                return failed

    async def send(self, data: bytes) -> None:
        """Send on the current connection (waiting while a new one is being made)."""
        for message in whole_messages(self._framer, data):
            passes = self._book.sent(message)
            await self._ready.wait()
            if not passes and not self._resumed.is_set():
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

    # -- rejoining ---------------------------------------------------------------------------

    async def _rejoin(self, lost: Transport) -> None:
        """Replace ``lost`` by a new, initialized connection, or raise."""
        log.info("the remote link cannot be resumed (%s): opening a new connection", _why(lost))
        self._ready = anyio.Event()
        self._resumed = anyio.Event()
        self.current = None
        # Only the prompts the lost link took with it are sent again.
        self._resend = self._book.to_resend()
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
        await link.send(self._book.hello())

    async def _after_rejoin(self) -> None:
        try:
            if self.on_rejoin is not None:
                await self.on_rejoin()
        except Exception:
            log.exception("re-resuming the sessions on the new connection failed")
        resend, self._resend = self._resend, []
        try:
            await self._flush(self._book.still_waiting(resend))
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


@asynccontextmanager
async def rejoining(
    opener: Opener, book: Book, backoff: Backoff | None = None, *, enabled: bool = True
) -> AsyncIterator[RejoiningTransport]:
    """Open a connection with ``opener`` (raising what it raises) and yield it wrapped in
    a :class:`RejoiningTransport` keeping ``book`` (which never rejoins unless
    ``enabled``); close it on exit."""
    transport = RejoiningTransport(opener, backoff or Backoff(), book, enabled=enabled)
    async with anyio.create_task_group() as tg:
        transport.task_group = tg
        await transport.open()
        try:
            yield transport
        finally:
            await transport.aclose()
            tg.cancel_scope.cancel()
