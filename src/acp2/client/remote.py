"""``connect_url``: the client runtime over a remote ACP endpoint (issue 15).

The same :class:`~acp2.client.ClientConnection` as :func:`~acp2.client.connect`, over
:func:`acp2.transport.remote.open_remote` (WebSocket preferred, Streamable HTTP when the
upgrade is refused). Drops of a durable link are ridden out underneath the byte stream;
see ``docs/remote.md``.
"""

from __future__ import annotations

import itertools
import logging
import os
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from functools import partial
from typing import Any

import anyio

from acp2.client.connection import ClientConnection
from acp2.client.elicitation import ElicitationPolicy
from acp2.client.launch import DEFAULT_INITIALIZE_TIMEOUT, _sole_exception, connect_transport
from acp2.client.permissions import PermissionPolicy, deny_all
from acp2.client.rejoin_book import RejoinBook
from acp2.client.session import ClientSession
from acp2.errors import ConnectionClosed, SessionInUse
from acp2.schema import ClientCapabilities, Implementation
from acp2.transport.backoff import Backoff
from acp2.transport.base import Transport
from acp2.transport.rejoin import rejoining
from acp2.transport.remote import Profile, open_remote
from acp2.transport.remote_base import RemoteRefused

__all__ = ["connect_agent", "connect_url"]

log = logging.getLogger("acp2.client")

#: How a rejoin paces its asking again for a session another agent process still holds
#: (``-32010``): the node that served it died and its lease has not lapsed yet. The
#: default lease lasts 30 s (``ACP2_LEASE_TTL``), so a dead owner's has lapsed well
#: within ``max_elapsed``; a live owner still holding it after that is reported.
IN_USE_PACING = Backoff(initial=0.1, factor=1.5, max_delay=1.0, max_attempts=None, max_elapsed=75.0)


@asynccontextmanager
async def connect_url(
    url: str,
    *,
    token: str | None = None,
    transport: Profile = "auto",
    durable: bool = True,
    reconnect: Backoff | None = None,
    rejoin: bool = True,
    headers: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    permissions: PermissionPolicy = deny_all,
    info: Implementation | None = None,
    capabilities: ClientCapabilities | None = None,
    initialize_timeout: float | None = DEFAULT_INITIALIZE_TIMEOUT,
    files: bool = False,
    terminals: bool = False,
    elicitation: ElicitationPolicy | None = None,
) -> AsyncIterator[ClientConnection]:
    """Connect to the remote ACP endpoint ``url`` and yield the initialized client.

    ``url`` is ``http(s)://host:port/acp`` or ``ws(s)://...`` (same endpoint either way).
    ``transport`` "auto" (default) upgrades to a WebSocket and falls back to Streamable
    HTTP when the server refuses the upgrade; "websocket" / "http" force one. ``token`` is
    sent as ``Authorization: Bearer``; ``headers`` are added to every request.

    With ``durable`` (default) the client asks for a durable link: when the server grants
    it, a dropped link is re-established (paced by ``reconnect``, a
    :class:`~acp2.transport.backoff.Backoff`) and resumed where it broke, with nothing
    lost or doubled, invisibly to the sessions. A server that does not grant it (e.g. the
    TypeScript SDK's) gives a plain link.

    With ``rejoin`` (default), a link that cannot be resumed -- the server refused (it
    restarted, or no longer holds what was missed) or a plain link broke -- is replaced
    by a new connection under the same client (:mod:`acp2.transport.rejoin`, with
    :mod:`acp2.client.rejoin_book` deciding what the requests in flight become): every live
    session is resumed in place with replay, de-duplicated against its state (no message
    doubled, the same :class:`~acp2.client.ClientSession` and :class:`~acp2.client.Work`
    objects; a session another agent process still holds -- ``-32010``, the node that
    served it died behind a load balancer and its lease has not lapsed -- is asked for
    again, paced, for up to 75 s), and a prompt still waiting for its answer is resent with its
    ``idempotencyKey``, so the agent never runs it twice, as is a read-only request (the
    method table's ``retry`` column: ``safe``); other requests that were waiting fail
    with ``-32603``. Without it such a drop closes the connection, as with
    a stdio agent that exits. ``client.remote`` is the transport (its ``current`` link,
    ``rejoins``). The other keyword arguments are those of
    :func:`~acp2.client.connect_transport`.

    Raises, before yielding: :class:`~acp2.transport.remote_base.RemoteRefused` (a
    ``ConnectionError``; ``status`` 401 for a missing or wrong token, 403 for a refused
    origin, 0 when the server cannot be reached), ``ValueError`` for a URL of another
    scheme, ``ImportError`` without the ``remote`` extra, and what
    :func:`~acp2.client.connect_transport` raises.
    """

    def opener() -> AbstractAsyncContextManager[Transport]:
        return open_remote(
            url,
            token=token,
            profile=transport,
            durable=durable,
            backoff=reconnect,
            headers=headers,
        )

    with _sole_exception():
        async with rejoining(opener, RejoinBook(), reconnect, enabled=rejoin) as link:
            opened = False
            try:
                async with connect_transport(
                    link,
                    cwd=cwd,
                    permissions=permissions,
                    info=info,
                    capabilities=capabilities,
                    initialize_timeout=initialize_timeout,
                    files=files,
                    terminals=terminals,
                    elicitation=elicitation,
                ) as client:
                    opened = True
                    client.remote = link
                    _word_errors_for(client, url, link)
                    link.on_rejoin = partial(_rejoin_sessions, client)
                    yield client
            except ConnectionClosed:
                refused = getattr(link, "ended_by", None)
                if not opened and isinstance(refused, RemoteRefused):
                    raise refused from None
                if not opened:  # no local process: its stderr cannot explain anything
                    raise _closed_before_initialize(url, refused) from None
                raise


