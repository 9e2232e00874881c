"""The TypeScript SDK 2.4.0's experimental remote clients drive ``acp2 serve``.

``ts/client.mjs --url`` runs its scenarios through ``experimental/ws-client`` (Node 20's
global WebSocket, behind ``--experimental-websocket``) or ``experimental/http-client``
(Streamable HTTP: POST + SSE streams), against a real ``acp2 serve`` process:

- served with ``-- tap.py -- acp2 test-agent`` (one agent subprocess per remote
  connection, its stdio spliced to the connection) so every frame of the conversation
  is logged by the wire tap and validated under the Aug and the Nov schema, as in the
  stdio interop tests;
- served with ``--test-agent`` (one in-process agent shared by every connection), the
  path ``--app`` takes.
"""

from __future__ import annotations

import contextlib
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import schema_validation
from helpers import timeouts

from .expectations import check_report
from .peers import TS_DIR, node, run_client, tap_argv

pytestmark = pytest.mark.interop

ACP2_TEST_AGENT = [sys.executable, "-m", "acp2", "test-agent"]
SCENARIOS = ("echo", "tools-allow", "tools-reject", "cancel", "cancel-permission", "resume")
REMOTES = ("ws", "http")


@contextlib.contextmanager
def acp2_serve(*args: str) -> Iterator[str]:
    """Run ``acp2 serve --port 0 ARGS``; yield its URL (read from its stderr)."""
    argv = [sys.executable, "-m", "acp2", "serve", "--port", "0", "--no-token", *args]
    process = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    try:
        yield _read_url(process, time.monotonic() + timeouts.PROCESS_TIMEOUT)
    finally:
        process.terminate()
        try:
            process.wait(timeouts.PROCESS_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stderr.close()


def _read_url(process: subprocess.Popen[str], deadline: float) -> str:
    assert process.stderr is not None
    seen = []
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stderr], [], [], deadline - time.monotonic())
        line = process.stderr.readline() if ready else ""
        if not line:
            break
        seen.append(line)
        if "listening on " in line:
            return line.split("listening on ", 1)[1].strip()
    raise AssertionError(f"acp2 serve did not start: {''.join(seen)}")


def run_remote(ts_sdk: Path, url: str, remote: str, scenario: str, cwd: Path) -> dict[str, Any]:
    """Run the TS client's ``scenario`` against ``url`` over ``remote`` (ws / http)."""
    argv = [node(), "--experimental-websocket", str(TS_DIR / "client.mjs"), "--sdk", str(ts_sdk)]
    argv += ["--scenario", scenario, "--cwd", str(cwd), "--timeout", "30"]
    argv += ["--url", url, "--remote", remote]
    return run_client(argv, f"ts {remote} client {scenario!r}", 30.0)


def assert_wire_valid(report: dict[str, Any], log: Path) -> None:
    """The SDK took every update as sent, and every tapped frame is valid."""
    wire = [
        {"sessionId": e["sessionId"], "update": e["update"]}
        for e in report["events"]
        if e["type"] == "update"
    ]
    assert report["sdkUpdates"] == wire
    assert not [e for e in report["events"] if e["type"] == "answer" and "error" in e]
    result = schema_validation.check_log(log)
    assert result.problems == []
    if result.frames != len(report["events"]):
        tapped = [line[:160] for line in log.read_text().splitlines()]
        seen = [str(event)[:160] for event in report["events"]]
        raise AssertionError(
            "the tap and the client saw different traffic:\n"
            + "\n".join(["tap:", *tapped, "client:", *seen])
        )


@pytest.mark.parametrize("remote", REMOTES)
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_ts_remote_client_drives_a_spliced_agent_with_every_frame_valid(
    ts_sdk: Path, tmp_path: Path, remote: str, scenario: str
) -> None:
    log = tmp_path / "wire.jsonl"
    with acp2_serve("--", *tap_argv(log, ACP2_TEST_AGENT)) as url:
        report = run_remote(ts_sdk, url, remote, scenario, tmp_path)
    check_report(report)
    assert_wire_valid(report, log)


@pytest.mark.parametrize("remote", REMOTES)
def test_ts_remote_client_drives_the_in_process_test_agent(
    ts_sdk: Path, tmp_path: Path, remote: str
) -> None:
    with acp2_serve("--test-agent") as url:
        for scenario in ("echo", "tools-allow", "resume"):
            check_report(run_remote(ts_sdk, url, remote, scenario, tmp_path))
