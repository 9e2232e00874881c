"""elicitation/create answered by the client's elicitation policy (EL-01, EL-05, EL-11, EL-14)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from client_helpers import fake_agent, handshake, in_process

from acp2.agent import Agent, ElicitationContentError, ElicitationUnsupported, HistoryStore, Turn
from acp2.client import ElicitationRequest, accept_defaults, decline_all
from acp2.schema import ClientCapabilities, ElicitationCapabilities, ElicitationFormCapabilities
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "Ada"},
        "age": {"type": "integer", "minimum": 0},
    },
    "required": ["name"],
}


def _agent() -> Agent:
    """Says what became of one form elicitation (or of a URL one, for prompt ``url``)."""
    agent = Agent("elicit-agent", store=HistoryStore(":memory:"))

    @agent.prompt
    async def handle(turn: Turn) -> str:
        try:
            if turn.text == "url":
                result = await turn.elicit_url("Log in", url="https://example.com/login")
            else:
                result = await turn.elicit("Who are you?", schema=SCHEMA)
        except ElicitationUnsupported:
            await turn.say("unsupported")
            return "end_turn"
        except ElicitationContentError as exc:
            await turn.say(f"bad: {exc.problems[0]}")
            return "end_turn"
        await turn.say(f"{result.action} {result.content}")
        return "end_turn"

    return agent


async def _ask(prompt: str = "go", **connect: Any) -> str:
    with anyio.fail_after(TIMEOUT):
        async with in_process(_agent(), **connect) as client:
            session = await client.new_session()
            work = await session.prompt(prompt)
            assert await work.wait() == "end_turn"
            return work.text


async def test_el05_a_policy_answering_a_dict_accepts_the_form_with_that_content() -> None:
    seen: list[ElicitationRequest] = []

    async def policy(request: ElicitationRequest) -> Any:
        seen.append(request)
        return {**request.defaults(), "age": 36}

    assert await _ask(elicitation=policy) == "accept {'name': 'Ada', 'age': 36}"
    (request,) = seen
    assert (request.mode, request.message, request.url) == ("form", "Who are you?", None)
    assert request.schema is not None
    assert set(request.schema.properties) == {"name", "age"}
    assert request.session is not None


async def test_el01_without_a_policy_nothing_is_advertised_and_the_agent_falls_back() -> None:
    assert await _ask() == "unsupported"


async def test_el05_accept_defaults_prefills_the_declared_defaults() -> None:
    assert await _ask(elicitation=accept_defaults) == "accept {'name': 'Ada'}"


async def test_el09_decline_all_declines_and_so_does_a_failing_policy() -> None:
    assert await _ask(elicitation=decline_all) == "decline None"

    def broken(request: ElicitationRequest) -> Any:
        raise RuntimeError("the form crashed")

    assert await _ask(elicitation=broken) == "decline None"


async def test_el05_content_that_does_not_fit_is_caught_by_the_agent() -> None:
    text = await _ask(elicitation=lambda request: {"name": "Ada", "age": -1})
    assert text == "bad: `age` must be at least 0"


async def test_el10_a_url_elicitation_accepted_with_true_carries_no_content() -> None:
    seen: list[tuple[str | None, str | None]] = []

    def consent(request: ElicitationRequest) -> bool:
        seen.append((request.url, request.elicitation_id))
        return True

    assert await _ask("url", elicitation=consent) == "accept None"
    assert seen[0][0] == "https://example.com/login"
    assert seen[0][1]


async def test_el01_a_url_elicitation_needs_the_url_mode_advertised() -> None:
    only_form = ClientCapabilities(
        elicitation=ElicitationCapabilities(form=ElicitationFormCapabilities())
    )
    text = await _ask("url", elicitation=lambda r: True, capabilities=only_form)
    assert text == "unsupported"


async def test_el14_cancel_answers_the_pending_elicitation_cancel_and_stops_the_policy() -> None:
    asked = anyio.Event()
    stopped: list[str] = []

    async def wait_forever(request: ElicitationRequest) -> Any:
        asked.set()
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            stopped.append("policy cancelled")
            raise

    with anyio.fail_after(TIMEOUT):
        async with in_process(_agent(), elicitation=wait_forever) as client:
            session = await client.new_session()
            work = await session.prompt("go")
            await asked.wait()
            assert session.state.foreground == "requires_action"
            await session.cancel()
            assert await work.wait() == "cancelled"
    assert stopped == ["policy cancelled"]


async def _fake(policy: Any, sent: list[dict[str, Any]], **connect: Any) -> list[dict[str, Any]]:
    """Send each of ``sent`` as ``elicitation/create`` from a fake agent; return the answers."""
    ids: list[int] = []

    async def script(fake: Any, msg: dict[str, Any]) -> None:
        await handshake(fake, msg)

    with anyio.fail_after(TIMEOUT):
        async with fake_agent(script, elicitation=policy, **connect) as (client, fake):
            await client.new_session()
            for params in sent:
                ids.append(await fake.request("elicitation/create", params))
            await fake.send(
                {
                    "jsonrpc": "2.0",
                    "method": "elicitation/complete",
                    "params": {"elicitationId": "x"},
                }
            )
            await fake.wait_for(lambda: all(fake.answers_to(i) for i in ids))
            initialize = fake.received[0]["params"]
            answers = [fake.answers_to(i)[0] for i in ids]
    return [initialize, *answers]


FORM = {"mode": "form", "sessionId": "s1", "message": "m", "requestedSchema": SCHEMA}
URL = {"mode": "url", "sessionId": "s1", "message": "m", "elicitationId": "e1", "url": "https://x"}


async def test_el01_a_policy_makes_the_client_advertise_both_modes() -> None:
    initialize, answer = await _fake(accept_defaults, [FORM])
    assert initialize["capabilities"]["elicitation"] == {"form": {}, "url": {}}
    assert answer["result"] == {"action": "accept", "content": {"name": "Ada"}}


async def test_el01_without_a_policy_every_elicitation_is_refused_32602() -> None:
    initialize, form, url = await _fake(None, [FORM, URL])
    assert "elicitation" not in initialize["capabilities"]
    assert form["error"]["code"] == url["error"]["code"] == -32602


async def test_el13_an_unknown_mode_is_refused_32602_and_complete_is_ignored() -> None:
    odd = {"mode": "_voice", "sessionId": "s1", "message": "m"}
    _, answer, after = await _fake(accept_defaults, [odd, FORM])
    assert answer["error"]["code"] == -32602
    assert after["result"]["action"] == "accept"  # the unknown completion changed nothing


async def test_el14_an_elicitation_for_an_unknown_session_is_cancelled() -> None:
    _, answer = await _fake(accept_defaults, [{**FORM, "sessionId": "nope"}])
    assert answer["result"] == {"action": "cancel"}


async def test_el14_closing_the_connection_answers_a_pending_elicitation_cancel() -> None:
    asked = anyio.Event()

    async def wait_forever(request: ElicitationRequest) -> Any:
        asked.set()
        await anyio.sleep_forever()

    async def script(fake: Any, msg: dict[str, Any]) -> None:
        if not await handshake(fake, msg) and msg.get("method") == "session/close":
            await fake.respond(msg, {})

    with anyio.fail_after(TIMEOUT):
        async with fake_agent(script, elicitation=wait_forever) as (client, fake):
            session = await client.new_session()
            request_id = await fake.request("elicitation/create", FORM)
            await asked.wait()
            await session.close()
            answers = await fake.wait_for(lambda: fake.answers_to(request_id))
    assert [a["result"] for a in answers] == [{"action": "cancel"}]


async def test_el02_a_request_scoped_elicitation_reaches_the_policy_without_a_session() -> None:
    seen: list[Any] = []

    def policy(request: ElicitationRequest) -> Any:
        seen.append(request.session)
        return {"name": "Bo"}

    scoped = {"mode": "form", "requestId": 1, "message": "m", "requestedSchema": SCHEMA}
    _, answer = await _fake(policy, [scoped])
    assert seen == [None]
    assert answer["result"] == {"action": "accept", "content": {"name": "Bo"}}


async def test_el14_session_cancel_answers_a_pending_elicitation_cancel_itself() -> None:
    """The fake agent never withdraws the request: the client's cancel answers it."""
    asked = anyio.Event()

    async def wait_forever(request: ElicitationRequest) -> Any:
        asked.set()
        await anyio.sleep_forever()

    async def script(fake: Any, msg: dict[str, Any]) -> None:
        await handshake(fake, msg)

    with anyio.fail_after(TIMEOUT):
        async with fake_agent(script, elicitation=wait_forever) as (client, fake):
            session = await client.new_session()
            request_id = await fake.request("elicitation/create", FORM)
            await asked.wait()
            await session.cancel(wait=False)
            answers = await fake.wait_for(lambda: fake.answers_to(request_id))
            assert [m["method"] for m in fake.received if m.get("method")][-1] == "session/cancel"
    assert [a["result"] for a in answers] == [{"action": "cancel"}]
