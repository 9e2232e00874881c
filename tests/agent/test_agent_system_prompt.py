"""A client's system prompt (Preview, unstable; ``rfds/client-system-prompt``): advertised
and kept with the session by an agent with ``system_prompt=True``, checked before the
session exists, ignored by an agent without it."""

from __future__ import annotations

from typing import Any

import pytest
from agent_harness import CWD, agent_harness, make_agent

from acp2.agent import Turn
from acp2.agent.system_prompt import system_prompt_of
from acp2.errors import InvalidParams

pytestmark = pytest.mark.anyio


def _reporting(seen: list[Any], **config: Any) -> Any:
    agent = make_agent(**config)

    @agent.prompt
    async def handle(turn: Turn) -> str:
        seen.append(system_prompt_of(turn.session))
        return "end_turn"

    return agent


def _prompt(mode: str, text: str) -> dict[str, Any]:
    return {"mode": mode, "content": [{"type": "text", "text": text}]}


async def test_the_capability_names_append_and_override() -> None:
    async with agent_harness(make_agent(system_prompt=True)) as h:
        session = (await h.initialize())["capabilities"]["session"]
    assert session["systemPrompt"] == {"mode": {"override": {}}}


async def test_the_prompt_of_new_is_kept_and_a_resume_replaces_it() -> None:
    seen: list[Any] = []
    agent = _reporting(seen, system_prompt=True)
    async with agent_harness(agent, initialize=True, validate="agent") as h:
        sid = await h.new_session(systemPrompt=_prompt("override", "Be terse."))
        await h.turn(sid, "one")
        await h.call("session/close", {"sessionId": sid})
        params = {"sessionId": sid, "cwd": CWD, "systemPrompt": _prompt("append", "Use tabs.")}
        await h.call("session/resume", params)
        await h.turn(sid, "two")
    assert seen == [("override", "Be terse."), ("append", "Use tabs.")]


@pytest.mark.parametrize(
    "prompt",
    [
        _prompt("shout", "x"),
        {"mode": "append", "content": [{"type": "image", "data": "", "mimeType": "image/png"}]},
    ],
)
async def test_a_bad_prompt_is_refused_and_no_session_is_made(prompt: dict[str, Any]) -> None:
    async with agent_harness(
        make_agent(system_prompt=True), initialize=True, validate="agent"
    ) as h:
        with pytest.raises(InvalidParams):
            await h.new_session(systemPrompt=prompt)
        listed = await h.call("session/list", {})
    assert listed["sessions"] == []


async def test_an_agent_without_the_setting_ignores_the_field_and_advertises_nothing() -> None:
    seen: list[Any] = []
    async with agent_harness(_reporting(seen), validate="agent") as h:
        session = (await h.initialize())["capabilities"]["session"]
        sid = await h.new_session(systemPrompt=_prompt("override", "Be terse."))
        await h.turn(sid, "one")
    assert "systemPrompt" not in session
    assert seen == [None]
