"""An echo peer on stdio, built from acp2's own Connection + serve_stdio.

Requests: ``echo`` (returns its params verbatim), ``stderr`` ({"bytes": n}: writes n
bytes to stderr, then returns n), ``print`` (a stray print(), then returns "printed"),
``count`` (returns how many ``tick`` notifications arrived), ``sleep`` ({"seconds": s}),
``flood`` ({"n": n, "params": {...}}: sends n ``tock`` notifications, then returns n).
``--stderr-flood N`` writes N bytes to stderr before serving (TR-05);
``--print-first`` prints to stdout before and while serving (TR-03).
Exits when stdin ends (TR-06).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import anyio
import msgspec

from acp2.rpc.connection import Connection
from acp2.transport.stdio import serve_stdio


class StderrParams(msgspec.Struct):
    bytes: int


class SleepParams(msgspec.Struct):
    seconds: float


class FloodParams(msgspec.Struct):
    n: int
    params: msgspec.Raw


class EchoAgent:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.ticks = 0
        conn.on_request("echo", msgspec.Raw, self.echo)
        conn.on_request("stderr", StderrParams, self.stderr)
        conn.on_request("print", msgspec.Raw, self.stray)
        conn.on_request("count", msgspec.Raw, self.count)
        conn.on_request("sleep", SleepParams, self.sleep)
        conn.on_request("flood", FloodParams, self.flood)
        conn.on_notification("tick", msgspec.Raw, self.tick)

    async def echo(self, params: msgspec.Raw) -> msgspec.Raw:
        return params

    async def stderr(self, params: StderrParams) -> int:
        sys.stderr.buffer.write(b"e" * params.bytes)
        sys.stderr.flush()
        return params.bytes

    async def stray(self, _: Any) -> str:
        print("another stray print", flush=True)
        os.write(1, b"raw write to fd 1\n")
        return "printed"

    async def tick(self, _: Any) -> None:
        self.ticks += 1

    async def count(self, _: Any) -> int:
        return self.ticks

    async def sleep(self, params: SleepParams) -> None:
        await anyio.sleep(params.seconds)

    async def flood(self, params: FloodParams) -> int:
        for _ in range(params.n):
            await self.conn.notify("tock", params.params)
        return params.n


async def main(args: argparse.Namespace) -> None:
    if args.stderr_flood:
        os.write(2, b"x" * args.stderr_flood)
    async with serve_stdio() as transport, Connection(transport, name="echo-agent") as conn:
        if args.print_first:
            print("stray output that must not reach the protocol stream")
        EchoAgent(conn)
        await conn.wait_closed()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--stderr-flood", type=int, default=0)
    parser.add_argument("--print-first", action="store_true")
    anyio.run(main, parser.parse_args())
