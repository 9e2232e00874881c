"""The peer under attack by a client that never reads (run as a script).

``python unread_peer_agent.py STALL_TIMEOUT``: serves acp2's :class:`~acp2.rpc.Connection`
on stdio with the given stall timeout; the request ``big`` is answered with 64 KiB of
text, so a few hundred unread answers exceed the connection's unread bound. When the
connection closes, its ``close_reason`` is written to stderr.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import anyio

from acp2.rpc import Connection
from acp2.transport.stdio import serve_stdio

BIG = "x" * 65536


async def big(params: Any) -> str:
    return BIG


async def main(stall_timeout: float) -> None:
    async with serve_stdio() as transport:
        conn = Connection(transport, name="client", stall_timeout=stall_timeout)
        conn.on_request("big", dict, big)
        async with conn:
            await conn.wait_closed()
    sys.stderr.write(f"close_reason: {conn.close_reason}\n")


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    anyio.run(main, float(sys.argv[1]))
