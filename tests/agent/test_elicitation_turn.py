"""elicitation/create from the agent runtime: ``turn.elicit`` and ``turn.elicit_url`` (EL-*)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import msgspec
import pytest
from agent_harness import TIMEOUT, Harness, agent_harness, make_agent

from acp2.agent import (
    ElicitationContentError,
    ElicitationResult,
    ElicitationUnsupported,
    Turn,
)
from acp2.errors import InternalError, RemoteProtocolError, RequestCancelled

pytestmark = pytest.mark.anyio

BOTH = {"elicitation": {"form": {}, "url": {}}}
SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 2},
        "count": {"type": "integer", "minimum": 1},
        "color": {"type": "string", "enum": ["red", "blue"]},
    },
    "required": ["name"],
}
Answer = Callable[[Any], Awaitable[Any]]


def _form_agent(seen: list[Any], schema: Any = SCHEMA) -> Any:
    agent = make_agent()

    @agent.prompt
    async def handle(turn: Turn) -> str:
        try:
            seen.append(await turn.elicit("Who are you?", schema=schema))
        except (ElicitationContentError, ElicitationUnsupported) as exc:
            seen.append(exc)
        return "end_turn"

    return agent


def answering(result: Any) -> Answer:
    """A client handler that answers every elicitation with ``result``."""

    async def answer(params: Any) -> Any:
        if isinstance(result, BaseException):
            raise result
        return result

    return answer


async def _run(agent: Any, answer: Answer, capabilities: Any = BOTH, **kw: Any) -> Harness:
    async with agent_harness(agent, **kw) as h:
        h.connection.on_request("elicitation/create", msgspec.Raw, answer)
        await h.initialize(capabilities=capabilities)
        sid = await h.new_session()
        await h.turn(sid, "go")
    return h


def _states(h: Harness) -> list[str]:
    return [u["state"] for u in h.updates() if u["sessionUpdate"] == "state_update"]


async def test_el14_an_accepted_form_returns_its_content_requires_action_around_the_wait() -> None:
    seen: list[Any] = []
    content = {"name": "Ada", "count": 3, "color": "red"}
    h = await _run(_form_agent(seen), answering({"action": "accept", "content": content}))
    assert seen == [ElicitationResult("accept", content)]
    assert _states(h) == ["running", "requires_action", "running", "idle"]
    blocked = h.index(lambda f: f.update is not None and f.update.get("state") == "requires_action")
    asked = h.index(lambda f: f.method == "elicitation/create")
    answered = h.response_index(h.frames[asked].message["id"], sender="client")
    resumed = h.index(
        lambda f: f.update is not None and f.update.get("state") == "running", answered
    )
    assert blocked < asked < answered < resumed


async def test_el02_the_form_request_carries_mode_message_session_scope_and_schema() -> None:
    h = await _run(_form_agent([]), answering({"action": "decline"}))
    (request,) = h.requests("elicitation/create", sender="agent")
    params = request.message["params"]
    assert params["mode"] == "form"
    assert params["message"] == "Who are you?"
    assert params["sessionId"] == h.requests("session/prompt")[0].message["params"]["sessionId"]
    assert "requestId" not in params
    assert params["requestedSchema"]["properties"]["name"] == {"type": "string", "minLength": 2}


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_el09_decline_and_cancel_come_back_without_content(action: str) -> None:
    seen: list[Any] = []
    await _run(_form_agent(seen), answering({"action": action}))
    assert seen == [ElicitationResult(action)]  # type: ignore[arg-type]
    assert not seen[0].accepted


async def test_el08_an_unknown_action_is_handled_as_cancel() -> None:
    seen: list[Any] = []
    await _run(_form_agent(seen), answering({"action": "_later"}), validate="agent")
    assert seen == [ElicitationResult("cancel")]


async def test_el09_a_32800_answer_is_cancel() -> None:
    seen: list[Any] = []
    await _run(_form_agent(seen), answering(RequestCancelled()))
    assert seen == [ElicitationResult("cancel")]


async def test_el09_another_error_answer_reaches_the_handler() -> None:
    agent = make_agent()
    errors: list[Any] = []

    @agent.prompt
    async def handle(turn: Turn) -> str:
        try:
            await turn.elicit("Who?", schema=SCHEMA)
        except InternalError as exc:
            errors.append(exc.code)
        return "end_turn"

    await _run(agent, answering(InternalError("the UI crashed")))
    assert errors == [-32603]


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ({"count": 2}, "`name` is required"),
        ({"name": "A"}, "`name` needs at least 2 characters"),
        ({"name": "Ada", "count": 0}, "`count` must be at least 1"),
        ({"name": "Ada", "count": "3"}, "`count` must be an integer"),
        ({"name": "Ada", "color": "green"}, "`color` is not one of the offered choices"),
        ({"name": "Ada", "token": "x"}, "`token` is not a field of the form"),
        (None, "`name` is required"),
    ],
    ids=["missing", "short", "below-min", "wrong-type", "not-offered", "extra", "no-content"],
)
async def test_el05_accepted_content_that_does_not_fit_the_schema_is_a_clear_error(
    content: Any, problem: str
) -> None:
    seen: list[Any] = []
    answer = {"action": "accept"} if content is None else {"action": "accept", "content": content}
    await _run(_form_agent(seen), answering(answer), validate="agent")
    (error,) = seen
    assert isinstance(error, ElicitationContentError)
    assert problem in error.problems
    assert problem in str(error)


async def test_el14_accepted_content_for_a_custom_property_type_is_kept_as_sent() -> None:
    seen: list[Any] = []
    schema = {"type": "object", "properties": {"where": {"type": "_map"}}}
    content = {"where": {"lat": 1.5, "lon": 2}}
    answer = answering({"action": "accept", "content": content})
    # Object values in content are Nov's (custom types): Aug's schema rejects the answer.
    await _run(_form_agent(seen, schema), answer, validate="agent")
    assert seen == [ElicitationResult("accept", content)]


@pytest.mark.parametrize(
    "result",
    [{"action": "accept", "content": "Ada"}, {"content": {}}, "accept"],
    ids=["content-not-an-object", "no-action", "not-an-object"],
)
async def test_el08_a_malformed_answer_is_a_protocol_error_for_the_handler(result: Any) -> None:
    agent = make_agent()
    errors: list[Any] = []

    @agent.prompt
    async def handle(turn: Turn) -> str:
        try:
            await turn.elicit("Who?", schema=SCHEMA)
        except RemoteProtocolError as exc:
            errors.append(exc)
        return "end_turn"

    h = await _run(agent, answering(result), validate="agent")
    assert len(errors) == 1
    assert _states(h) == ["running", "requires_action", "running", "idle"]


@pytest.mark.parametrize(
    "capabilities",
    [{}, {"elicitation": None}, {"elicitation": {}}, {"elicitation": {"url": {}}}],
    ids=["absent", "null", "no-modes", "url-only"],
)
async def test_el01_form_mode_the_client_did_not_advertise_is_refused_locally(
    capabilities: Any,
) -> None:
    seen: list[Any] = []
    h = await _run(_form_agent(seen), answering({"action": "decline"}), capabilities)
    assert isinstance(seen[0], ElicitationUnsupported)
    assert h.requests("elicitation/create", sender="agent") == []
    assert _states(h) == ["running", "idle"]


def _url_agent(seen: list[Any], *, complete: bool = True) -> Any:
    agent = make_agent()

    @agent.prompt
    async def handle(turn: Turn) -> str:
        try:
            result = await turn.elicit_url("Log in to Example", url="https://example.com/login")
        except ElicitationUnsupported as exc:
            seen.append(exc)
            return "end_turn"
        seen.append(result)
        if result.accepted and complete and result.elicitation_id is not None:
            await turn.complete_elicitation(result.elicitation_id)
        return "end_turn"

    return agent


async def test_el11_an_accepted_url_elicitation_can_be_completed_with_its_id() -> None:
    seen: list[Any] = []
    h = await _run(_url_agent(seen), answering({"action": "accept"}))
    (request,) = h.requests("elicitation/create", sender="agent")
    params = request.message["params"]
    assert params["mode"] == "url"
    assert params["url"] == "https://example.com/login"
    (result,) = seen
    assert result.action == "accept"
    assert result.content is None
    assert result.elicitation_id == params["elicitationId"]
    completes = [f for f in h.frames if f.method == "elicitation/complete"]
    assert [f.message["params"] for f in completes] == [{"elicitationId": params["elicitationId"]}]
    assert _states(h) == ["running", "requires_action", "running", "idle"]


async def test_el01_url_mode_needs_the_url_capability() -> None:
    seen: list[Any] = []
    caps = {"elicitation": {"form": {}}}
    h = await _run(_url_agent(seen), answering({"action": "accept"}), caps)
    assert isinstance(seen[0], ElicitationUnsupported)
    assert h.requests("elicitation/create", sender="agent") == []


async def test_el11_elicitation_ids_are_fresh_per_request() -> None:
    agent = make_agent()
    ids: list[str | None] = []

    @agent.prompt
    async def handle(turn: Turn) -> str:
        for _ in range(2):
            ids.append((await turn.elicit_url("Open", url="https://example.com")).elicitation_id)
        return "end_turn"

    await _run(agent, answering({"action": "decline"}))
    assert len(set(ids)) == 2


async def test_el14_cancelling_the_work_withdraws_the_pending_elicitation() -> None:
    agent = make_agent()
    asked = anyio.Event()
    outcome: list[str] = []

    @agent.prompt
    async def handle(turn: Turn) -> str:
        try:
            await turn.elicit("Who?", schema=SCHEMA)
        except anyio.get_cancelled_exc_class():
            outcome.append("cancelled" if turn.cancelled else "?")
            raise
        return "end_turn"

    async def never(params: Any) -> Any:
        asked.set()
        await anyio.sleep_forever()

    async with agent_harness(agent) as h:
        h.connection.on_request("elicitation/create", msgspec.Raw, never)
        await h.initialize(capabilities=BOTH)
        sid = await h.new_session()
        await h.prompt(sid, "go")
        with anyio.fail_after(TIMEOUT):
            await asked.wait()
        await h.cancel(sid)
        idle = await h.wait_idle(sid)
    assert idle["stopReason"] == "cancelled"
    assert outcome == ["cancelled"]
    asked_id = h.requests("elicitation/create", sender="agent")[0].message["id"]
    withdrawn = [f for f in h.frames if f.method == "$/cancel_request" and f.sender == "agent"]
    assert [f.message["params"]["requestId"] for f in withdrawn] == [asked_id]
    assert _states(h)[:2] == ["running", "requires_action"]
    assert _states(h)[-1] == "idle"


async def test_elicit_refuses_a_schema_that_is_not_an_elicitation_form_schema() -> None:
    agent = make_agent()
    errors: list[Any] = []

    @agent.prompt
    async def handle(turn: Turn) -> str:
        try:
            await turn.elicit("Who?", schema={"type": "object", "properties": {"a": 3}})
        except TypeError as exc:
            errors.append(exc)
        return "end_turn"

    h = await _run(agent, answering({"action": "decline"}))
    assert len(errors) == 1
    assert h.requests("elicitation/create", sender="agent") == []
