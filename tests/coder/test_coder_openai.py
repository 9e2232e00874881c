"""The OpenAI-compatible provider against a real HTTP/SSE server on 127.0.0.1."""

from __future__ import annotations

import json
import random

import anyio
import pytest
from fake_openai import Gate, Reply, chunk, serve, text_reply, tool_reply, usage_chunk

from acp2.coder.messages import (
    FINISH_LENGTH,
    FINISH_REFUSAL,
    FINISH_STOP,
    FINISH_TOOL_CALLS,
    Message,
    ModelRequest,
    ToolRequest,
    ToolSpec,
)
from acp2.coder.providers import ModelError
from acp2.coder.providers.openai import OpenAIConfig, OpenAIModel, _retry_after
from helpers import timeouts

pytestmark = pytest.mark.anyio

TOOL = ToolSpec("read_file", "Read a file.", {"type": "object", "properties": {}})
REQUEST = ModelRequest((Message("system", "be brief"), Message("user", "hi")), (TOOL,))


class Sink:
    """Records streamed deltas; ``first`` is set at the first text delta."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.thoughts: list[str] = []
        self.first = anyio.Event()

    async def text(self, delta: str) -> None:
        self.texts.append(delta)
        self.first.set()

    async def reasoning(self, delta: str) -> None:
        self.thoughts.append(delta)


def model(url: str, **options: object) -> OpenAIModel:
    config = OpenAIConfig(
        model="fake-model", base_url=url, api_key="sk-test", backoff=0.001, **options
    )  # type: ignore[arg-type]
    return OpenAIModel(config, rng=random.Random(7))


async def test_text_and_reasoning_stream_to_the_sink_before_the_reply_ends() -> None:
    gate = Gate()
    with serve() as fake, anyio.fail_after(timeouts.TIMEOUT):
        fake.add(
            Reply(
                events=[
                    chunk(reasoning="Let me think. "),
                    chunk("Hel"),
                    gate,
                    chunk("lo!", finish="stop"),
                    usage_chunk(12, 3),
                ]
            )
        )
        sink = Sink()
        async with anyio.create_task_group() as tg:
            results = []

            async def run() -> None:
                results.append(await model(fake.url).complete(REQUEST, sink))

            tg.start_soon(run)
            await sink.first.wait()
            assert sink.texts == ["Hel"]  # the server has not sent the rest yet
            gate.open()
    reply = results[0]
    assert (reply.text, reply.reasoning, reply.finish) == ("Hello!", "Let me think. ", FINISH_STOP)
    assert sink.thoughts == ["Let me think. "]
    assert reply.usage is not None
    assert reply.usage.used == 15


async def test_reasoning_is_read_from_the_reasoning_field_too() -> None:
    with serve() as fake, anyio.fail_after(timeouts.TIMEOUT):
        fake.add(Reply(events=[chunk(reasoning="hmm", reasoning_key="reasoning"), chunk("ok")]))
        reply = await model(fake.url).complete(REQUEST, Sink())
    assert (reply.reasoning, reply.text) == ("hmm", "ok")


async def test_tool_call_fragments_are_assembled_by_index_and_the_request_is_well_formed() -> None:
    with serve() as fake, anyio.fail_after(timeouts.TIMEOUT):
        fake.add(
            tool_reply(
                [
                    ("call_a", "read_file", {"path": "a.py"}),
                    ("call_b", "search", {"pattern": "def "}),
                ],
                text="Looking.",
            )
        )
        reply = await model(fake.url, max_tokens=99).complete(REQUEST, Sink())
    assert reply.finish == FINISH_TOOL_CALLS
    assert reply.tool_calls == (
        ToolRequest("call_a", "read_file", '{"path": "a.py"}'),
        ToolRequest("call_b", "search", '{"pattern": "def "}'),
    )
    body = fake.requests[0]
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["model"] == "fake-model"
    assert body["max_tokens"] == 99
    assert body["tools"][0]["function"]["name"] == "read_file"
    assert body["messages"][1] == {"role": "user", "content": "hi"}
    assert fake.headers[0]["authorization"] == "Bearer sk-test"


async def test_tool_results_are_sent_back_in_the_chat_completions_shape() -> None:
    call = ToolRequest("call_1", "read_file", '{"path": "x"}')
    request = ModelRequest(
        (
            Message("user", "hi"),
            Message("assistant", "", (call,)),
            Message("tool", "content of x", tool_call_id="call_1"),
        ),
    )
    with serve() as fake, anyio.fail_after(timeouts.TIMEOUT):
        fake.add(text_reply("done"))
        await model(fake.url).complete(request, Sink())
    messages = fake.requests[0]["messages"]
    assert messages[1]["tool_calls"][0] == {
        "id": "call_1",
        "type": "function",
        "function": {"name": "read_file", "arguments": '{"path": "x"}'},
    }
    assert messages[1]["content"] is None
    assert messages[2] == {"role": "tool", "tool_call_id": "call_1", "content": "content of x"}
    assert "tools" not in fake.requests[0]


@pytest.mark.parametrize(
    ("events", "finish"),
    [
        ([chunk("cut"), chunk(finish="length")], FINISH_LENGTH),
        ([chunk(finish="content_filter")], FINISH_REFUSAL),
        ([chunk(refusal="I can't help with that.")], FINISH_REFUSAL),
    ],
    ids=["length", "content_filter", "refusal_delta"],
)
async def test_finish_reasons_are_normalised(events: list[object], finish: str) -> None:
    with serve() as fake, anyio.fail_after(timeouts.TIMEOUT):
        fake.add(Reply(events=events))
        reply = await model(fake.url).complete(REQUEST, Sink())
    assert reply.finish == finish


async def test_a_429_is_retried_after_the_retry_after_delay_and_then_succeeds() -> None:
    with serve() as fake, anyio.fail_after(timeouts.TIMEOUT):
        fake.add(
            Reply(
                status=429, body={"error": {"message": "slow down"}}, headers={"Retry-After": "0"}
            ),
            text_reply("fine now"),
        )
        reply = await model(fake.url).complete(REQUEST, Sink())
    assert reply.text == "fine now"
    assert len(fake.requests) == 2


async def test_a_server_that_keeps_failing_gives_a_clear_error_after_the_retries() -> None:
    with serve() as fake, anyio.fail_after(timeouts.TIMEOUT):
        fake.add(*[Reply(status=500, body={"error": {"message": "boom"}})] * 5)
        with pytest.raises(ModelError) as caught:
            await model(fake.url, max_retries=2).complete(REQUEST, Sink())
    assert len(fake.requests) == 3
    assert "failed 3 times" in str(caught.value)
    assert "HTTP 500" in str(caught.value)
    assert "boom" in str(caught.value)


async def test_bad_credentials_fail_at_once_with_a_hint() -> None:
    with serve() as fake, anyio.fail_after(timeouts.TIMEOUT):
        fake.add(Reply(status=401, body={"error": {"message": "invalid api key"}}))
        with pytest.raises(ModelError) as caught:
            await model(fake.url).complete(REQUEST, Sink())
    assert len(fake.requests) == 1
    assert "invalid api key" in str(caught.value)
    assert "OPENAI_API_KEY" in str(caught.value)


async def test_an_error_chunk_in_the_stream_becomes_a_model_error() -> None:
    with serve() as fake, anyio.fail_after(timeouts.TIMEOUT):
        fake.add(Reply(events=[chunk("par"), {"error": {"message": "overloaded"}}]))
        with pytest.raises(ModelError, match="overloaded"):
            await model(fake.url).complete(REQUEST, Sink())


async def test_an_unreachable_server_is_retried_then_reported() -> None:
    with serve() as fake:
        url = fake.url  # the port is closed once the block ends
    with anyio.fail_after(timeouts.TIMEOUT), pytest.raises(ModelError, match="cannot reach"):
        await model(url, max_retries=1).complete(REQUEST, Sink())


async def test_cancelling_mid_stream_closes_the_http_connection() -> None:
    with serve() as fake, anyio.fail_after(timeouts.TIMEOUT):
        fake.add(Reply(events=[chunk("partial")], hold=True))
        sink = Sink()
        async with anyio.create_task_group() as tg:
            tg.start_soon(model(fake.url).complete, REQUEST, sink)
            await sink.first.wait()
            tg.cancel_scope.cancel()
        assert await anyio.to_thread.run_sync(fake.disconnected.wait, 5)


def test_retry_after_accepts_seconds_and_http_dates() -> None:
    assert _retry_after("2.5") == 2.5
    assert _retry_after("Wed, 21 Oct 2015 07:28:00 GMT") is not None
    assert _retry_after("soon") is None
    assert _retry_after(None) is None


def test_backoff_grows_is_jittered_is_capped_and_honours_retry_after() -> None:
    m = OpenAIModel(OpenAIConfig(backoff=1.0, backoff_cap=5.0), rng=random.Random(1))
    delays = [m._delay(attempt, None) for attempt in range(5)]
    assert 0.5 <= delays[0] <= 1.0
    assert 1.0 <= delays[1] <= 2.0
    assert all(d <= 5.0 for d in delays)
    assert m._delay(0, 3.0) == 3.0
    assert m._delay(0, 99.0) == 5.0


def test_configuration_comes_from_flags_then_the_environment() -> None:
    env = {
        "OPENAI_API_KEY": "k1",
        "ACP2_API_KEY": "k2",
        "OPENAI_BASE_URL": "http://h/v1",
        "OPENAI_MODEL": "m1",
    }
    config = OpenAIConfig.from_env(env=env)
    assert (config.api_key, config.base_url, config.model) == ("k1", "http://h/v1", "m1")
    assert OpenAIConfig.from_env(env={"ACP2_API_KEY": "k2"}).api_key == "k2"
    flags = OpenAIConfig.from_env(api_key="f", base_url="http://x/v1/", model="m", env=env)
    assert (flags.api_key, flags.model, flags.url) == ("f", "m", "http://x/v1/chat/completions")
    assert json.loads(json.dumps(OpenAIConfig.from_env(env={}).api_key)) is None
