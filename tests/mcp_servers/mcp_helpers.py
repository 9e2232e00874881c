"""Helpers for the MCP tests: a model that calls given tools, real MCP servers, a session.

:class:`ToolModel` is a :class:`~acp2.coder.providers.base.ChatModel` that asks for the
tool calls it is given, one reply per step, then ends the turn with ``done``; it records
every request, so a test reads what the model was told. :func:`stdio_server` and
:func:`http_server` describe (and for HTTP, start) the SDK-built server in
``py_mcp_server.py``; :func:`mcp_session` serves the coding agent in process and opens a
session with the given servers through the real client runtime.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
from msgspec import UNSET

from acp2.agent.mcp import McpOptions
from acp2.client import ClientSession, allow_all
from acp2.coder import CoderSettings, build_coder_agent
from acp2.coder.messages import (
    FINISH_TOOL_CALLS,
    ModelReply,
    ModelRequest,
    ToolRequest,
)
from acp2.coder.providers.base import StreamSink
from acp2.coder.tools.confine import CommandPolicy
from acp2.schema import EnvVariable, HttpHeader, McpServerHttp, McpServerSse, McpServerStdio
from helpers.inprocess import served
from helpers.timeouts import TIMEOUT

SERVER = Path(__file__).resolve().parent / "py_mcp_server.py"

Call = tuple[str, dict[str, Any]]


class ToolModel:
    """Asks for ``steps`` in order (each a list of (tool name, arguments)), then says done."""

    name = "tool-model"

    def __init__(self, *steps: Sequence[Call]) -> None:
        self.steps = list(steps)
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest, sink: StreamSink) -> ModelReply:
        """The next scripted step, or ``done`` once the script is over."""
        self.requests.append(request)
        if not self.steps:
            await sink.text("done")
            return ModelReply(text="done")
        number = len(self.requests)
        calls = tuple(
            ToolRequest(f"c{number}_{i}", name, json.dumps(args))
            for i, (name, args) in enumerate(self.steps.pop(0))
        )
        return ModelReply(tool_calls=calls, finish=FINISH_TOOL_CALLS)

    def tool_results(self, request: int = -1) -> list[str]:
        """The tool results the model read in request ``request``."""
        return [m.content for m in self.requests[request].messages if m.role == "tool"]

    def offered(self, request: int = 0) -> list[str]:
        """The names of the tools offered in request ``request``."""
        return [t.name for t in self.requests[request].tools]


class Marks:
    """A FIFO the test server writes its marks to, read without polling: ``await
    marks.next()`` returns the next line. The test holds a write end itself, so the FIFO
    never reports end-of-file between the server's writes."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "marks.fifo"
        os.mkfifo(self.path)
        self._read = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
        self._hold = os.open(self.path, os.O_WRONLY)
        self._buffer = b""

    async def next(self) -> str:
        """The next mark, waiting for it (bound the wait with ``anyio.fail_after``)."""
        while b"\n" not in self._buffer:
            await anyio.wait_readable(self._read)
            self._buffer += os.read(self._read, 4096)
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line.decode()

    def pending(self) -> bytes:
        """What was written and not read yet (nothing when the server wrote no mark)."""
        try:
            return self._buffer + os.read(self._read, 4096)
        except BlockingIOError:
            return self._buffer

    def close(self) -> None:
        """Close both ends."""
        os.close(self._read)
        os.close(self._hold)


def stdio_server(name: str = "py", marks: Marks | None = None, script: Path = SERVER) -> Any:
    """The test server over stdio, run by this interpreter."""
    env = [EnvVariable(name="MCP_TEST_MARKS", value=str(marks.path))] if marks else []
    return McpServerStdio(name=name, command=sys.executable, args=[str(script)], env=env)


@contextmanager
def http_server(name: str = "web") -> Iterator[McpServerHttp]:
    """Start the test server over Streamable HTTP on 127.0.0.1; stop it afterwards."""
    with _listening("http") as port:
        yield McpServerHttp(name=name, url=f"http://127.0.0.1:{port}/mcp")


@contextmanager
def sse_server(name: str = "events", headers: Sequence[HttpHeader] = ()) -> Iterator[McpServerSse]:
    """Start the test server over HTTP+SSE on 127.0.0.1; stop it afterwards."""
    with _listening("sse") as port:
        url = f"http://127.0.0.1:{port}/sse"
        yield McpServerSse(name=name, url=url, headers=list(headers) or UNSET)


@contextmanager
def _listening(mode: str) -> Iterator[int]:
    """The test server in ``mode`` (``http`` / ``sse``); yields its port."""
    process = subprocess.Popen(
        [sys.executable, str(SERVER), mode],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # the server prints its port before it serves
        assert line.startswith("PORT "), line
        yield int(line.split()[1])
    finally:
        process.kill()
        process.wait(TIMEOUT)


def coder(model: ToolModel, *, sandbox: bool | str = False, **limits: Any) -> Any:
    """The coding agent with ``model``; stdio servers sandboxed only when asked (True: the
    best sandbox here; or a ``--command-sandbox`` value such as ``"landlock"``)."""
    options = McpOptions(**{"connect_timeout": TIMEOUT, **limits})
    kind = "auto" if sandbox is True else sandbox or "none"
    policy = CommandPolicy(sandbox=kind)
    settings = CoderSettings(mcp=options, mcp_sandbox=bool(sandbox), commands=policy)
    return build_coder_agent(model, settings=settings, store=":memory:")


@asynccontextmanager
async def mcp_session(
    agent: Any, cwd: str | os.PathLike[str], servers: Sequence[Any], permissions: Any = allow_all
) -> AsyncIterator[ClientSession]:
    """Serve ``agent`` in process; yield a new session at ``cwd`` given ``servers``."""
    async with served(agent, cwd=str(cwd), permissions=permissions) as client:
        yield await client.new_session(str(cwd), mcp_servers=list(servers))
