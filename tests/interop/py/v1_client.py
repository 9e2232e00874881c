"""acp2 interop test client: ACP v1, built on the official Python SDK 0.12.1. It
spawns an agent, runs one scenario and prints ONE JSON report line on stdout:

    python v1_client.py --scenario NAME [--cwd DIR] [--count N] [--prompt TEXT]
                        [--timeout SECONDS] -- AGENT_ARGV...

Scenarios (v1 prompts are held open and answered with the stop reason): ``echo``,
``stream``, ``tools-allow``, ``tools-reject``, ``cancel`` (``session/cancel`` once the
agent streams), ``cancel-permission`` (``session/cancel`` while the permission is
open, then the permission answered ``cancelled``, the v1 rule), ``load`` (a turn,
then ``session/load`` of the same session, recording the replay), ``kinds``, ``fail``.

The report has the fields of ``../ts/client.mjs``; ``stopReasons`` come from the
``session/prompt`` responses (``extra.promptErrors`` holds the errors) and
``sdkUpdates`` are what the SDK's ``session_update`` handler received.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from acp import PROTOCOL_VERSION, RequestError, connect_to_agent, helpers, schema
from acp.connection import StreamDirection, StreamEvent
from peer_common import (
    Recorder,
    client_arguments,
    is_update,
    log,
    new_report,
    print_report,
    record_writes,
    spawn,
    stop,
)

NAME = "py-v1-client"
WANTED = {"tools-allow": "allow_once", "tools-reject": "reject_once"}
SCENARIOS = ("echo", "stream", "tools-allow", "tools-reject", "cancel", "cancel-permission")
SCENARIOS += ("load", "kinds", "fail")


def dump(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_unset=True)


class TestClient:
    """The SDK's ``Client`` handlers."""

    def __init__(self, scenario: str, report: dict[str, Any]) -> None:
        self.scenario = scenario
        self.report = report
        self.cancelled = asyncio.Event()  # set once this client sent session/cancel

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.report["sdkUpdates"].append({"sessionId": session_id, "update": dump(update)})

    async def request_permission(
        self, options: list[Any], **_: Any
    ) -> schema.RequestPermissionResponse:
        outcome, via = {"outcome": "cancelled"}, "unexpected"
        wanted = WANTED.get(self.scenario)
        chosen = [o for o in options if o.kind == wanted]
        if chosen:
            outcome, via = {"outcome": "selected", "optionId": chosen[0].option_id}, "policy"
        elif self.scenario == "cancel-permission":
            await self.cancelled.wait()  # v1: a pending permission is answered cancelled
            via = "session/cancel"
        self.report["permissions"].append(
            {"options": [dump(o) for o in options], "outcome": outcome, "via": via}
        )
        return schema.RequestPermissionResponse.model_validate({"outcome": outcome})


class Run:
    def __init__(self, conn: Any, recorder: Recorder, client: TestClient, args: Any) -> None:
        self.conn, self.recorder, self.client, self.args = conn, recorder, client, args
        self.report = client.report

    async def prompt(self, session_id: str, value: str) -> None:
        try:
            response = await self.conn.prompt(
                session_id=session_id, prompt=[helpers.text_block(value)]
            )
        except RequestError as exc:
            self.report["extra"].setdefault("promptErrors", []).append({"code": exc.code})
            self.report["stopReasons"].append(None)
            return
        self.report["stopReasons"].append(response.stop_reason)

    async def cancel_when(self, session_id: str, value: str, predicate: Any, what: str) -> None:
        start = len(self.recorder.events)
        prompt = asyncio.create_task(self.prompt(session_id, value))
        await self.recorder.wait_for(predicate, what, start)
        await self.conn.cancel(session_id=session_id)
        self.client.cancelled.set()
        await prompt

    async def run(self) -> None:
        response = await self.conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=schema.ClientCapabilities(),
            client_info=schema.Implementation(name="acp2-interop-py-v1-client", version="0.12.1"),
        )
        self.report["initialize"] = dump(response)
        cwd = self.args.cwd
        sid = self.report["sessionId"] = (
            await self.conn.new_session(cwd=cwd, mcp_servers=[])
        ).session_id
        scenario = self.args.scenario
        defaults = {
            "echo": "echo hello world",
            "stream": f"stream {self.args.count}",
            "kinds": "kinds",
        }
        defaults |= {"tools-allow": "tools", "tools-reject": "tools", "fail": "fail"}
        if scenario == "cancel":
            chunk = is_update(sid, "agent_message_chunk")
            await self.cancel_when(sid, "wait", chunk, "the agent's first chunk")
        elif scenario == "cancel-permission":
            await self.cancel_when(
                sid, "tools", lambda e: e["type"] == "permission", "a permission"
            )
        elif scenario == "load":
            await self.prompt(sid, "echo first")
            start = len(self.recorder.events)
            await self.conn.load_session(cwd=cwd, session_id=sid, mcp_servers=[])
            replayed = [e["update"] for e in self.recorder.events[start:] if is_update(sid)(e)]
            self.report["extra"]["replayed"] = replayed
            await self.prompt(sid, "echo second")
        else:
            self.report["extra"]["count"] = self.args.count if scenario == "stream" else None
            await self.prompt(sid, self.args.prompt or defaults[scenario])


def observe(recorder: Recorder) -> Any:
    def observer(event: StreamEvent) -> None:
        if event.direction == StreamDirection.INCOMING:
            recorder.incoming(event.message)

    return observer


def summarize(report: dict[str, Any]) -> None:
    for event in report["events"]:
        update = event.get("update") or {}
        if event["type"] == "update" and update.get("sessionUpdate") == "agent_message_chunk":
            report["text"] += (update.get("content") or {}).get("text", "")


async def main() -> int:
    args = client_arguments(__doc__.splitlines()[0], SCENARIOS)
    args.cwd = args.cwd or "."
    report = new_report(args)
    recorder = Recorder(args.timeout)
    report["events"] = recorder.events
    process = await spawn(args.agent)
    assert process.stdin is not None
    assert process.stdout is not None
    record_writes(process.stdin, recorder)
    client = TestClient(args.scenario, report)
    conn = connect_to_agent(client, process.stdin, process.stdout, observers=[observe(recorder)])
    try:
        async with asyncio.timeout(2 * args.timeout):
            await Run(conn, recorder, client, args).run()
        report["ok"] = True
    except Exception as exc:  # the report carries it
        report["error"] = repr(exc)
        log(NAME, f"scenario {args.scenario} failed: {exc!r}")
    with contextlib.suppress(Exception):
        await conn.close()
    report["agentExit"] = await stop(process)
    summarize(report)
    print_report(report)
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
