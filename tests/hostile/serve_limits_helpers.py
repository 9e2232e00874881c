"""A real ``acp2 serve`` on 127.0.0.1 with small limits, and raw clients for it.

:func:`served` starts the server with the flags given and yields a :class:`Served` (its
port and process); every client here speaks the wire itself (sockets, httpx, the
websockets sync client), so what is tested is what a hostile peer would see.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from helpers.serve_process import listening_port
from helpers.timeouts import PROCESS_TIMEOUT, TIMEOUT

__all__ = ["CWD", "Served", "call", "initialize", "served", "ws_connect"]

CWD = "/tmp/acp2-agent-tests"


def initialize(request_id: int = 0) -> dict[str, Any]:
    """An ``initialize`` request asking for v2."""
    info = {"name": "hostile-limits", "version": "1"}
    params = {"protocolVersion": 2, "info": info, "capabilities": {}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}


@dataclass
class Served:
    """A running ``acp2 serve``: its port, its process and its stderr so far."""

    port: int
    process: subprocess.Popen[str]
    lines: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        """The endpoint's URL."""
        return f"http://127.0.0.1:{self.port}/acp"

    @property
    def ws_url(self) -> str:
        """The endpoint's WebSocket URL."""
        return f"ws://127.0.0.1:{self.port}/acp"

    def post_initialize(self, client: httpx.Client) -> httpx.Response:
        """POST ``initialize`` without a connection id (opens a Streamable HTTP connection)."""
        headers = {"content-type": "application/json", "accept": "application/json"}
        return client.post(self.url, json=initialize(), headers=headers)

    def children(self) -> list[int]:
        """The pids of the server's child processes now (its spawned agents)."""
        pid = self.process.pid
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]


@contextlib.contextmanager
def served(
    tmp_path: Path, *flags: str, agent: tuple[str, ...] = ("--test-agent",)
) -> Iterator[Served]:
    """``acp2 serve`` with ``flags`` and ``agent`` on a free port of 127.0.0.1; stopped
    (and awaited) on exit."""
    pytest.importorskip("uvicorn", reason="acp2 serve needs the server extra")
    env = dict(os.environ, ACP2_DATA_DIR=str(tmp_path))
    env.pop("ACP2_TOKEN", None)
    # These attacks are about limits, not tokens: a tokenless server unless flags name one.
    tokenless = () if "--token" in flags else ("--no-token",)
    argv = [sys.executable, "-m", "acp2", "serve", "--port", "0", *tokenless, *flags, *agent]
    process = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, env=env)
    lines: list[str] = []
    try:
        yield Served(listening_port(process, lines), process, lines)
    finally:
        process.terminate()
        try:
            process.wait(PROCESS_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(PROCESS_TIMEOUT)


def ws_connect(url: str, *, rcvbuf: int | None = None, **options: Any) -> Any:
    """A websockets sync client connection to ``url`` (its socket's receive buffer set to
    ``rcvbuf`` bytes first when given, so a client that stops reading stops soon)."""
    from websockets.sync.client import connect

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.settimeout(TIMEOUT)
    host, port = url.removeprefix("ws://").split("/", 1)[0].split(":")
    sock.connect((host, int(port)))
    settings: dict[str, Any] = {"open_timeout": TIMEOUT, "max_size": None, "compression": None}
    # Entered here: the connection is open (and a context manager itself) on return.
    return connect(url, sock=sock, proxy=None, **{**settings, **options}).__enter__()


def call(ws: Any, request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """Send a request on ``ws`` and return its response (notifications before it are
    skipped)."""
    ws.send(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}))
    while True:
        message = json.loads(ws.recv(timeout=TIMEOUT))
        if message.get("id") == request_id and "method" not in message:
            return dict(message)
