"""``acp2 serve`` under sockets that never make a request, and under a stalled observer.

Run: ``.venv/bin/python bench/serve_limits.py [idle|observer|all] [--n 1000] [--chunks 100000]``
(extra ``acp2 serve`` flags after ``--``, e.g. ``-- --header-timeout 2``).

* ``idle``: opens ``n`` sockets to ``acp2 serve --test-agent`` on 127.0.0.1 that send
  nothing, then reports how many the server still holds after 1 s and after the header
  timeout (plus 2 s), the server's RSS, and whether a legitimate ``initialize`` POST made
  while they are open is answered (and how fast).
* ``observer``: a WebSocket owner streams ``chunks`` chunks while a second client
  attached as an observer reads nothing (a 4 KiB receive buffer); reports the owner's
  turn time next to the same turn with no observer, and how the observer's socket ended.

Only 127.0.0.1 and the Linux ``/proc`` filesystem are used; nothing here is a test.

Measured here (2 shared cores, load ~5), before -> after issue 24's items 4 and 6:

* idle, 1,000 sockets (server RSS 36 -> 40 MiB with them, both): all 1,000 still held
  12 s later (until the client closed them) -> none (the 10 s header timeout); an
  ``initialize`` made meanwhile is answered 200 either way.
* observer, 100,000 chunks, ``-- --max-held-bytes 65536``: the owner's turn stopped
  once the observer's buffers filled (no chunk for 10 s; the observer was cut at the
  60 s stall timeout) -> 1.6-4 s, as with no observer; the observer read 12,748
  messages, then its socket closed with 1008 "dropped: too slow a reader of session
  ...". With the default 16 MiB held per connection the same happens at 300,000
  chunks (owner 6.3 s against 5.0 s alone). The owner's turn alone (200,000 chunks, six
  interleaved runs each) did not get slower: medians 2.0 s after, 2.3 s before.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import select
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_LISTENING = re.compile(r"listening on http://127\.0\.0\.1:(\d+)/acp")
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": 2, "info": {"name": "bench", "version": "1"}, "capabilities": {}},
}


@contextmanager
def serve(flags: list[str]) -> Iterator[tuple[int, subprocess.Popen[str]]]:
    """``acp2 serve --test-agent`` on a free port of 127.0.0.1: (port, process)."""
    env = dict(os.environ, ACP2_DATA_DIR=tempfile.mkdtemp(prefix="acp2-bench-"))
    env.pop("ACP2_TOKEN", None)
    argv = [
        sys.executable,
        "-m",
        "acp2",
        "serve",
        "--no-token",
        "--port",
        "0",
        "--test-agent",
        *flags,
    ]
    process = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, env=env)
    assert process.stderr is not None
    for line in process.stderr:
        found = _LISTENING.search(line)
        if found:
            break
    else:
        raise SystemExit("acp2 serve did not start")
    try:
        yield int(found.group(1)), process
    finally:
        process.terminate()
        process.wait(30)


def rss_mib(pid: int) -> float:
    """The resident set of ``pid`` in MiB (from /proc)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def still_open(sockets: list[socket.socket]) -> int:
    """How many of ``sockets`` the server has not closed (no EOF readable yet)."""
    readable, _, _ = select.select(sockets, [], [], 0) if sockets else ([], [], [])
    closed = 0
    for sock in readable:
        try:
            closed += sock.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            closed += 1
    return len(sockets) - closed


def initialize_ms(port: int) -> str:
    """An ``initialize`` POST's status and time, as text."""
    import httpx

    start = time.perf_counter()
    try:
        response = httpx.post(f"http://127.0.0.1:{port}/acp", json=INIT, timeout=30)
    except httpx.HTTPError as exc:
        return f"failed ({type(exc).__name__})"
    return f"{response.status_code} in {(time.perf_counter() - start) * 1000:.0f} ms"


def idle(n: int, flags: list[str]) -> None:
    """The ``idle`` scenario (module docstring)."""
    with serve(flags) as (port, process):
        base = rss_mib(process.pid)
        sockets = [socket.create_connection(("127.0.0.1", port)) for _ in range(n)]
        time.sleep(1.0)
        print(f"idle sockets opened: {n}; held after 1 s: {still_open(sockets)}")
        print(f"server RSS: {base:.1f} MiB at rest, {rss_mib(process.pid):.1f} MiB with them")
        print(f"initialize while they are open: {initialize_ms(port)}")
        time.sleep(11.0)
        print(f"held after 12 s: {still_open(sockets)}")
        for sock in sockets:
            sock.close()


def _call(ws: Any, request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    ws.send(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}))
    while True:
        message = json.loads(ws.recv(timeout=30))
        if message.get("id") == request_id and "method" not in message:
            return dict(message)


def _client(port: int, rcvbuf: int | None = None) -> Any:
    from websockets.sync.client import connect

    sock = socket.socket()
    if rcvbuf:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.connect(("127.0.0.1", port))
    url = f"ws://127.0.0.1:{port}/acp"
    ws = connect(url, sock=sock, proxy=None, compression=None, max_size=None, max_queue=1)
    ws = ws.__enter__()
    _call(ws, 0, "initialize", INIT["params"])  # type: ignore[arg-type]
    return ws


def _turn(owner: Any, session_id: str, chunks: int, wait: float) -> str:
    """The owner's turn time (or how far it got within ``wait`` seconds)."""
    text = {"type": "text", "text": f"stream {chunks}"}
    params = {"sessionId": session_id, "prompt": [text]}
    owner.send(
        json.dumps({"jsonrpc": "2.0", "id": 9, "method": "session/prompt", "params": params})
    )
    start, seen = time.perf_counter(), 0
    while True:
        try:
            update = json.loads(owner.recv(timeout=wait)).get("params", {}).get("update", {})
        except TimeoutError:
            return f"stopped after {seen} chunks (nothing for {wait:.0f} s)"
        seen += update.get("sessionUpdate") == "agent_message_chunk"
        if update.get("sessionUpdate") == "state_update" and update.get("state") == "idle":
            return f"{seen} chunks in {time.perf_counter() - start:.2f} s"


def observer(chunks: int, flags: list[str]) -> None:
    """The ``observer`` scenario (module docstring)."""
    from websockets.exceptions import ConnectionClosed

    for watched in (False, True):
        with serve(flags) as (port, _):
            owner = _client(port)
            new = {"cwd": tempfile.gettempdir(), "mcpServers": []}
            session_id = _call(owner, 1, "session/new", new)["result"]["sessionId"]
            slow = _client(port, rcvbuf=4096)
            if watched:
                _call(
                    slow, 1, "_acp2/session/attach", {"sessionId": session_id, "role": "observer"}
                )
            label = "with a stalled observer" if watched else "alone"
            print(f"owner's turn {label}: {_turn(owner, session_id, chunks, 10.0)}")
            if watched:
                read = 0
                try:
                    while True:
                        slow.recv(timeout=10)
                        read += 1
                except ConnectionClosed as closed:
                    print(f"observer read {read} messages, then its socket closed: {closed.rcvd}")
                except TimeoutError:
                    print(f"observer read {read} messages; its socket is open (not dropped)")


def main() -> None:
    """Parse the arguments and run the scenarios asked for."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("which", nargs="?", default="all", choices=["idle", "observer", "all"])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("flags", nargs="*", help="acp2 serve flags, after --")
    args = parser.parse_args()
    flags = [f for f in args.flags if f != "--"]
    if args.which in ("idle", "all"):
        idle(args.n, flags)
    if args.which in ("observer", "all"):
        observer(args.chunks, flags)


if __name__ == "__main__":
    main()
