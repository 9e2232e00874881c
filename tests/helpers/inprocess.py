"""The one in-process harness: an agent served in this process, the client runtime on it.

:func:`served` runs an agent (anything with ``async serve(transport, ...)``, e.g. an
:class:`acp2.agent.Agent`) on one end of :func:`acp2.transport.memory.memory_pair` and
yields an initialized :class:`acp2.client.ClientConnection` on the other. ``over="v1"``
puts both v1 bridges between them: the agent is spoken to in v1 (its front bridge) and
the client reaches it through the back bridge. :func:`serving` is the same for several
clients of one agent (attach, principals), and gives raw transports to the agent for
tests that speak the wire themselves. :func:`v1_bridged` joins the client to any
transport whose other end speaks v1 (e.g. an agent subprocess). :func:`sole_exception`
unwraps the one-exception groups task groups raise, so tests can ``pytest.raises`` the
exception itself.

Tests outside ``tests/helpers`` do not serve an agent and connect a client themselves:
``tests/test_test_harness.py`` fails on a new copy of this harness.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from typing import Any

import anyio
import msgspec

import acp2.compat.v1.schema as v1
from acp2.bridge.back import serve_back_transports
from acp2.client import ClientConnection, connect_transport
from acp2.client.remote import connect_url
from acp2.serve import ServeConfig, create_app
from acp2.transport.base import Transport
from acp2.transport.memory import memory_pair
from helpers.asgi import serve
from helpers.timeouts import TIMEOUT

__all__ = [
    "OVER",
    "REMOTE_PRINCIPALS",
    "TOKEN",
    "Serving",
    "served",
    "serving",
    "sole_exception",
    "v1_bridged",
]

#: The ways :func:`served` joins the client to the agent: a memory pair, both v1
#: bridges, or acp2's serve app under uvicorn on 127.0.0.1 (token required) reached by
#: acp2's remote client over a WebSocket or Streamable HTTP.
OVER = ("memory", "v1", "websocket", "http")
_SCHEMES = {"websocket": "ws", "http": "http"}
#: The bearer token the served app requires over ``websocket`` / ``http``.
TOKEN = "harness-token"
#: The principals a remote client may be (``connect(principal=NAME)``), each its token.
REMOTE_PRINCIPALS = ("alice", "bob", "carol", "mallory")

#: What a v1 client (the back bridge's side) sends first; it claims no client features.
V1_INITIALIZE = (
    b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,'
    b'"clientInfo":{"name":"acp2-tests","version":"0"},"clientCapabilities":{}}}\n'
)

Wrap = Callable[[Transport], Any]


class Serving:
    """Clients of one agent served in process: :meth:`connect` adds one."""

    def __init__(self, agent: Any, stack: AsyncExitStack, tg: Any) -> None:
        self.agent = agent
        self._stack = stack
        self._tg = tg
        self._url: str | None = None
        #: Set once per connection when the agent's ``serve`` returned.
        self.ended: list[anyio.Event] = []

    def open(self, *, principal: object = None, wrap: Wrap | None = None) -> Transport:
        """A new connection to the agent: its client end, a raw transport (closed when
        the serving ends) for tests that speak the wire themselves.

        ``principal`` is who the agent is told the client is (only passed when given);
        ``wrap`` wraps the agent's end of the pair (to record or validate its bytes).
        """
        ours, theirs = memory_pair()
        ended = anyio.Event()
        self.ended.append(ended)
        self._tg.start_soon(self._serve, wrap(theirs) if wrap else theirs, principal, ended)
        self._stack.push_async_callback(ours.aclose)
        return ours

    async def connect(
        self,
        *,
        over: str = "memory",
        principal: object = None,
        wrap: Wrap | None = None,
        **connect_kwargs: Any,
    ) -> ClientConnection:
        """A new initialized client of the agent (``principal``, ``wrap``: as in
        :meth:`open`), joined ``over`` memory or the v1 bridges and closed when the
        serving ends; ``connect_kwargs`` go to :func:`acp2.client.connect_transport`."""
        assert over in OVER, over
        if over in _SCHEMES:
            assert wrap is None, "the agent's end of a remote client is the server's"
            return await self._connect_remote(over, principal, connect_kwargs)
        ours = self.open(principal=principal, wrap=wrap)
        if over == "v1":
            joined = v1_bridged(ours, **connect_kwargs)
        else:
            joined = connect_transport(ours, **connect_kwargs)
        client: ClientConnection = await self._stack.enter_async_context(joined)
        return client

    async def _connect_remote(
        self, over: str, principal: object, connect_kwargs: dict[str, Any]
    ) -> ClientConnection:
        """A remote client whose token names ``principal`` (None: the harness's own)."""
        assert principal is None or principal in REMOTE_PRINCIPALS, principal
        if self._url is None:  # one server per serving, started by its first remote client
            tokens = {TOKEN: "harness", **{f"{p}-token": p for p in REMOTE_PRINCIPALS}}
            app = create_app(self.agent, config=ServeConfig(tokens=tokens))
            self._url = (await self._stack.enter_async_context(serve(app))).url
        url = _SCHEMES[over] + self._url.removeprefix("http")
        token = TOKEN if principal is None else f"{principal}-token"
        joined = connect_url(url, token=token, transport=over, **connect_kwargs)  # type: ignore[arg-type]
        client: ClientConnection = await self._stack.enter_async_context(joined)
        return client

    async def _serve(self, transport: Any, principal: object, ended: anyio.Event) -> None:
        try:
            if principal is None:
                await self.agent.serve(transport)
            else:
                await self.agent.serve(transport, principal=principal)
        finally:
            ended.set()


@asynccontextmanager
async def serving(agent: Any, *, wait: bool = False) -> AsyncIterator[Serving]:
    """Serve ``agent`` in process to the clients the test connects via the yielded
    :class:`Serving`. On exit every client is closed; with ``wait`` each of the agent's
    ``serve`` calls must then return on its own (bounded by :data:`TIMEOUT`), otherwise
    they are cancelled. A single exception from either side is raised as itself."""
    with sole_exception():
        async with anyio.create_task_group() as tg:
            async with AsyncExitStack() as stack:
                found = Serving(agent, stack, tg)
                yield found
            if wait:
                with anyio.fail_after(TIMEOUT):
                    for ended in found.ended:
                        await ended.wait()
            tg.cancel_scope.cancel()


@asynccontextmanager
async def served(
    agent: Any, *, over: str = "memory", wait: bool = False, **connect_kwargs: Any
) -> AsyncIterator[ClientConnection]:
    """Serve ``agent`` in process; yield one client, connected ``over`` memory or the v1
    bridges with ``connect_kwargs`` (``cwd``, ``permissions``, ``principal``, ``wrap``,
    ...). Leaving closes the link; ``wait`` as in :func:`serving`."""
    async with serving(agent, wait=wait) as agents:
        yield await agents.connect(over=over, **connect_kwargs)


async def _v1_hello(agent: Transport) -> v1.InitializeResponse:
    """Open ``agent`` the way a v1 client does; its v1 ``initialize`` answer."""
    await agent.send(V1_INITIALIZE)
    line = b""
    with anyio.fail_after(TIMEOUT):
        while not line.endswith(b"\n"):
            line += await agent.receive()
    # An agent sends nothing unasked, so the answer is all there is to read.
    answer = json.loads(line)
    assert answer["result"]["protocolVersion"] == 1, answer
    return msgspec.convert(answer["result"], v1.InitializeResponse)


@asynccontextmanager
async def v1_bridged(agent: Transport, **connect_kwargs: Any) -> AsyncIterator[ClientConnection]:
    """acp2's client through the back bridge to ``agent``, a transport whose other end
    speaks v1 (acp2's own agent answers a v1 ``initialize`` through its front bridge)."""
    result = await _v1_hello(agent)
    ours, bridge_end = memory_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(serve_back_transports, bridge_end, agent, result)
        async with connect_transport(ours, **connect_kwargs) as client:
            yield client
        tg.cancel_scope.cancel()


@contextmanager
def sole_exception() -> Iterator[None]:
    """Re-raise an exception group holding (at any depth) one exception as that exception."""
    try:
        yield
    except BaseExceptionGroup as group:
        sole: BaseException = group
        while isinstance(sole, BaseExceptionGroup) and len(sole.exceptions) == 1:
            sole = sole.exceptions[0]
        if sole is group:
            raise
        raise sole from None
