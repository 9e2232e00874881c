"""acp2 interop test client: ACP v2, built on the official Python SDK (1.0.0rc3,
``acp.experimental.v2``). It spawns an agent, runs one scenario and prints ONE JSON
report line on stdout, with the scenarios and the report of ``../ts/client.mjs``:

    python v2_client.py --scenario NAME [--cwd DIR] [--count N] [--prompt TEXT]
                        [--timeout SECONDS] -- AGENT_ARGV...

``events`` is the wire-order timeline (lines as written to the agent, messages as the
SDK read them); ``sdkUpdates`` is what the SDK's ``session_update`` handler received,
dumped back to JSON from the SDK's models (so a field alpha.5 does not model is
missing there: that is what the SDK hands its user). A permission request withdrawn
with ``$/cancel_request`` is answered ``cancelled`` by this client's handler (the SDK
cancels the handler; the handler chooses the answer).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from acp.connection import StreamDirection, StreamEvent
from acp.exceptions import RequestError
from acp.experimental.v2 import PROTOCOL_VERSION, ClientSideConnection, schema
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
    summarize,
)

NAME = "py-v2-client"
WANTED = {"tools-allow": "allow_once", "tools-reject": "reject_once"}


def dump(model: Any) -> Any:
    """An SDK model as JSON, with only the fields that were set (as received)."""
    return model.model_dump(mode="json", by_alias=True, exclude_unset=True)


class TestClient:
    """The SDK's ``Client`` handlers: records updates, answers permissions per scenario."""

    def __init__(self, scenario: str, report: dict[str, Any]) -> None:
        self.scenario = scenario
        self.report = report
        self.pending: list[asyncio.Future[str]] = []  # held permission answers

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.report["sdkUpdates"].append({"sessionId": session_id, "update": dump(update)})

    async def request_permission(
        self, options: list[Any], **params: Any
    ) -> schema.RequestPermissionResponse:
        seen = {"options": [dump(o) for o in options], "title": params.get("title")}
        outcome, via = await self.choose(options)
        self.report["permissions"].append({"params": seen, "outcome": outcome, "via": via})
        return schema.RequestPermissionResponse.model_validate({"outcome": outcome})

    async def choose(self, options: list[Any]) -> tuple[dict[str, Any], str]:
        wanted = WANTED.get(self.scenario)
        if wanted is not None:
            family = wanted.split("_")[0]
            chosen = [o for o in options if o.kind == wanted] or [
                o for o in options if str(o.kind).startswith(family)
            ]
            if chosen:
                return {"outcome": "selected", "optionId": chosen[0].option_id}, "policy"
            return {"outcome": "cancelled"}, "policy"
        if not self.scenario.startswith("cancel-permission"):
            return {"outcome": "cancelled"}, "unexpected"
        # Held until session/cancel settles it, or the agent withdraws the request
        # ($/cancel_request: the SDK cancels this handler).
        held: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self.pending.append(held)
        try:
            return {"outcome": "cancelled"}, await held
        except asyncio.CancelledError:
            return {"outcome": "cancelled"}, "$/cancel_request"

    def settle_pending(self) -> None:
        for held in self.pending:
            if not held.done():
                held.set_result("session/cancel")
        self.pending.clear()


