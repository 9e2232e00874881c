"""``acp2.agent.race.Question`` over real JSON-RPC connections: one question, several
answering peers, the first explicit answer wins."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
import pytest
from agent_harness import TIMEOUT

from acp2.agent.race import Question
from acp2.errors import ConnectionClosed, InvalidParams
from acp2.rpc import Connection
from acp2.schema import (
    CancelledPermissionOutcome,
    PermissionOption,
    RequestPermissionRequest,
    RequestPermissionResponse,
)
from acp2.schema.methods import SESSION_REQUEST_PERMISSION
from acp2.transport.memory import memory_pair

pytestmark = pytest.mark.anyio

REQUEST = RequestPermissionRequest(
    session_id="sess_1",
    title="Go?",
    options=[PermissionOption(option_id="yes", name="Yes", kind="allow_once")],
)
CANCELLED = RequestPermissionResponse(outcome=CancelledPermissionOutcome())


def _answer(option: str, *, implicit: bool = False) -> dict[str, Any]:
    answer: dict[str, Any] = {"outcome": {"outcome": "selected", "optionId": option}}
    if implicit:
        answer["_meta"] = {"acp2": {"implicit": True}}
    return answer


@asynccontextmanager
async def peers(*handlers: Any) -> AsyncIterator[tuple[list[Connection], list[str]]]:
    """One asking connection per handler; the order their answers were read in."""
    read: list[str] = []
    asking: list[Connection] = []
    async with AsyncExitStack() as stack:
        for n, handler in enumerate(handlers):
            ours, theirs = memory_pair()

            def tap(direction: str, frame: bytes, n: int = n) -> None:
                if direction == "in" and b'"result"' in frame:
                    read.append(f"peer{n}")

            conn = await stack.enter_async_context(Connection(ours, tap=tap))
            peer = await stack.enter_async_context(Connection(theirs))
            peer.on_request(SESSION_REQUEST_PERMISSION.name, RequestPermissionRequest, handler)
            asking.append(conn)
        with anyio.fail_after(TIMEOUT):
            yield asking, read


def _question() -> Question[RequestPermissionResponse]:
    return Question(SESSION_REQUEST_PERMISSION, REQUEST, CANCELLED, lambda c: True, lambda: False)


async def test_of_two_explicit_answers_read_in_one_go_the_first_read_wins() -> None:
    both = anyio.Event()
    arrived: list[int] = []

    def answering(option: str) -> Any:
        async def handler(request: Any) -> Any:
            arrived.append(1)
            if len(arrived) == 2:
                both.set()
            await both.wait()
            return _answer(option)

        return handler

    async with peers(answering("first"), answering("second")) as (asking, read):
        result = await _question().run(asking)
    winner = {"peer0": "first", "peer1": "second"}[read[0]]
    assert result.outcome.option_id == winner  # type: ignore[union-attr]


async def test_only_implicit_answers_give_the_first_of_them() -> None:
    async def implicit_yes(request: Any) -> Any:
        return _answer("yes", implicit=True)

    async with peers(implicit_yes, implicit_yes) as (asking, _):
        result = await _question().run(asking)
    assert result.meta == {"acp2": {"implicit": True}}


async def test_error_answers_are_raised_when_nobody_answered() -> None:
    async def refuse(request: Any) -> Any:
        raise InvalidParams("no")

    async with peers(refuse) as (asking, _):
        with pytest.raises(InvalidParams):
            await _question().run(asking)


async def test_nobody_to_ask_gives_the_fallback() -> None:
    assert await _question().run([]) is CANCELLED


async def test_a_closed_connection_is_no_answer_and_raises_only_when_nobody_is_left() -> None:
    ours, _ = memory_pair()
    async with Connection(ours) as conn:
        await conn.aclose()
        left = Question(
            SESSION_REQUEST_PERMISSION, REQUEST, CANCELLED, lambda c: True, lambda: True
        )
        with pytest.raises(ConnectionClosed):
            await left.run([conn])
        assert await _question().run([conn]) is CANCELLED
