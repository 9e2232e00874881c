"""A raw JSON-RPC client for driving the agent runtime in tests, recording every frame.

``async with agent_harness(agent) as h:`` serves ``agent`` on one end of a memory pair and
gives a :class:`Harness` on the other: an :class:`acp2.rpc.Connection` whose tap records
every frame either side writes, in wire order, as ``Frame(sender, message)``. Permission
requests are answered by ``h.permission`` (set it per test). On exit the whole
conversation is validated against both drafts (``tests/schema_validation.py``) and the
agent task must have ended (bounded).

``harness_over(transport)`` does the same for an already started agent (a subprocess).
Every wait is bounded by :data:`TIMEOUT`; waits block on "a frame arrived", never poll.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import msgspec

from acp2.agent import Agent, HistoryStore
from acp2.rpc import Connection
from acp2.schema import RequestPermissionRequest
from acp2.transport.base import Transport
from helpers.inprocess import serving
from helpers.timeouts import TIMEOUT
from schema_validation import Conversation

__all__ = [
    "CWD",
    "TIMEOUT",
    "Frame",
    "Harness",
    "agent_harness",
    "allow",
    "harness_over",
    "make_agent",
    "select",
    "text_of",
]

#: The working directory sessions are created in.
CWD = "/tmp/acp2-agent-tests"

PermissionPolicy = Callable[[RequestPermissionRequest], Awaitable[Any]]


@dataclass
class Frame:
    """One frame on the wire: who wrote it and the decoded message."""

    sender: str  # "agent" or "client"
    message: Any

    @property
    def method(self) -> str | None:
        """The method of a request or notification, else None."""
        return self.message.get("method") if isinstance(self.message, dict) else None

    @property
    def update(self) -> dict[str, Any] | None:
        """The ``update`` object of a ``session/update`` notification, else None."""
        if self.method == "session/update":
            update: dict[str, Any] = self.message["params"]["update"]
            return update
        return None

    @property
    def session_id(self) -> str | None:
        """``params.sessionId`` of a request or notification, if any."""
        params = self.message.get("params") if isinstance(self.message, dict) else None
        return params.get("sessionId") if isinstance(params, dict) else None

    @property
    def is_response(self) -> bool:
        """True for a response (result or error)."""
        return isinstance(self.message, dict) and "method" not in self.message

    def describe(self) -> str:
        """A short description for assertion messages."""
        update = self.update
        if update is not None:
            extra = update.get("state") or update.get("messageId") or ""
            return f"{self.sender}: update {update.get('sessionUpdate')} {extra}"
        if self.method is not None:
            return f"{self.sender}: {self.method} id={self.message.get('id')}"
        return f"{self.sender}: response id={self.message.get('id')}"


def make_agent(**config: Any) -> Agent:
    """An Agent with an in-memory store unless ``store`` is given."""
    config.setdefault("store", HistoryStore(":memory:"))
    return Agent(config.pop("name", "test-agent"), **config)


def select(option_id: str) -> PermissionPolicy:
    """A permission policy that selects ``option_id`` (offered or not)."""

    async def policy(request: RequestPermissionRequest) -> Any:
        return {"outcome": {"outcome": "selected", "optionId": option_id}}

    return policy


async def allow(request: RequestPermissionRequest) -> Any:
    """The default permission policy: pick the first allow option offered."""
    for option in request.options:
        if option.kind in ("allow_once", "allow_always"):
            return {"outcome": {"outcome": "selected", "optionId": option.option_id}}
    return {"outcome": {"outcome": "cancelled"}}


def text_of(update: dict[str, Any]) -> str:
    """The text of a message update or chunk."""
    content = update.get("content")
    blocks = content if isinstance(content, list) else [content] if content else []
    return "".join(b.get("text", "") for b in blocks if isinstance(b, dict))


class Harness:
    """The client end: requests, notifications, the recorded frames, bounded waits."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.frames: list[Frame] = []
        self._updates: dict[str | None, list[dict[str, Any]]] = {}
        self._idles: dict[str | None, list[dict[str, Any]]] = {}
        self.permission: PermissionPolicy = allow
        self.permission_requests: list[RequestPermissionRequest] = []
        self._changed = anyio.Event()
        self.validate = True
        connection.on_request(
            "session/request_permission", RequestPermissionRequest, self._on_permission
        )

    # -- recording -------------------------------------------------------------------

    def tap(self, direction: str, frame: bytes) -> None:
        """The Connection tap: record every frame (and index updates), wake waiters."""
        sender = "agent" if direction == "in" else "client"
        recorded = Frame(sender, json.loads(frame))
        self.frames.append(recorded)
        update = recorded.update
        if update is not None:
            sid = recorded.session_id
            self._updates.setdefault(None, []).append(update)
            self._updates.setdefault(sid, []).append(update)
            if update.get("sessionUpdate") == "state_update" and update.get("state") == "idle":
                self._idles.setdefault(None, []).append(update)
                self._idles.setdefault(sid, []).append(update)
        self._changed.set()
        self._changed = anyio.Event()

    async def _on_permission(self, request: RequestPermissionRequest) -> Any:
        self.permission_requests.append(request)
        self._changed.set()
        self._changed = anyio.Event()
        return await self.permission(request)

    def problems(self, senders: tuple[str, ...] = ("agent", "client")) -> list[str]:
        """Schema problems of the frames ``senders`` wrote, under both drafts."""
        found: list[str] = []
        for draft in ("aug", "nov"):
            conversation = Conversation(draft)
            for i, frame in enumerate(self.frames):
                check = frame.sender in senders
                problems = conversation.validate(frame.message, frame.sender, check=check)  # type: ignore[arg-type]
                found.extend(f"[{draft}] #{i} {problem}" for problem in problems)
        return found

    # -- waiting ---------------------------------------------------------------------

    async def wait_for(self, predicate: Callable[[], Any]) -> Any:
        """Wait (at most :data:`TIMEOUT`) until ``predicate()`` is truthy; return its value."""
        with anyio.fail_after(TIMEOUT):
            while not (value := predicate()):
                await self._changed.wait()
        return value

    def updates(self, session_id: str | None = None) -> list[dict[str, Any]]:
        """Every ``update`` the agent sent (for ``session_id`` if given), in order.

        The harness's own list, kept up to date: read it, do not change it.
        """
        return self._updates.get(session_id, [])

    def idles(self, session_id: str | None = None) -> list[dict[str, Any]]:
        """Every idle state update (for ``session_id`` if given); read-only, like updates."""
        return self._idles.get(session_id, [])

    async def wait_idle(self, session_id: str, count: int = 1) -> dict[str, Any]:
        """Wait until ``count`` idle updates arrived for the session; return the last."""
        await self.wait_for(lambda: len(self.idles(session_id)) >= count)
        return self.idles(session_id)[count - 1]

    def index(self, predicate: Callable[[Frame], Any], start: int = 0) -> int:
        """Index of the first frame from ``start`` matching ``predicate`` (-1 if none)."""
        for i in range(start, len(self.frames)):
            if predicate(self.frames[i]):
                return i
        return -1

    def response_index(self, request_id: Any, sender: str = "agent") -> int:
        """Index of ``sender``'s response to the other side's request ``request_id``."""
        return self.index(
            lambda f: f.sender == sender and f.is_response and f.message.get("id") == request_id
        )

    def requests(self, method: str, sender: str = "client") -> list[Frame]:
        """The requests of ``method`` that ``sender`` wrote, in order."""
        return [
            f
            for f in self.frames
            if f.sender == sender and f.method == method and "id" in f.message
        ]

    def request_id(self, method: str, nth: int = 0) -> Any:
        """The id of the client's ``nth`` request of ``method``."""
        return self.requests(method)[nth].message["id"]

    # -- calls -----------------------------------------------------------------------

    async def call(self, method: str, params: Any = None) -> Any:
        """Send a request; return the result as builtins (raises RequestError)."""
        with anyio.fail_after(TIMEOUT):
            raw = await self.connection.request(method, params, msgspec.Raw)
        return msgspec.json.decode(raw)

    async def notify(self, method: str, params: Any) -> None:
        """Send a notification."""
        await self.connection.notify(method, params)

    async def initialize(self, **params: Any) -> Any:
        """``initialize`` with protocol version 2 and client info (overridable)."""
        body = {"protocolVersion": 2, "info": {"name": "test-client", "version": "1"}}
        body.update(params)
        return await self.call("initialize", body)

    async def new_session(self, cwd: str = CWD, **params: Any) -> str:
        """``session/new``; return the session id."""
        result = await self.call("session/new", {"cwd": cwd, **params})
        session_id: str = result["sessionId"]
        return session_id

    async def start(self, cwd: str = CWD) -> str:
        """``initialize`` then ``session/new``; return the session id."""
        await self.initialize()
        return await self.new_session(cwd)

    async def prompt(self, session_id: str, prompt: str | Sequence[Any]) -> Any:
        """``session/prompt`` with a text (or the given blocks); return the response."""
        blocks = [{"type": "text", "text": prompt}] if isinstance(prompt, str) else list(prompt)
        return await self.call("session/prompt", {"sessionId": session_id, "prompt": blocks})

    async def turn(self, session_id: str, prompt: str | Sequence[Any]) -> dict[str, Any]:
        """Prompt and wait for the idle that ends this piece of work; return that idle."""
        before = len(self.idles(session_id))
        await self.prompt(session_id, prompt)
        return await self.wait_idle(session_id, before + 1)

    async def cancel(self, session_id: str) -> None:
        """``session/cancel``."""
        await self.notify("session/cancel", {"sessionId": session_id})


@asynccontextmanager
async def agent_harness(
    agent: Agent, *, validate: bool | str = True, initialize: bool = False
) -> AsyncIterator[Harness]:
    """Serve ``agent`` over a memory pair; yield the client :class:`Harness`.

    On exit the client closes its end; the agent must finish serving (bounded) and every
    recorded frame must be valid under both drafts -- only the agent's frames when
    ``validate="agent"`` (the test client breaks the rules on purpose), none if False.
    """
    async with serving(agent, wait=True) as agents, harness_over(agents.open()) as harness:
        if initialize:
            await harness.initialize()
        yield harness
    if validate and harness.validate:
        senders = ("agent",) if validate == "agent" else ("agent", "client")
        problems = harness.problems(senders)
        assert not problems, "invalid frames:\n" + "\n".join(problems[:20])


@asynccontextmanager
async def harness_over(transport: Transport) -> AsyncIterator[Harness]:
    """Yield a :class:`Harness` on ``transport`` (an agent already serving the other end)."""
    holder: list[Harness] = []
    connection = Connection(transport, name="agent", tap=lambda d, f: holder[0].tap(d, f))
    harness = Harness(connection)
    holder.append(harness)
    async with connection:
        yield harness
