"""Run the test peers (``ts/*.mjs`` on the TypeScript SDK, ``py/*.py`` on the Python SDK).

Typical use, with ``ts_sdk`` from the fixture of the same name::

    report = run_ts_client(ts_sdk, "echo", ts_agent_argv(ts_sdk), tap_log=tmp_path / "w.jsonl")
    report = run_ts_client(ts_sdk, "tools-allow", [sys.executable, "-m", "acp2", "test-agent"])
    argv = ts_agent_argv(ts_sdk)      # for a Python client to spawn

``run_ts_client`` returns the client's JSON report (see ``ts/client.mjs`` for its
fields) and raises ``PeerError`` if the client fails. ``check_report`` in
``expectations.py`` holds the peer-independent checks for each scenario.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio

from helpers.timeouts import RUN_TIMEOUT
from helpers.warm import WarmPython

from .wire import read_log

INTEROP_DIR = Path(__file__).resolve().parent
TS_DIR = INTEROP_DIR / "ts"
PY_DIR = INTEROP_DIR / "py"
TAP = INTEROP_DIR / "tap.py"

SCENARIOS = (
    "echo",
    "stream",
    "tools-allow",
    "tools-reject",
    "cancel",
    "cancel-permission",
    "cancel-permission-wait",
    "resume",
    "list",
    "close",
    "ext",
    "kinds",
    "fail",
)
#: Client scenarios only acp2's agents can run (their prompts are not in the shared
#: vocabulary of README.md): background work.
ACP2_SCENARIOS = ("background",)


class PeerError(AssertionError):
    """A TypeScript peer failed; the message carries its error, exit code and stderr."""

    def __init__(self, message: str, report: dict[str, Any] | None, stderr: str) -> None:
        super().__init__(message)
        self.report = report
        self.stderr = stderr


def node() -> str:
    """The ``node`` executable (an absolute path when it is on PATH)."""
    return shutil.which("node") or "node"


def ts_agent_argv(ts_sdk: Path) -> list[str]:
    """The command line of the TypeScript test agent (speaks ACP v2 on stdio)."""
    return [node(), str(TS_DIR / "agent.mjs"), "--sdk", str(ts_sdk)]


def ts_v1_agent_argv(ts_sdk: Path) -> list[str]:
    """The command line of the TypeScript ACP v1 test agent (``ts/v1_agent.mjs``)."""
    return [node(), str(TS_DIR / "v1_agent.mjs"), "--sdk", str(ts_sdk)]


def tap_argv(log: Path, agent_argv: Sequence[str]) -> list[str]:
    """``agent_argv`` wrapped in the wire tap, which logs every line to ``log``."""
    return [sys.executable, str(TAP), "--log", str(log), "--", *agent_argv]


async def agent_answers(
    agent_argv: Sequence[str], log: Path, lines: Sequence[str], answers: int
) -> list[dict[str, Any]]:
    """Write ``lines`` to the agent (through the tap, logging to ``log``), read until it
    wrote ``answers`` lines, close its stdin, require a clean exit, and return every
    message the agent sent, as the tap logged them."""
    with anyio.fail_after(RUN_TIMEOUT):
        async with await anyio.open_process(tap_argv(log, agent_argv)) as agent:
            assert agent.stdin is not None
            assert agent.stdout is not None
            await agent.stdin.send(("\n".join(lines) + "\n").encode())
            received = b""
            while received.count(b"\n") < answers:
                received += await agent.stdout.receive()
            await agent.stdin.aclose()
            assert await agent.wait() == 0
    return [f.message for f in read_log(log) if f.sender == "agent"]


def ts_client_argv(
    ts_sdk: Path,
    scenario: str,
    agent_argv: Sequence[str],
    *,
    cwd: Path | None = None,
    count: int | None = None,
    prompt: str | None = None,
    timeout: float = 30.0,
) -> list[str]:
    """The command line of the TypeScript test client for one scenario."""
    if scenario not in SCENARIOS + ACP2_SCENARIOS:
        known = SCENARIOS + ACP2_SCENARIOS
        raise ValueError(f"unknown scenario {scenario!r}; expected one of {known}")
    argv = [node(), str(TS_DIR / "client.mjs"), "--sdk", str(ts_sdk), "--scenario", scenario]
    argv += ["--timeout", str(timeout)]
    if cwd is not None:
        argv += ["--cwd", str(cwd)]
    if count is not None:
        argv += ["--count", str(count)]
    if prompt is not None:
        argv += ["--prompt", prompt]
    return [*argv, "--", *agent_argv]


def run_ts_client(
    ts_sdk: Path,
    scenario: str,
    agent_argv: Sequence[str],
    tap_log: Path | None = None,
    *,
    cwd: Path | None = None,
    count: int | None = None,
    prompt: str | None = None,
    timeout: float = 30.0,
) -> dict[str, Any]:
    """Run the TypeScript client against ``agent_argv`` and return its report.

    With ``tap_log`` the agent runs behind ``tap.py`` and the wire is logged there.
    ``cwd`` is the session cwd (default: a folder of this checkout); ``count`` is the
    number of chunks for ``stream``; ``prompt`` replaces the prompt text of a
    single-prompt scenario (``echo``, ``stream``, ``tools-*``, ``kinds``, ``fail``);
    ``timeout`` bounds each wait of the client.
    Raises ``PeerError`` if the client exits non-zero or prints no report.
    """
    if tap_log is not None:
        agent_argv = tap_argv(tap_log, agent_argv)
    argv = ts_client_argv(
        ts_sdk,
        scenario,
        agent_argv,
        cwd=cwd or INTEROP_DIR,
        count=count,
        prompt=prompt,
        timeout=timeout,
    )
    return run_client(argv, f"ts client {scenario!r}", timeout)


def run_ts_v1_client(
    ts_sdk: Path,
    scenarios: Sequence[str],
    agent_argv: Sequence[str],
    tap_log: Path | None = None,
    *,
    cwd: Path | None = None,
    prompt: str | None = None,
    timeout: float = 30.0,
) -> dict[str, Any]:
    """Run the TypeScript ACP v1 client (``ts/v1_client.mjs``) through ``scenarios``, one
    session each on one connection, and return its report (``runs`` holds one entry per
    scenario; ``v1_expectations.scenario_reports`` splits it). The options are those of
    ``run_ts_client``; ``timeout`` bounds each wait, the whole run gets twice that."""
    if tap_log is not None:
        agent_argv = tap_argv(tap_log, agent_argv)
    argv = [node(), str(TS_DIR / "v1_client.mjs"), "--sdk", str(ts_sdk)]
    argv += ["--scenario", ",".join(scenarios), "--timeout", str(timeout)]
    argv += ["--cwd", str(cwd or INTEROP_DIR)]
    if prompt is not None:
        argv += ["--prompt", prompt]
    return run_client([*argv, "--", *agent_argv], f"ts v1 client {list(scenarios)}", timeout)


#: The warm servers of the Python SDK venvs (``helpers/warm.py``), by the venv's
#: ``python``; the ``py_sdk_*`` fixtures start them. A venv without one starts cold.
WARM: dict[Path, WarmPython] = {}


def py_command(python: Path, script: Path, *args: str) -> list[str]:
    """``python script args``, through the venv's warm server when it has one."""
    command = [str(python), str(script), *args]
    warm = WARM.get(python)
    return warm.argv(command) if warm is not None else command


