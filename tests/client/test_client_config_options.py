"""``ClientSession.set_config_option`` (CO-*): what is sent, and the answer's option list."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from client_helpers import FakeAgent, fake_agent, handshake

from acp2.errors import LocalProtocolError
from acp2.schema import SessionConfigBoolean, SessionConfigSelect
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio


def _options(model: str, thinking: bool) -> list[dict[str, Any]]:
    choices = [{"value": "opus", "name": "Opus"}, {"value": "haiku", "name": "Haiku"}]
    select = {"type": "select", "configId": "model", "name": "Model", "currentValue": model}
    flag = {"type": "boolean", "configId": "think", "name": "Think", "currentValue": thinking}
    return [{**select, "options": choices}, flag]


async def _config_agent(fake: FakeAgent, msg: dict[str, Any]) -> None:
    if await handshake(fake, msg) or msg.get("method") != "session/set_config_option":
        return
    params = msg["params"]
    model = params["value"] if params["configId"] == "model" else "opus"
    thinking = params["value"] if params["configId"] == "think" else False
    await fake.respond(msg, {"configOptions": _options(model, thinking)})


def _sent(fake: FakeAgent) -> list[dict[str, Any]]:
    return [m["params"] for m in fake.received if m.get("method") == "session/set_config_option"]


async def test_a_string_value_is_sent_as_an_id_and_the_answer_replaces_the_options() -> None:
    with anyio.fail_after(TIMEOUT):
        async with fake_agent(_config_agent) as (client, fake):
            session = await client.new_session()
            await session.set_config_option("model", "haiku")
            assert _sent(fake) == [
                {"sessionId": "s1", "configId": "model", "type": "id", "value": "haiku"}
            ]
            select, flag = session.state.config_options
            assert isinstance(select, SessionConfigSelect)
            assert select.current_value == "haiku"
            assert isinstance(flag, SessionConfigBoolean)
            assert flag.current_value is False


async def test_a_bool_value_is_sent_as_a_boolean() -> None:
    with anyio.fail_after(TIMEOUT):
        async with fake_agent(_config_agent) as (client, fake):
            session = await client.new_session()
            await session.set_config_option("think", True)
            assert _sent(fake)[0]["type"] == "boolean"
            assert _sent(fake)[0]["value"] is True
            flag = session.state.config_options[1]
            assert isinstance(flag, SessionConfigBoolean)
            assert flag.current_value is True


async def test_a_closed_session_refuses_locally() -> None:
    with anyio.fail_after(TIMEOUT):
        async with fake_agent(_config_agent) as (client, fake):
            session = await client.new_session()
            session.closed = True  # as close() leaves it, without the close round trip
            with pytest.raises(LocalProtocolError):
                await session.set_config_option("model", "haiku")
            assert _sent(fake) == []
