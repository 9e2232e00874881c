"""TS SDK 2.4.0 remote: its experimental ws-client and http-client (``ts/remote.mjs``)
against its experimental server (``ts/agent.mjs --http 0``: AcpServer, its Node adapter,
WebSocket upgrades through ``ws``), the baseline of ``acp2_remote.py``.

    python bench/ts_remote.py --folder TS_PEERS_FOLDER [--node NODE] [size options]

``TS_PEERS_FOLDER`` is the provisioned bench/ts folder (``_provision.ensure_ts_peers``).
Measures, on 127.0.0.1, the same metrics under the same names as ``acp2_remote.py``:

* ``ws_*`` / ``sse_*``: one ``stream N`` prompt (updates/s, client and server CPU µs
  per update, each process's own counters inside the window) and the prompt p50;
* ``idle_conn_kib``: the server's RSS growth per idle connection (initialized, one
  session), over WebSocket.

The TS clients neither reconnect nor resume (the SDK leaves it to the caller: a new
connection and ``session/load``), so the reconnect rows are n/a with that reason.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _acp2 import size_arguments
from _common import RESULT_PREFIX, emit_result
from _remote import rss_kib, serving

NO_RESUME = (
    "the TS SDK 2.4.0 ws-client / http-client do not reconnect or resume a dropped "
    "connection (left to the caller: a new connection, initialize, session/load)"
)
#: Seconds one driver run may take.
TIMEOUT = 600.0


def stream(node: str, folder: Path, url: str, transport: str, sizes: Any) -> dict[str, Any]:
    """One ``remote.mjs stream`` run: its result line's metrics."""
    argv = [node, "remote.mjs", "stream", "--url", url, "--transport", transport]
    argv += ["--updates", str(sizes.updates), "--prompts", str(max(5, sizes.runs * 4))]
    done = subprocess.run(
        argv, cwd=folder, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )
    for line in done.stdout.splitlines():
        if line.startswith(RESULT_PREFIX):
            return dict(json.loads(line[len(RESULT_PREFIX) :]))
    raise RuntimeError(f"remote.mjs {transport} failed: {done.stderr.strip()[-300:]}")


def idle_connections(node: str, folder: Path, url: str, pid: int, count: int) -> float:
    """The server's RSS growth in KiB per idle WebSocket connection with one session."""
    argv = [node, "remote.mjs", "idle", "--url", url, "--transport", "ws"]
    argv += ["--connections", str(count)]
    driver = subprocess.Popen(
        argv, cwd=folder, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert driver.stdin is not None
    assert driver.stdout is not None
    try:
        _ready(driver.stdout)
        time.sleep(0.2)
        before = rss_kib(pid)
        driver.stdin.write("more\n")
        driver.stdin.flush()
        _ready(driver.stdout)
        time.sleep(0.2)
        return (rss_kib(pid) - before) / count
    finally:
        driver.stdin.close()
        driver.wait(30)


def _ready(out: Any) -> None:
    if out.readline().strip() != "READY":
        raise RuntimeError("remote.mjs idle did not open its connections")


def measure(node: str, folder: Path, sizes: Any) -> dict[str, Any]:
    """Every remote metric against one TS server (idle memory first, as acp2_remote)."""
    with serving([node, "agent.mjs", "--http", "0"], cwd=folder) as (url, pid):
        metrics: dict[str, Any] = {
            "idle_conn_kib": idle_connections(node, folder, url, pid, min(sizes.sessions, 200))
        }
        for transport, key in (("ws", "ws"), ("http", "sse")):
            found = stream(node, folder, url, transport, sizes)
            metrics[f"{key}_updates_per_s"] = found["updates_per_s"]
            metrics[f"{key}_client_cpu_us"] = found["client_cpu_us_per_update"]
            metrics[f"{key}_server_cpu_us"] = found["server_cpu_us_per_update"]
            metrics[f"{key}_prompt_p50_ms"] = found["prompt_p50_ms"]
    metrics["_skipped"] = {f"{key}_reconnect_p50_ms": NO_RESUME for key in ("ws", "sse")}
    return metrics


def main() -> int:
    """Run the TS remote baseline and print its result line."""
    parser = size_arguments(__doc__)
    parser.add_argument("--folder", type=Path, required=True)
    parser.add_argument("--node", default="node")
    args = parser.parse_args()
    emit_result(measure(args.node, args.folder, args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
