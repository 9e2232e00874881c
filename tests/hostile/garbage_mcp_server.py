"""A hostile "MCP server" on stdio: answers every line it reads with garbage (not JSON,
JSON that is no JSON-RPC, a response to an id nobody sent), and floods stderr."""

from __future__ import annotations

import sys

GARBAGE = (
    "this is not json\n",
    '{"jsonrpc": "2.0", "id": 999999, "result": {"surprise": true}}\n',
    '{"hello": "world"}\n',
    "\x1b[31mred alert\x1b[0m\n",
)

for _line in sys.stdin:
    sys.stderr.write("noise " * 10000 + "\n")
    for junk in GARBAGE:
        sys.stdout.write(junk)
    sys.stdout.flush()
