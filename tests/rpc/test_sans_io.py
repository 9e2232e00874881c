"""The sans-IO half of acp2.rpc imports no I/O or async library (ARCHITECTURE rule 1)."""

from __future__ import annotations

import subprocess
import sys

PURE = [
    "acp2.rpc.events",
    "acp2.rpc.peer",
    "acp2.rpc.framing",
    "acp2.rpc.messages",
    "acp2.rpc.pending",
    "acp2.rpc.routes",
    "acp2.rpc.sniff",
]
FORBIDDEN = ["anyio", "asyncio", "trio", "subprocess", "socket", "selectors"]


def test_sans_io_modules_import_no_io_or_async_library() -> None:
    code = (
        f"import sys\nimport {', '.join(PURE)}\n"
        f"print(sorted(m for m in {FORBIDDEN!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
