"""serve_stdio redirects stray output while inside and restores fds 0 and 1 after.

Inside: print() and writes to fd 1 go to stderr, stdin reads /dev/null, and the
transport writes one protocol line. After: print() reaches stdout again.
"""

from __future__ import annotations

import os
import sys

import anyio

from acp2.transport.stdio import serve_stdio


async def main() -> None:
    async with serve_stdio() as transport:
        print("stray print inside")
        sys.stdout.flush()
        os.write(1, b"stray fd write inside\n")
        print(f"stdin inside reads {sys.stdin.read()!r}", file=sys.stderr)
        await transport.send(b'{"jsonrpc":"2.0","method":"hello"}\n')
    print("after")


anyio.run(main)
