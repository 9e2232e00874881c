"""One MCP server of a session: connected through the official SDK, kept, called, stopped.

:meth:`McpServerClient.keep` runs in a task of the session's connection for as long as the
server is in use: it opens the transport (stdio process, or Streamable HTTP), initializes
the MCP session, lists the tools, then waits for :meth:`~McpServerClient.stop`. Any failure
(cannot start, no answer in time, garbage, death) ends in :attr:`~McpServerClient.error`,
never in an exception that reaches the session.
"""

from __future__ import annotations

import contextlib
import math
import sys
from collections.abc import AsyncIterator, Mapping
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from acp2 import sanitize
from acp2.agent.mcp.options import McpOptions, StdioLaunch
from acp2.agent.mcp.stderr import StderrTail
from acp2.errors import McpServerError
from acp2.schema import McpServerAcp, McpServerHttp, McpServerSse, McpServerStdio

if TYPE_CHECKING:
    from mcp import ClientSession
    from mcp.types import CallToolResult, Tool

    from acp2.agent.mcp.over_acp import AcpMcpLink

__all__ = ["McpServerClient", "ServerConfig"]

#: The configurations a :class:`McpServerClient` connects.
ServerConfig = McpServerStdio | McpServerHttp | McpServerSse | McpServerAcp

#: The ``transport`` name of each configuration type (its wire ``type``).
_TRANSPORTS: dict[type, str] = {
    McpServerStdio: "stdio",
    McpServerHttp: "http",
    McpServerSse: "sse",
    McpServerAcp: "acp",
}

#: Seconds a failed stdio server's stderr gets to reach its end before the failure is told.
_LAST_WORDS = 1.0


