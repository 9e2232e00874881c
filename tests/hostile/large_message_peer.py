"""The peer that receives one very large message (run as a script).

``python large_message_peer.py``: serves acp2's :class:`~acp2.rpc.Connection` on stdio;
the request ``measure {"text": ...}`` is answered with the text's length, and ``echo``
returns its params whole (a large answer). Measures what the JSON-RPC layer costs per
large message, without any history store.
"""

from __future__ import annotations

import anyio
import msgspec

from acp2.rpc import Connection
from acp2.transport.stdio import serve_stdio


class Text(msgspec.Struct):
    text: str


async def measure(params: Text) -> int:
    return len(params.text)


async def echo(params: Text) -> Text:
    return params


async def main() -> None:
    async with serve_stdio() as transport:
        conn = Connection(transport, name="client")
        conn.on_request("measure", Text, measure)
        conn.on_request("echo", Text, echo)
        async with conn:
            await conn.wait_closed()


if __name__ == "__main__":
    anyio.run(main)