def _closed_before_initialize(url: str, why: object) -> ConnectionClosed:
    """The server took the connection and closed it before the agent answered
    ``initialize`` (e.g. ``acp2 serve -- AGENT`` whose command cannot start)."""
    from acp2.sanitize import line

    reason = f": {line(str(why))}" if why else ""
    return ConnectionClosed(
        f"The remote agent at {line(url)} closed the connection before answering "
        f"initialize{reason} (the agent runs on the server, whose log says why: e.g. "
        "an agent command that cannot start there)."
    )


def _word_errors_for(client: ClientConnection, url: str, link: Any) -> None:
    """Errors about the closed connection name ``url`` and why the link ended, never a
    local agent's stderr (there is none)."""
    from acp2.sanitize import line

    client.word_errors(
        f"the remote agent at {line(url)}",
        lambda: link.gave_up or getattr(link.current, "ended_by", None),
    )


async def _rejoin_sessions(client: ClientConnection) -> None:
    """Resume every live session of ``client`` in place on its new connection; a session
    that cannot be resumed fails (its works raise), the others go on."""
    for session in list(client.sessions.values()):
        try:
            await _rejoin_when_free(client, session)
        except Exception as exc:
            log.warning("session %s could not be resumed: %s", session.id, exc)
            session.fail(ConnectionClosed(f"the session could not be resumed: {exc}"))


async def _rejoin_when_free(client: ClientConnection, session: ClientSession) -> None:
    """``client.rejoin(session)``, asked again (paced by :data:`IN_USE_PACING`) while the
    session is in use by another agent process; its last refusal raised when that lasts."""
    refused: SessionInUse | None = None
    for wait in itertools.chain((0.0,), IN_USE_PACING.delays()):
        await anyio.sleep(wait)
        try:
            await client.rejoin(session)
            return
        except SessionInUse as exc:
            log.info("session %s is still held by another agent process", session.id)
            refused = exc
    assert refused is not None
    raise refused


def connect_agent(
    command: Sequence[str],
    *,
    url: str | None = None,
    token: str | None = None,
    cwd: str | None = None,
    permissions: PermissionPolicy = deny_all,
    files: bool = False,
    terminals: bool = False,
    initialize_timeout: float | None = DEFAULT_INITIALIZE_TIMEOUT,
    capabilities: ClientCapabilities | None = None,
    elicitation: ElicitationPolicy | None = None,
    transport: Profile = "auto",
    reconnect: Backoff | None = None,
) -> AbstractAsyncContextManager[ClientConnection]:
    """The CLI's way in: :func:`connect_url` to ``url`` (with ``token``, ``transport``
    and ``reconnect``) when one is given, else :func:`~acp2.client.connect` to start
    ``command``. ``cwd`` is the session cwd (and the started agent's working directory);
    ``capabilities`` and ``elicitation`` are as for :func:`~acp2.client.connect`."""
    common: dict[str, Any] = {
        "cwd": cwd,
        "permissions": permissions,
        "files": files,
        "terminals": terminals,
        "initialize_timeout": initialize_timeout,
        "capabilities": capabilities,
        "elicitation": elicitation,
    }
    if url is not None:
        return connect_url(url, token=token, transport=transport, reconnect=reconnect, **common)
    from acp2.client.launch import connect

    return connect(list(command), **common)
