"""Token counts on the idle that ends a piece of work (Preview ``usage``, unstable;
``rfds/end-turn-token-usage``): :meth:`Turn.tokens` sums, the runtime sends the sum."""

from __future__ import annotations

from typing import Any

import pytest
from agent_harness import agent_harness, make_agent

from acp2.agent import Turn

pytestmark = pytest.mark.anyio


def _counting_agent(*reports: dict[str, Any]) -> Any:
    agent = make_agent()

    @agent.prompt
    async def handle(turn: Turn) -> str:
        for report in reports:
            turn.tokens(**report)
        await turn.say("done")
        return "end_turn"

    return agent


async def test_the_idle_carries_the_sum_of_every_report_of_the_work() -> None:
    agent = _counting_agent(
        {"input_tokens": 100, "output_tokens": 7, "cached_read": 40},
        {"input_tokens": 120, "output_tokens": 3, "thought": 5},
    )
    async with agent_harness(agent, initialize=True) as h:
        sid = await h.new_session()
        idle = await h.turn(sid, "hi")
        assert h.problems() == []
    assert idle["stopReason"] == "end_turn"
    assert idle["usage"] == {
        "totalTokens": 230,
        "inputTokens": 220,
        "outputTokens": 10,
        "thoughtTokens": 5,
        "cachedReadTokens": 40,
    }


async def test_work_that_reports_no_tokens_sends_no_usage_key() -> None:
    async with agent_harness(_counting_agent(), initialize=True) as h:
        sid = await h.new_session()
        idle = await h.turn(sid, "hi")
    assert "usage" not in idle


async def test_each_piece_of_work_reports_only_its_own_tokens() -> None:
    agent = _counting_agent({"input_tokens": 10, "output_tokens": 1})
    async with agent_harness(agent, initialize=True) as h:
        sid = await h.new_session()
        await h.turn(sid, "one")
        second = await h.turn(sid, "two")
    assert second["usage"] == {"totalTokens": 11, "inputTokens": 10, "outputTokens": 1}


@pytest.mark.parametrize(
    ("report", "error"),
    [
        ({"input_tokens": -1, "output_tokens": 0}, ValueError),
        ({"input_tokens": 1.5, "output_tokens": 0}, TypeError),
        ({"input_tokens": 1, "output_tokens": 0, "cached_read": "3"}, TypeError),
    ],
)
async def test_a_bad_count_raises_and_the_turn_reports_nothing(
    report: dict[str, Any], error: type[Exception]
) -> None:
    agent = make_agent()
    raised: list[BaseException] = []

    @agent.prompt
    async def handle(turn: Turn) -> str:
        try:
            turn.tokens(**report)
        except Exception as exc:
            raised.append(exc)
        return "end_turn"

    async with agent_harness(agent, initialize=True) as h:
        sid = await h.new_session()
        idle = await h.turn(sid, "hi")
    assert [type(e) for e in raised] == [error]
    assert "usage" not in idle
