"""acp2 interop test agent: ACP v2 on stdio, built on the official Python SDK.

    python v2_agent.py        (in the venv of requirements-v2.txt: agent-client-protocol
                               1.0.0rc3, whose acp.experimental.v2 speaks schema alpha.5)

A deterministic peer for acp2's tests, written from the SDK's documented API; it
behaves like ``../ts/agent.mjs`` (the scenario vocabulary of ``../README.md``): a prompt
is answered with ``{messageId}``, then the turn reports ``user_message``, ``running``,
the scenario's output and ``idle`` with a stop reason. Where alpha.5 cannot say what
the TS agent says, the SDK's models drop it: ``idle`` has no ``error`` object (``fail``),
commands have no ``type`` (``kinds``). The agent sends ``requires_action`` just before
its permission request, as acp2's agents do.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import Any

from acp.connection import StreamDirection, StreamEvent
from acp.exceptions import RequestError
from acp.experimental.v2 import PROTOCOL_VERSION, AgentSideConnection, run_agent, schema
from peer_common import log, prompt_text, split_scenario
from v2_scenarios import SCENARIOS, ids, scenario_echo

NAME = "py-v2-agent"
PROMPT_BLOCKS = {"text", "resource_link"}  # the only ones advertised (Nov D-10)


def dump(model: Any) -> dict[str, Any]:
    """A received SDK model as its wire JSON."""
    value: dict[str, Any] = model.model_dump(mode="json", by_alias=True, exclude_none=True)
    return value


@dataclass
class Turn:
    message_id: str
    prompt: list[dict[str, Any]]
    text: str
    answered: asyncio.Event = field(default_factory=asyncio.Event)
    finished: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None


@dataclass
class Session:
    session_id: str
    cwd: str
    additional_directories: list[str]
    updated_at: str
    title: str | None = None
    history: list[dict[str, Any]] = field(default_factory=list)  # replayed on resume
    turn: Turn | None = None
    held: list[asyncio.Future[None]] = field(default_factory=list)  # prompts queued
    prompts: int = 0

    def info(self) -> dict[str, Any]:
        found: dict[str, Any] = {"sessionId": self.session_id, "cwd": self.cwd}
        found["updatedAt"] = self.updated_at
        if self.additional_directories:
            found["additionalDirectories"] = self.additional_directories
        if self.title is not None:
            found["title"] = self.title
        return found


class TestAgent:
    """The SDK's ``Agent`` handlers: sessions in memory, one scenario per prompt."""

    def __init__(self) -> None:
        self.conn: AgentSideConnection | None = None
        self.sessions: dict[str, Session] = {}
        self.turns: dict[str, Turn] = {}  # by messageId, until its response is written

    def on_connect(self, conn: AgentSideConnection) -> None:
        self.conn = conn

    def observe(self, event: StreamEvent) -> None:
        """A turn starts once its ``{messageId}`` response is on the wire."""
        message = event.message
        result = message.get("result")
        if event.direction == StreamDirection.OUTGOING and isinstance(result, dict):
            turn = self.turns.pop(str(result.get("messageId")), None)
            if turn is not None:
                turn.answered.set()

    # ------------------------------------------------------------ lifecycle

    async def initialize(self, protocol_version: int, **_: Any) -> schema.InitializeResponse:
        return schema.InitializeResponse.model_validate(
            {
                "protocolVersion": PROTOCOL_VERSION,
                "info": {"name": "acp2-interop-py-agent", "version": "1.0.0rc3"},
                "capabilities": {"session": {"prompt": {}}},
                "_meta": {"acp2/test": {"extMethods": ["_acp2/echo"]}},
            }
        )

    async def new_session(
        self, cwd: str, additional_directories: list[str] | None = None, **_: Any
    ) -> schema.NewSessionResponse:
        session = Session(ids.next("sess"), cwd, additional_directories or [], ids.time())
        self.sessions[session.session_id] = session
        return schema.NewSessionResponse(session_id=session.session_id)

    async def list_sessions(self, cwd: str | None = None, **_: Any) -> schema.ListSessionsResponse:
        found = [s.info() for s in self.sessions.values() if cwd is None or s.cwd == cwd]
        return schema.ListSessionsResponse.model_validate({"sessions": found})

    async def resume_session(
        self, session_id: str, cwd: str, replay_from: Any = None, **_: Any
    ) -> schema.ResumeSessionResponse:
        session = self.session(session_id)
        if cwd != session.cwd:
            raise RequestError.invalid_params({"cwd": cwd, "details": "not the session's cwd"})
        if replay_from is not None and getattr(replay_from, "type", None) != "start":
            raise RequestError.invalid_params({"details": "unknown replayFrom"})
        if replay_from is not None:
            for update in session.history:
                await self.notify(session, update, record=False)
        # A state snapshot after the replay, before the response (D-14).
        state = "running" if session.turn else "idle"
        await self.notify(session, {"sessionUpdate": "state_update", "state": state})
        return schema.ResumeSessionResponse()

    async def close_session(self, session_id: str, **_: Any) -> schema.CloseSessionResponse:
        session = self.sessions.get(session_id)
        if session is not None:
            await self.stop_turn(session)
        return schema.CloseSessionResponse()

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> schema.PromptResponse:
        session = self.session(session_id)
        blocks = [dump(block) for block in prompt]
        if not blocks:
            raise RequestError.invalid_params({"details": "empty prompt"})
        unsupported = [b["type"] for b in blocks if b.get("type") not in PROMPT_BLOCKS]
        if unsupported:
            raise RequestError.invalid_params({"type": unsupported[0]})
        if session.turn is not None:  # held until the running turn ends
            held = asyncio.get_running_loop().create_future()
            session.held.append(held)
            await held
        turn = self.start_turn(session, blocks)
        return schema.PromptResponse(message_id=turn.message_id)

    async def cancel_session(self, session_id: str, **_: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            await self.stop_turn(session)

    async def handle_extension_request(self, method: str, params: Any) -> Any:
        if method == "_acp2/echo":
            return {"echoed": params}
        raise RequestError.method_not_found(method)

    async def handle_extension_notification(self, method: str, params: Any) -> None:
        log(NAME, "extension notification", method)

    # ------------------------------------------------------------ turns

    def session(self, session_id: str) -> Session:
        found = self.sessions.get(session_id)
        if found is None:
            raise RequestError.resource_not_found(session_id)
        return found

    async def notify(
        self, session: Session, update: dict[str, Any], *, record: bool = True
    ) -> None:
        if record and update["sessionUpdate"] != "state_update":
            session.history.append(update)
        assert self.conn is not None
        await self.conn.session_update(session_id=session.session_id, update=update)

    def start_turn(self, session: Session, blocks: list[dict[str, Any]]) -> Turn:
        turn = Turn(ids.next("msg_user"), blocks, prompt_text(blocks))
        session.turn = turn
        session.prompts += 1
        self.turns[turn.message_id] = turn
        turn.task = asyncio.create_task(self.run_turn(session, turn))
        return turn

    async def run_turn(self, session: Session, turn: Turn) -> None:
        try:
            await turn.answered.wait()
            stop = await self.turn_body(session, turn)
        except asyncio.CancelledError:
            stop = {"stopReason": "cancelled"}
        except Exception as exc:  # reported to the client as the stop reason
            log(NAME, "turn failed:", repr(exc))
            stop = {"stopReason": "error"}
        session.turn = None
        with contextlib.suppress(Exception):  # the connection may be gone
            await self.notify(session, {"sessionUpdate": "state_update", "state": "idle", **stop})
        turn.finished.set()
        if session.held:
            session.held.pop(0).set_result(None)

    async def turn_body(self, session: Session, turn: Turn) -> dict[str, Any]:
        await self.notify(
            session,
            {"sessionUpdate": "user_message", "messageId": turn.message_id, "content": turn.prompt},
        )
        if session.prompts == 1:
            session.title = turn.text[:40] or "untitled"
            session.updated_at = ids.time()
            update = {"sessionUpdate": "session_info_update", "title": session.title}
            await self.notify(session, {**update, "updatedAt": session.updated_at})
        await self.notify(session, {"sessionUpdate": "state_update", "state": "running"})
        word, rest = split_scenario(turn.text)
        scenario = SCENARIOS.get(word)
        if scenario is None:
            return await scenario_echo(self, session, turn.text)
        return await scenario(self, session, rest)

    async def stop_turn(self, session: Session) -> None:
        for held in session.held:
            if not held.done():
                held.set_exception(RequestError.request_cancelled({"details": "prompt withdrawn"}))
        session.held.clear()
        turn = session.turn
        if turn is not None and turn.task is not None:
            turn.task.cancel()
            await turn.finished.wait()


async def main() -> None:
    agent = TestAgent()
    await run_agent(agent, observers=[agent.observe])


if __name__ == "__main__":
    asyncio.run(main())