class McpServerClient:
    """A connection to one MCP server. Read ``name``, ``transport`` (``stdio`` / ``http``
    / ``sse`` / ``acp``),
    ``tools`` (the SDK's ``Tool`` values, once connected), ``error`` (None while usable,
    else one sanitized line saying why not) and ``session`` (the SDK's ``ClientSession``,
    for anything beyond tools; None unless connected)."""

    def __init__(
        self,
        config: ServerConfig,
        roots: list[str],
        options: McpOptions,
        acp: AcpMcpLink | None = None,
    ) -> None:
        self.config = config
        self.name = config.name
        self.transport = _TRANSPORTS[type(config)]
        self._acp = acp
        self.tools: list[Tool] = []
        self.error: str | None = None
        self.session: ClientSession | None = None
        self._roots = roots
        self._options = options
        self._ready = anyio.Event()
        self._stopped = anyio.Event()
        self._stderr: StderrTail | None = None

    async def wait_ready(self) -> None:
        """Return once the server is connected or has failed (``error`` set)."""
        await self._ready.wait()

    def fail(self, reason: str) -> None:
        """Mark the server unusable without starting it (``error`` = ``reason``)."""
        self.error = reason
        self._ready.set()

    def stop(self) -> None:
        """Stop the server (idempotent): :meth:`keep` closes the MCP session and transport."""
        self._stopped.set()

    async def call_tool(self, tool: str, arguments: Mapping[str, Any]) -> CallToolResult:
        """Call ``tool``; return the SDK's result (``is_error`` for a tool's own failure).

        Raises :class:`~acp2.errors.McpServerError` when the server is unusable, errs,
        dies or takes longer than ``call_timeout`` (then the request is cancelled with
        MCP's ``notifications/cancelled``). Cancelling the caller cancels it the same way.
        """
        session = self.session
        if session is None or self.error is not None:
            raise McpServerError(f"MCP server {self.name!r} is unavailable: {self.error}")
        try:
            return await session.call_tool(
                tool, dict(arguments), read_timeout_seconds=self._options.call_timeout
            )
        except Exception as exc:
            raise McpServerError(await self._call_failure(exc)) from None

    async def _call_failure(self, exc: Exception) -> str:
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED

        if isinstance(exc, MCPError) and exc.code != CONNECTION_CLOSED:
            return f"MCP server {self.name!r}: {sanitize.line(str(exc))[:500]}"
        await self._last_words()
        self.error = self._why("stopped answering", exc)
        return f"MCP server {self.name!r} failed: {self.error}"

    async def _last_words(self) -> None:
        """Give a stdio server's stderr a moment to reach its end, so the failure line
        quotes what it (or the line-limiting relay) said last."""
        if self._stderr is not None:
            wait = partial(self._stderr.finished.wait, _LAST_WORDS)
            await anyio.to_thread.run_sync(wait, abandon_on_cancel=True)

    async def keep(self) -> None:
        """Connect, then hold the connection until :meth:`stop` or cancellation."""
        scope = anyio.CancelScope(deadline=anyio.current_time() + self._options.connect_timeout)
        try:
            with scope:
                async with self._connected() as session:
                    scope.deadline = math.inf
                    self.session = session
                    self._ready.set()
                    await self._stopped.wait()
            if scope.cancelled_caught and not self._ready.is_set():
                self.error = f"no answer within {self._options.connect_timeout:g}s" + self._tail()
        except Exception as exc:
            await self._last_words()
            self.error = self.error or self._why("could not be started", exc)
        finally:
            self.session = None
            if self.error is None and not self._stopped.is_set():
                self.error = "the connection ended"
            self._ready.set()

    @contextlib.asynccontextmanager
    async def _connected(self) -> AsyncIterator[ClientSession]:
        from mcp import ClientSession

        async with contextlib.AsyncExitStack() as stack:
            read, write = await stack.enter_async_context(self._open_transport())
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            self.tools = await self._list_tools(session)
            yield session

    async def _list_tools(self, session: ClientSession) -> list[Tool]:
        """Every tool, page by page, up to ``max_tools`` (a server cannot page forever)."""
        from mcp.types import PaginatedRequestParams

        tools: list[Tool] = []
        cursor: str | None = None
        while len(tools) < self._options.max_tools:
            params = PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await session.list_tools(params=params)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor or not page.tools:
                break
        return tools[: self._options.max_tools]

    def _open_transport(self) -> contextlib.AbstractAsyncContextManager[Any]:
        config = self.config
        if isinstance(config, McpServerStdio):
            return self._stdio()
        if isinstance(config, McpServerSse):
            return _sse(config)
        if isinstance(config, McpServerAcp):
            if self._acp is None:  # a link that cannot carry it (the agent did not offer it)
                raise McpServerError("this connection carries no MCP over ACP")
            return self._acp.open(config.server_id)
        return _http(config)

    @contextlib.asynccontextmanager
    async def _stdio(self) -> AsyncIterator[Any]:
        from mcp.client.stdio import StdioServerParameters, stdio_client

        launch = self._launch()
        self._stderr = tail = StderrTail(self._options.stderr_tail)
        params = StdioServerParameters(
            command=launch.command, args=list(launch.args), env=launch.env, cwd=launch.cwd
        )
        try:
            async with stdio_client(params, errlog=tail.writer) as streams:
                tail.spawned()
                yield streams
        finally:
            tail.spawned()

    def _launch(self) -> StdioLaunch:
        config = self.config
        assert isinstance(config, McpServerStdio)
        env = {item.name: item.value for item in config.env or []}
        cwd = self._roots[0] if self._roots else "/"
        launch = StdioLaunch(config.command, tuple(config.args or ()), env, cwd, tuple(self._roots))
        if self._options.launcher is not None:
            launch = self._options.launcher(launch)
        return _capped(launch, self._options.max_line)

    def _why(self, what: str, exc: BaseException) -> str:
        while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
            exc = exc.exceptions[0]  # the SDK's task groups wrap the cause
        detail = sanitize.line(str(exc) or type(exc).__name__)[:300]
        return f"{what} ({detail})" + self._tail()

    def _tail(self) -> str:
        text = self._stderr.text() if self._stderr is not None else ""
        return f"; its stderr ends: {text}" if text else ""


def _capped(launch: StdioLaunch, limit: int | None) -> StdioLaunch:
    """``launch`` behind the line-limiting relay (see :mod:`acp2.agent.mcp.linecap`)."""
    if limit is None:
        return launch
    relay = (str(Path(__file__).with_name("linecap.py")), str(limit), "--", launch.command)
    return replace(launch, command=sys.executable, args=("-I", *relay, *launch.args))


@contextlib.asynccontextmanager
async def _sse(config: McpServerSse) -> AsyncIterator[Any]:
    """v1's HTTP+SSE transport through the SDK's SSE client, the headers on every request."""
    from mcp.client.sse import sse_client

    headers = {item.name: item.value for item in config.headers or []}
    async with sse_client(config.url, headers=headers) as streams:
        yield streams


@contextlib.asynccontextmanager
async def _http(config: McpServerHttp) -> AsyncIterator[Any]:
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    headers = {item.name: item.value for item in config.headers or []}
    client = create_mcp_http_client(headers=headers)
    async with client, streamable_http_client(config.url, http_client=client) as streams:
        yield streams