def py_agent_argv(python: Path, version: str = "v2") -> list[str]:
    """The command line of the Python SDK test agent ``py/<version>_agent.py``."""
    return py_command(python, PY_DIR / f"{version}_agent.py")


def run_py_client(
    python: Path,
    scenario: str,
    agent_argv: Sequence[str],
    tap_log: Path | None = None,
    *,
    version: str = "v2",
    cwd: Path | None = None,
    count: int | None = None,
    prompt: str | None = None,
    timeout: float = 30.0,
) -> dict[str, Any]:
    """Run the Python SDK test client ``py/<version>_client.py`` (in the venv of
    ``python``) against ``agent_argv``; the options and the report are those of
    ``run_ts_client`` (the v1 client's scenarios and report: see ``py/v1_client.py``)."""
    if tap_log is not None:
        agent_argv = tap_argv(tap_log, agent_argv)
    argv = py_command(python, PY_DIR / f"{version}_client.py", "--scenario", scenario)
    argv += ["--timeout", str(timeout), "--cwd", str(cwd or INTEROP_DIR)]
    if count is not None:
        argv += ["--count", str(count)]
    if prompt is not None:
        argv += ["--prompt", prompt]
    return run_client([*argv, "--", *agent_argv], f"py {version} client {scenario!r}", timeout)


def run_client(argv: Sequence[str], name: str, timeout: float) -> dict[str, Any]:
    """Run a test client command line; its report, or ``PeerError`` naming ``name``."""
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=3 * timeout + 10, cwd=INTEROP_DIR
        )
    except subprocess.TimeoutExpired as exc:
        stderr = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else ""
        raise PeerError(f"{name} hung: {exc}", None, stderr) from exc
    report = _parse_report(done.stdout)
    if done.returncode != 0 or report is None or not report.get("ok"):
        error = (report or {}).get("error") or "no report on stdout"
        raise PeerError(
            f"{name} failed (exit {done.returncode}): {error}\n"
            f"--- stderr (tail) ---\n{_tail(done.stderr)}",
            report,
            done.stderr,
        )
    return report


def _parse_report(stdout: str) -> dict[str, Any] | None:
    for line in reversed(stdout.strip().splitlines()):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])
