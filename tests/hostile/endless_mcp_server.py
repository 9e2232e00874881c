"""A hostile "MCP server" on stdio: answers the first line it reads with one endless line
(64 MB and no newline), then goes on reading without ever answering."""

from __future__ import annotations

import os
import sys

sys.stdin.readline()
chunk = b"z" * (1 << 20)
for _ in range(64):
    os.write(1, chunk)
for _line in sys.stdin:
    pass
