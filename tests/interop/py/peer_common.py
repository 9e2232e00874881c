"""What the Python SDK test peers share (standard library only).

The peers in this folder run in the SDK's own venv (see ``../py_env.py``), started as
scripts, so this module is imported by file location (the script's folder is first on
``sys.path``), never from the acp2 test package.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import datetime
import json
import sys
from typing import Any

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

#: The scenario's file edit, as a patch and as the v1 old/new text.
HELLO_PATCH = (
    "diff --git a/hello.txt b/hello.txt\n--- a/hello.txt\n+++ b/hello.txt\n"
    "@@ -1 +1 @@\n-hello\n+hello, world\n"
)
HELLO_OUTPUT = b"hello, world\n"


class Ids:
    """Deterministic ids (``prefix_1``, ``prefix_2``, ...) and timestamps, one second apart."""

    def __init__(self) -> None:
        self._counter = 0
        self._clock = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)

    def next(self, prefix: str) -> str:
        """A new id, unique in this process."""
        self._counter += 1
        return f"{prefix}_{self._counter}"

    def time(self) -> str:
        """A new RFC 3339 timestamp, later than the previous one."""
        self._clock += datetime.timedelta(seconds=1)
        return self._clock.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def log(name: str, *parts: object) -> None:
    """A diagnostic line on stderr (stdout is the protocol)."""
    print(f"[{name}]", *parts, file=sys.stderr, flush=True)


def text(value: str) -> dict[str, Any]:
    """A text content block."""
    return {"type": "text", "text": value}


def b64(data: bytes) -> str:
    """``data`` as base64 text."""
    return base64.b64encode(data).decode()


def split_scenario(prompt_text: str) -> tuple[str, str]:
    """The scenario word (the first word of the prompt) and the rest."""
    word, _, rest = prompt_text.strip().partition(" ")
    return word, rest.strip()


def prompt_text(blocks: list[dict[str, Any]]) -> str:
    """The text blocks of a prompt joined by spaces."""
    return " ".join(b["text"] for b in blocks if b.get("type") == "text").strip()


def client_arguments(
    description: str, scenarios: tuple[str, ...] = SCENARIOS
) -> argparse.Namespace:
    """The command line of a test client: ``--scenario NAME [options] -- AGENT_ARGV...``."""
    argv = sys.argv[1:]
    if "--" not in argv or argv[-1] == "--":
        raise SystemExit(f"usage: {sys.argv[0]} --scenario NAME [options] -- AGENT_ARGV...")
    split = argv.index("--")
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--scenario", required=True, choices=scenarios)
    parser.add_argument("--cwd", default=None)
    parser.add_argument("--count", type=int, default=5)
    parser.add_argument("--prompt", default=None)
    parser.add_argument("--timeout", type=float, default=30.0)
    args = parser.parse_args(argv[:split])
    args.agent = argv[split + 1 :]
    return args


# ---------------------------------------------------------------- the client's recorder


class Recorder:
    """The wire-order timeline of a test client, in the event shapes of ``ts/client.mjs``.

    ``outgoing`` is called with each line as it is written to the agent's stdin and
    ``incoming`` with each message as the SDK reads it, so a reply is always recorded
    after the line that caused it.
    """

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.events: list[dict[str, Any]] = []
        self.sent: dict[Any, str] = {}  # id -> method, requests this client sent
        self.received: dict[Any, str] = {}  # id -> method, requests the agent sent
        self._waiters: list[asyncio.Future[None]] = []

    def record(self, event: dict[str, Any]) -> None:
        self.events.append(event)
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)
        self._waiters.clear()

    def outgoing(self, data: bytes) -> None:
        for line in data.splitlines():
            if line.strip():
                self._outgoing(json.loads(line))

    def _outgoing(self, message: dict[str, Any]) -> None:
        if "method" in message and "id" in message:
            self.sent[message["id"]] = message["method"]
            event = {"type": "request", "id": message["id"], "method": message["method"]}
            self.record({**event, "params": message.get("params")})
        elif "method" in message:
            self.record(
                {"type": "notify", "method": message["method"], "params": message.get("params")}
            )
        else:
            method = self.received.get(message.get("id"))
            self.record(
                {"type": "answer", "id": message.get("id"), "method": method, **_outcome(message)}
            )

    def incoming(self, message: Any) -> None:
        if not isinstance(message, dict):
            self.record({"type": "invalid", "message": message})
        elif "method" in message and "id" in message:
            self.received[message["id"]] = message["method"]
            kind = (
                "permission"
                if message["method"] == "session/request_permission"
                else "agent_request"
            )
            self.record(
                {
                    "type": kind,
                    "id": message["id"],
                    "method": message["method"],
                    "params": message.get("params"),
                }
            )
        elif message.get("method") == "session/update":
            params = message.get("params") or {}
            self.record(
                {
                    "type": "update",
                    "sessionId": params.get("sessionId"),
                    "update": params.get("update"),
                }
            )
        elif "method" in message:
            self.record(
                {
                    "type": "notification",
                    "method": message["method"],
                    "params": message.get("params"),
                }
            )
        else:
            kind = "error" if "error" in message else "response"
            method = self.sent.get(message.get("id"))
            self.record(
                {"type": kind, "id": message.get("id"), "method": method, **_outcome(message)}
            )

    async def wait_for(self, predicate: Any, what: str, start: int = 0) -> dict[str, Any]:
        """The first event at index >= ``start`` matching ``predicate``, waiting for it."""
        index = start
        try:
            async with asyncio.timeout(self.timeout):
                while True:
                    while index < len(self.events):
                        if predicate(self.events[index]):
                            return self.events[index]
                        index += 1
                    waiter = asyncio.get_running_loop().create_future()
                    self._waiters.append(waiter)
                    await waiter
        except TimeoutError:
            raise TimeoutError(f"timed out waiting for {what}") from None


def _outcome(message: dict[str, Any]) -> dict[str, Any]:
    return {"error": message["error"]} if "error" in message else {"result": message.get("result")}


def is_update(session_id: str, kind: str | None = None) -> Any:
    """A predicate: a ``session/update`` of ``session_id`` (of one kind)."""

    def match(event: dict[str, Any]) -> bool:
        update = event.get("update") or {}
        return (
            event["type"] == "update"
            and event["sessionId"] == session_id
            and (kind is None or update.get("sessionUpdate") == kind)
        )

    return match


def record_writes(writer: asyncio.StreamWriter, recorder: Recorder) -> None:
    """Record every line written to ``writer`` before it goes out (the SDK writes one
    complete JSON-RPC line per ``write`` call)."""
    write = writer.write

    def recorded(data: bytes | bytearray | memoryview) -> None:
        recorder.outgoing(bytes(data))
        write(data)

    writer.write = recorded  # type: ignore[method-assign]


async def spawn(agent: list[str]) -> asyncio.subprocess.Process:
    """Start the agent with piped stdin/stdout; its stderr goes to ours."""
    return await asyncio.create_subprocess_exec(
        *agent, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=2**26
    )


async def stop(process: asyncio.subprocess.Process) -> dict[str, Any]:
    """Close the agent's stdin and wait for it (SIGTERM after 5 s); its exit as reported."""
    assert process.stdin is not None
    process.stdin.close()
    try:
        async with asyncio.timeout(5):
            code = await process.wait()
    except TimeoutError:
        process.terminate()
        code = await process.wait()
    if code < 0:
        return {"code": None, "signal": -code}
    return {"code": code, "signal": None}


def new_report(args: argparse.Namespace) -> dict[str, Any]:
    """An empty report with the fields of ``ts/client.mjs``."""
    return {
        "ok": False,
        "scenario": args.scenario,
        "agentArgv": args.agent,
        "initialize": None,
        "sessionId": None,
        "events": [],
        "sdkUpdates": [],
        "stopReasons": [],
        "text": "",
        "permissions": [],
        "extra": {},
        "agentExit": None,
    }


def print_report(report: dict[str, Any]) -> None:
    """The report as one JSON line on stdout."""
    sys.stdout.write(json.dumps(report) + "\n")
    sys.stdout.flush()


def summarize(report: dict[str, Any]) -> None:
    """Fill ``stopReasons`` (from the v2 idles) and ``text`` of the main session."""
    for event in report["events"]:
        if event["type"] != "update" or event["sessionId"] != report["sessionId"]:
            continue
        update = event["update"] or {}
        kind = update.get("sessionUpdate")
        if kind == "state_update" and update.get("state") == "idle":
            report["stopReasons"].append(update.get("stopReason"))
        elif kind == "agent_message_chunk" and (update.get("content") or {}).get("type") == "text":
            report["text"] += update["content"]["text"]
