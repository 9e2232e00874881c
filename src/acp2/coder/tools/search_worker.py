"""Run one search with Python's :mod:`re` in a child process the agent can kill.

:func:`run_in_child` (the agent side) starts ``python -m acp2.coder.tools.search_worker``,
sends the request as JSON on stdin and reads ``{"hits": [...]}`` or ``{"error": "..."}``
from stdout. Cancellation or the time limit kills the child (SIGKILL), which ends even a
match stuck in catastrophic backtracking at once; the child also arms ``SIGALRM`` so it
cannot outlive the limit if the agent dies.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
from typing import Any

import anyio

from acp2.coder.tools.errors import ToolError
from acp2.coder.tools.limits import FileLimits
from acp2.coder.tools.sandbox import Sandbox

__all__ = ["main", "run_in_child"]

_MAX_OUTPUT = 4 * 1024 * 1024


async def run_in_child(
    sandbox: Sandbox,
    pattern: str,
    path: str,
    glob: str | None,
    ignore_case: bool,
    limits: FileLimits,
) -> list[str]:
    """Search in a child process; ToolError on a bad pattern, a failure or the time limit."""
    request = {
        "cwd": sandbox.cwd,
        "additional": list(sandbox.additional),
        "args": [pattern, path, glob, ignore_case],
        "file_bytes": limits.search_file_bytes,
        "matches": limits.search_matches,
        "seconds": limits.search_seconds,
    }
    output = await _exchange(json.dumps(request).encode(), limits.search_seconds)
    return _answer(output, limits)


async def _exchange(payload: bytes, seconds: float) -> bytes | None:
    process = await anyio.open_process(
        [sys.executable, "-m", "acp2.coder.tools.search_worker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=_child_env(),
    )
    try:
        with anyio.move_on_after(seconds):
            assert process.stdin is not None
            assert process.stdout is not None
            await process.stdin.send(payload)
            await process.stdin.aclose()
            chunks = [chunk async for chunk in process.stdout]
            await process.wait()
            return b"".join(chunks)[:_MAX_OUTPUT]
        return None
    finally:
        if process.returncode is None:
            process.kill()
        with anyio.CancelScope(shield=True):
            await process.aclose()


def _answer(output: bytes | None, limits: FileLimits) -> list[str]:
    from acp2.coder.tools.search import too_long

    if output is None:
        raise ToolError(too_long(limits))
    try:
        answer = json.loads(output)
    except ValueError:
        raise ToolError("the search failed (its worker process gave no answer)") from None
    if "error" in answer:
        raise ToolError(str(answer["error"]))
    return [str(hit) for hit in answer["hits"]]


def _child_env() -> dict[str, str]:
    import acp2

    env = dict(os.environ)
    src = os.path.dirname(os.path.dirname(os.path.abspath(acp2.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    env.pop("ACP2_SEARCH_ENGINE", None)
    return env


def main() -> None:
    """The child: read the request from stdin, search, write the answer to stdout."""
    request: dict[str, Any] = json.loads(sys.stdin.buffer.read())
    signal.alarm(max(1, math.ceil(float(request["seconds"])) + 1))
    from acp2.coder.tools.search import search

    limits = FileLimits(search_file_bytes=request["file_bytes"], search_matches=request["matches"])
    sandbox = Sandbox(request["cwd"], request["additional"])
    try:
        pattern, path, glob, ignore_case = request["args"]
        hits = search(sandbox, pattern, path, glob, ignore_case, limits, engine="re")
        answer: dict[str, Any] = {"hits": hits}
    except ToolError as exc:
        answer = {"error": str(exc)}
    sys.stdout.write(json.dumps(answer))


if __name__ == "__main__":
    main()
