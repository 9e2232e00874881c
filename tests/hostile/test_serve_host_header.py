"""Attack: DNS rebinding against ``acp2 serve`` without an ``Origin`` (issue 24, item 9).

A page on ``evil.example`` whose name is rebound to 127.0.0.1 reaches the local server
with ``Host: evil.example``. Before the fix the ``Host`` header was not checked: the
protection rested on ``Origin`` alone, and a request without one (a browser that omits it,
a plugin, an old client) drove the agent. Now a ``Host`` that names neither a loopback
name, nor the address the request came in on, nor a name given with ``--allowed-host``
is answered 421, before any token or connection is looked at. A real ``acp2 serve`` on
127.0.0.1.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from helpers.serve_process import serving
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio

INIT = {"protocolVersion": 2, "capabilities": {}, "info": {"name": "t", "version": "0"}}
BODY = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT})


@contextmanager
def served(tmp_path: Path, *flags: str) -> Iterator[int]:
    """``acp2 serve --test-agent FLAGS`` on 127.0.0.1; its port."""
    with serving(tmp_path, "--test-agent", *flags) as port:
        yield port


async def post_initialize(port: int, host: str) -> httpx.Response:
    headers = {"Content-Type": "application/json", "Host": host}
    async with httpx.AsyncClient(timeout=TIMEOUT) as client:
        return await client.post(f"http://127.0.0.1:{port}/acp", content=BODY, headers=headers)


async def test_a_rebound_host_name_is_refused_421_without_an_origin(tmp_path: Path) -> None:
    with served(tmp_path) as port:
        for host in (f"evil.example:{port}", "evil.example", f"127.0.0.1.evil.example:{port}"):
            refused = await post_initialize(port, host)
            assert refused.status_code == 421, (host, refused.status_code, refused.text)
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", "LOCALHOST"):
            accepted = await post_initialize(port, host)
            assert accepted.status_code == 200, (host, accepted.status_code, accepted.text)


async def test_a_host_name_given_with_allowed_host_is_accepted(tmp_path: Path) -> None:
    with served(tmp_path, "--allowed-host", "acp.example") as port:
        accepted = await post_initialize(port, f"acp.example:{port}")
        assert accepted.status_code == 200, accepted.text
        refused = await post_initialize(port, f"evil.example:{port}")
        assert refused.status_code == 421, refused.text
