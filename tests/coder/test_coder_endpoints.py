"""The coding agent's model provider over ACP (custom LLM endpoint RFD; Preview): an
editor lists it, routes it to its own OpenAI-compatible server with its own key, and
disables that routing. The key reaches the model server and nothing else: not the
SQLite history, not a log line, not ``providers/list``."""

from __future__ import annotations

import logging
from pathlib import Path

import anyio
import pytest
from coder_helpers import TIMEOUT
from fake_openai import serve, text_reply

from acp2.coder import build_coder_agent
from acp2.coder.providers.openai import OpenAIConfig, OpenAIModel
from acp2.errors import InvalidParams, LocalProtocolError
from acp2.store.sqlite import HistoryStore
from helpers.inprocess import served

pytestmark = pytest.mark.anyio

KEY = "sk-editor-secret-4f1c9a"


async def test_the_scripted_coder_lists_main_speaking_openai_with_no_endpoint_yet() -> None:
    async with served(build_coder_agent(store=":memory:"), cwd="/tmp") as client:
        assert client.agent_capabilities.providers is not None
        (main,) = await client.list_providers()
    assert (main.provider_id, main.supported, main.required) == ("main", ["openai"], False)
    assert main.current is None


async def test_a_client_set_endpoint_and_key_are_used_and_kept_out_of_history_and_logs(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    db = tmp_path / "history.db"
    with serve() as fake, anyio.fail_after(TIMEOUT):
        fake.add(text_reply("routed answer"))
        agent = build_coder_agent(store=HistoryStore(str(db)))
        async with served(agent, cwd=str(tmp_path)) as client:
            headers = {"Authorization": f"Bearer {KEY}", "X-Route": "ide"}
            await client.set_provider("main", fake.url, headers=headers)
            listed = await client.list_providers()
            session = await client.new_session(str(tmp_path))
            work = await session.prompt("hello")
            assert await work.wait() == "end_turn"
    assert session.state.agent_text() == "routed answer"
    assert fake.headers[0]["authorization"] == f"Bearer {KEY}"
    assert fake.headers[0]["x-route"] == "ide"
    current = listed[0].current
    assert current is not None
    assert (current.api_type, current.base_url) == ("openai", fake.url)
    assert KEY not in repr(listed)
    stored = b"".join(p.read_bytes() for p in sorted(tmp_path.glob("history.db*")))  # noqa: ASYNC240 - after the run
    assert b"routed" in stored  # the history was written ...
    assert KEY.encode() not in stored  # ... without the key
    logged = [r.getMessage() + repr(r.args) + str(r.exc_info) for r in caplog.records]
    assert logged  # debug logging was on
    assert not [line for line in logged if KEY in line]


async def test_the_agents_own_key_never_goes_to_a_client_chosen_endpoint(tmp_path: Path) -> None:
    own = OpenAIModel(OpenAIConfig(model="m", base_url="http://127.0.0.1:9/v1", api_key="sk-own"))
    with serve() as fake, anyio.fail_after(TIMEOUT):
        fake.add(text_reply("ok"))
        async with served(build_coder_agent(own, store=":memory:"), cwd=str(tmp_path)) as client:
            await client.set_provider("main", fake.url)  # no Authorization header
            session = await client.new_session(str(tmp_path))
            assert await (await session.prompt("hello")).wait() == "end_turn"
    assert "authorization" not in fake.headers[0]
    assert fake.requests[0]["model"] == "m"  # the model name is kept


async def test_disabling_goes_back_to_the_model_the_agent_started_with(tmp_path: Path) -> None:
    with serve() as fake, anyio.fail_after(TIMEOUT):
        async with served(build_coder_agent(store=":memory:"), cwd=str(tmp_path)) as client:
            await client.set_provider("main", fake.url)
            await client.disable_provider("main")
            (main,) = await client.list_providers()
            session = await client.new_session(str(tmp_path))
            assert await (await session.prompt("hello")).wait() == "end_turn"
    assert main.current is None
    assert fake.requests == []  # the scripted model answered


@pytest.mark.parametrize(
    ("provider_id", "base_url", "api_type"),
    [
        ("other", "http://127.0.0.1:9/v1", "openai"),
        ("main", "file:///etc/passwd", "openai"),
        ("main", "http://127.0.0.1:9/v1", "anthropic"),
    ],
)
async def test_a_bad_routing_is_refused_and_changes_nothing(
    provider_id: str, base_url: str, api_type: str
) -> None:
    async with served(build_coder_agent(store=":memory:"), cwd="/tmp") as client:
        with pytest.raises(InvalidParams):
            await client.set_provider(provider_id, base_url, api_type=api_type)
        (main,) = await client.list_providers()
    assert main.current is None


async def test_the_client_sends_no_providers_request_to_an_agent_without_the_capability() -> None:
    agent = build_coder_agent(store=":memory:")
    agent.providers = None
    async with served(agent, cwd="/tmp") as client:
        with pytest.raises(LocalProtocolError, match="providers"):
            await client.list_providers()