class Run:
    """One scenario against one agent connection."""

    def __init__(
        self, conn: ClientSideConnection, recorder: Recorder, client: TestClient, args: Any
    ):
        self.conn = conn
        self.recorder = recorder
        self.client = client
        self.args = args
        self.report = client.report

    async def new_session(self) -> str:
        response = await self.conn.new_session(cwd=self.args.cwd, mcp_servers=[])
        return response.session_id

    async def prompt(self, session_id: str, value: str) -> int:
        start = len(self.recorder.events)
        block = schema.TextContentBlock(type="text", text=value)
        await self.conn.prompt(session_id=session_id, prompt=[block])
        return start

    async def until_idle(self, session_id: str, start: int) -> None:
        def idle(event: dict[str, Any]) -> bool:
            return (
                is_update(session_id, "state_update")(event) and event["update"]["state"] == "idle"
            )

        await self.recorder.wait_for(idle, f"idle on {session_id}", start)

    async def until_state(self, session_id: str, state: str, start: int) -> None:
        def match(event: dict[str, Any]) -> bool:
            return (
                is_update(session_id, "state_update")(event) and event["update"]["state"] == state
            )

        await self.recorder.wait_for(match, state, start)

    async def turn(self, session_id: str, value: str) -> None:
        await self.until_idle(session_id, await self.prompt(session_id, value))

    def prompt_of(self, fallback: str) -> str:
        self.report["extra"]["prompt"] = self.args.prompt or fallback
        return str(self.report["extra"]["prompt"])

    # ------------------------------------------------------------ scenarios

    async def echo(self, sid: str) -> None:
        await self.turn(sid, self.prompt_of("echo hello world"))

    async def stream(self, sid: str) -> None:
        self.report["extra"]["count"] = self.args.count
        await self.turn(sid, self.prompt_of(f"stream {self.args.count}"))

    async def tools(self, sid: str) -> None:
        await self.turn(sid, self.prompt_of("tools"))

    async def kinds(self, sid: str) -> None:
        await self.turn(sid, self.prompt_of("kinds"))

    async def fail(self, sid: str) -> None:
        await self.turn(sid, self.prompt_of("fail"))

    async def cancel(self, sid: str) -> None:
        await self.until_state(sid, "running", await self.prompt(sid, "wait"))
        start = len(self.recorder.events)
        await self.conn.cancel_session(session_id=sid)
        await self.until_idle(sid, start)

    async def cancel_permission(self, sid: str, wait_for_agent: bool) -> None:
        start = await self.prompt(sid, "tools")
        await self.recorder.wait_for(lambda e: e["type"] == "permission", "a permission", start)
        start = len(self.recorder.events)
        await self.conn.cancel_session(session_id=sid)
        if not wait_for_agent:  # every pending permission of the work answered cancelled
            self.client.settle_pending()
        await self.until_idle(sid, start)

    async def resume(self, sid: str) -> None:
        await self.turn(sid, "echo first")
        await self.conn.close_session(session_id=sid)
        start = len(self.recorder.events)
        await self.conn.resume_session(
            session_id=sid,
            cwd=self.args.cwd,
            mcp_servers=[],
            replay_from=schema.ReplayFromStartVariant(type="start"),
        )
        events = self.recorder.events[start:]
        request = next(i for i, e in enumerate(events) if e.get("method") == "session/resume")
        answer = next(
            i
            for i, e in enumerate(events)
            if e["type"] == "response" and e["id"] == events[request]["id"]
        )
        replayed = [e["update"] for e in events[request:answer] if is_update(sid)(e)]
        self.report["extra"]["replayed"] = replayed
        await self.turn(sid, "echo second")

    async def list(self, sid: str) -> None:
        other = await self.new_session()
        await self.turn(sid, "echo listed")
        extra = self.report["extra"]
        extra["otherSessionId"] = other
        extra["all"] = dump(await self.conn.list_sessions())
        extra["byCwd"] = dump(await self.conn.list_sessions(cwd=self.args.cwd))
        extra["otherCwd"] = dump(await self.conn.list_sessions(cwd="/nonexistent/acp2-interop"))

    async def close(self, sid: str) -> None:
        await self.until_state(sid, "running", await self.prompt(sid, "wait"))
        self.report["extra"]["closeResult"] = dump(await self.conn.close_session(session_id=sid))
        unknown = await self.conn.close_session(session_id="sess_unknown_acp2")
        self.report["extra"]["unknownCloseResult"] = dump(unknown)

    async def ext(self, sid: str) -> None:
        await self.turn(sid, "ext")
        try:
            echoed = await self.conn.send_extension_request("_acp2/echo", {"value": 42})
            self.report["extra"]["echo"] = echoed
        except RequestError as exc:  # an agent without it must answer -32601
            self.report["extra"]["echoError"] = {"code": exc.code, "message": str(exc)}
        await self.conn.send_extension_notification("_acp2/ping", {"sessionId": sid})

    async def run(self) -> None:
        info = schema.Implementation(name="acp2-interop-py-client", version="1.0.0rc3")
        response = await self.conn.initialize(protocol_version=PROTOCOL_VERSION, info=info)
        self.report["initialize"] = dump(response)
        sid = self.report["sessionId"] = await self.new_session()
        scenario = self.args.scenario
        if scenario.startswith("cancel-permission"):
            await self.cancel_permission(sid, scenario == "cancel-permission-wait")
        elif scenario.startswith("tools-"):
            await self.tools(sid)
        else:
            await getattr(self, scenario)(sid)


def observe(recorder: Recorder) -> Any:
    """A stream observer recording what the SDK reads (what it writes is recorded
    at the write, see ``record_writes``)."""

    def observer(event: StreamEvent) -> None:
        if event.direction == StreamDirection.INCOMING:
            recorder.incoming(event.message)

    return observer


async def main() -> int:
    args = client_arguments(__doc__.splitlines()[0])
    args.cwd = args.cwd or "."
    report = new_report(args)
    recorder = Recorder(args.timeout)
    report["events"] = recorder.events
    process = await spawn(args.agent)
    assert process.stdin is not None
    assert process.stdout is not None
    record_writes(process.stdin, recorder)
    client = TestClient(args.scenario, report)
    conn = ClientSideConnection(
        client, process.stdin, process.stdout, observers=[observe(recorder)]
    )
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
