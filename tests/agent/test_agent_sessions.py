"""session/new, session/list, session/close, session/delete and config options on the
agent runtime (SS-02..SS-05, SS-09, SS-18, SS-19, SS-22, SS-23, SS-26, CM-03, CO-09)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from agent_harness import CWD, agent_harness, make_agent

from acp2.agent import Turn
from acp2.errors import InvalidParams, RequestCancelled, RequestError, ResourceNotFound
from acp2.schema import (
    AvailableCommand,
    SessionConfigBoolean,
    SessionConfigSelect,
    SessionConfigSelectOption,
    SessionInfoUpdate,
    TextCommandInput,
)

pytestmark = pytest.mark.anyio

COMMANDS = [
    AvailableCommand(name="review", description="Review code", input=TextCommandInput(hint="x")),
    AvailableCommand(name="plan", description="Make a plan"),
]


# -- session/new ----------------------------------------------------------------------


async def test_ss03_two_new_sessions_get_distinct_ids() -> None:
    async with agent_harness(make_agent(), initialize=True) as h:
        first = await h.new_session()
        second = await h.new_session()
    assert first != second
    assert first.startswith("sess_")


async def test_ss02_mcp_servers_may_be_omitted() -> None:
    async with agent_harness(make_agent(), initialize=True) as h:
        result = await h.call("session/new", {"cwd": CWD})
    assert set(result) == {"sessionId"}


@pytest.mark.parametrize("cwd", ["proj", "./proj", "", "~/x"])
async def test_ss05_a_relative_cwd_is_invalid_params(cwd: str) -> None:
    async with agent_harness(make_agent(), initialize=True, validate="agent") as h:
        with pytest.raises(InvalidParams):
            await h.new_session(cwd)


async def test_ss05_relative_additional_directories_are_invalid_params() -> None:
    async with agent_harness(make_agent(), initialize=True, validate="agent") as h:
        with pytest.raises(InvalidParams):
            await h.new_session(additionalDirectories=["rel/dir"])


async def test_ss06_additional_directories_are_refused_when_not_advertised() -> None:
    agent = make_agent(additional_directories=False)
    async with agent_harness(agent, initialize=True) as h:
        with pytest.raises(InvalidParams):
            await h.new_session(additionalDirectories=["/tmp/other"])


@pytest.mark.parametrize(
    "server",
    [
        {"type": "stdio", "name": "fs", "command": "/usr/bin/mcp-fs", "args": [], "env": []},
        {"type": "http", "name": "web", "url": "https://example.com/mcp", "headers": []},
        {"type": "sse", "name": "old", "url": "https://example.com/sse", "headers": []},
    ],
)
async def test_ss09_an_unsupported_mcp_transport_is_invalid_params(server: Any) -> None:
    async with agent_harness(make_agent(), initialize=True, validate="agent") as h:
        with pytest.raises(InvalidParams) as info:
            await h.new_session(mcpServers=[server])
        assert info.value.code == -32602


async def test_ss09_supported_mcp_servers_are_accepted_and_given_to_the_session() -> None:
    agent = make_agent(mcp_stdio=True, mcp_http=True)
    seen: list[Any] = []

    async def on_start(session: Any) -> None:
        seen.append(session.mcp_servers)

    agent.on_session_start = on_start
    stdio = {"type": "stdio", "name": "fs", "command": "/usr/bin/mcp-fs", "args": [], "env": []}
    http = {"type": "http", "name": "web", "url": "https://example.com/mcp", "headers": []}
    async with agent_harness(agent, initialize=True) as h:
        await h.new_session(mcpServers=[stdio, http])
    assert [s.name for s in seen[0]] == ["fs", "web"]


async def test_ss09_a_relative_mcp_stdio_command_is_invalid_params() -> None:
    agent = make_agent(mcp_stdio=True)
    stdio = {"type": "stdio", "name": "fs", "command": "mcp-fs", "args": [], "env": []}
    async with agent_harness(agent, initialize=True, validate="agent") as h:
        with pytest.raises(InvalidParams):
            await h.new_session(mcpServers=[stdio])


async def test_d19_cm03_commands_are_announced_after_the_new_session_response() -> None:
    async with agent_harness(make_agent(commands=COMMANDS), initialize=True) as h:
        sid = await h.new_session()
        await h.wait_for(lambda: h.updates(sid))
        response = h.response_index(h.request_id("session/new"))
        announce = h.index(lambda f: f.update is not None and f.session_id == sid)
        result = h.frames[response].message["result"]
        update = h.frames[announce].update
    assert response < announce
    assert update is not None
    assert update["sessionUpdate"] == "available_commands_update"
    assert [c["type"] for c in update["availableCommands"]] == ["command", "command"]
    assert [c["name"] for c in update["availableCommands"]] == ["review", "plan"]
    assert result["availableCommands"] == update["availableCommands"]


async def test_d19_no_commands_update_is_sent_when_none_are_configured() -> None:
    async with agent_harness(make_agent(), initialize=True) as h:
        sid = await h.new_session()
        await h.call("session/list", {})  # a round trip: anything queued has arrived
        assert h.updates(sid) == []


# -- session/list ---------------------------------------------------------------------


async def test_ss18_list_with_no_sessions_returns_an_empty_list() -> None:
    async with agent_harness(make_agent(), initialize=True) as h:
        result = await h.call("session/list", {})
    assert result == {"sessions": []}


def _dirs(root: Path, *names: str) -> list[str]:
    """Create ``root/name`` for each name; return their absolute paths."""
    paths = [root / name for name in names]
    for path in paths:
        path.mkdir(parents=True, exist_ok=True)
    return [str(path) for path in paths]


async def test_ss18_list_reports_cwd_and_additional_directories(tmp_path: Path) -> None:
    p, q, r = _dirs(tmp_path, "p", "q", "r")
    async with agent_harness(make_agent(), initialize=True) as h:
        sid = await h.new_session(p, additionalDirectories=[q, r])
        (info,) = (await h.call("session/list", {}))["sessions"]
    assert info["sessionId"] == sid
    assert info["cwd"] == p
    assert info["additionalDirectories"] == [q, r]
    assert info["updatedAt"].endswith("Z")


async def test_ss18_the_cwd_filter_matches_that_exact_directory_only(tmp_path: Path) -> None:
    p, sub, other = _dirs(tmp_path, "p", "p/sub", "other")
    async with agent_harness(make_agent(), initialize=True) as h:
        top = await h.new_session(p)
        await h.new_session(sub)
        await h.new_session(other, additionalDirectories=[p])
        result = await h.call("session/list", {"cwd": p})
        nothing = await h.call("session/list", {"cwd": "/nowhere"})
    assert [s["sessionId"] for s in result["sessions"]] == [top]
    assert nothing == {"sessions": []}


async def test_ss18_a_relative_cwd_filter_is_invalid_params() -> None:
    async with agent_harness(make_agent(), initialize=True, validate="agent") as h:
        with pytest.raises(InvalidParams):
            await h.call("session/list", {"cwd": "p"})


async def _all_pages(h: Any, params: dict[str, Any]) -> tuple[list[str], int]:
    seen: list[str] = []
    pages = 0
    cursor = None
    while True:
        body = dict(params)
        if cursor is not None:
            body["cursor"] = cursor
        result = await h.call("session/list", body)
        pages += 1
        seen.extend(s["sessionId"] for s in result["sessions"])
        cursor = result.get("nextCursor")
        if cursor is None:
            return seen, pages


async def test_ss19_pagination_walks_more_than_50_sessions_with_cursors() -> None:
    async with agent_harness(make_agent(), initialize=True) as h:
        created = {await h.new_session() for _ in range(120)}
        first = await h.call("session/list", {})
        seen, pages = await _all_pages(h, {})
    assert len(first["sessions"]) == 50
    assert pages == 3
    assert len(seen) == len(set(seen)) == 120
    assert set(seen) == created


@pytest.mark.parametrize("page_size", [1, 7])
async def test_ss19_a_configured_page_size_pages_through_every_session_once(
    page_size: int, tmp_path: Path
) -> None:
    a, b = _dirs(tmp_path, "a", "b")
    agent = make_agent(list_page_size=page_size)
    async with agent_harness(agent, initialize=True) as h:
        created = {await h.new_session(a) for _ in range(15)}
        for _ in range(5):
            await h.new_session(b)
        seen, pages = await _all_pages(h, {"cwd": a})
    assert sorted(seen) == sorted(created)
    assert pages == -(-15 // page_size)


@pytest.mark.parametrize("cursor", ["garbage", "", "W10=", "bm90IGpzb24=", "é"])
async def test_ss19_an_invalid_cursor_is_invalid_params(cursor: str) -> None:
    async with agent_harness(make_agent(), initialize=True) as h:
        await h.new_session()
        with pytest.raises(InvalidParams) as info:
            await h.call("session/list", {"cursor": cursor})
    assert info.value.code == -32602


async def test_si01_a_title_sent_by_the_agent_shows_in_the_session_list() -> None:
    agent = make_agent()

    @agent.prompt
    async def handle(turn: Turn) -> str:
        await turn.send(SessionInfoUpdate(title=turn.text))
        return "end_turn"

    async with agent_harness(agent, initialize=True) as h:
        sid = await h.new_session()
        await h.turn(sid, "A title")
        (info,) = (await h.call("session/list", {}))["sessions"]
        assert info["title"] == "A title"
        await h.turn(sid, "Another")
        (info,) = (await h.call("session/list", {}))["sessions"]
    assert info["title"] == "Another"


# -- session/close ----------------------------------------------------------------------


def _streaming_agent() -> Any:
    agent = make_agent()

    @agent.prompt
    async def handle(turn: Turn) -> str:
        while True:
            await turn.say("x")
            await anyio.lowlevel.checkpoint()

    return agent


async def test_ss22_close_during_a_turn_sends_idle_cancelled_then_the_response_then_silence() -> (
    None
):
    async with agent_harness(_streaming_agent(), initialize=True) as h:
        sid = await h.new_session()
        await h.prompt(sid, "go")
        await h.wait_for(lambda: len(h.updates(sid)) > 5)
        assert await h.call("session/close", {"sessionId": sid}) == {}
        close = h.response_index(h.request_id("session/close"))
        idles = [
            i
            for i, f in enumerate(h.frames)
            if f.update is not None and f.session_id == sid and f.update.get("state") == "idle"
        ]
        # a round trip after the close: anything the agent still had queued has arrived
        await h.call("session/list", {})
        after = [f for f in h.frames[close + 1 :] if f.session_id == sid]
        with pytest.raises(ResourceNotFound):
            await h.prompt(sid, "more")
    assert len(idles) == 1
    assert h.frames[idles[0]].update["stopReason"] == "cancelled"  # type: ignore[index]
    assert idles[0] < close
    assert after == []


async def test_ss22_close_withdraws_a_held_prompt_with_32800() -> None:
    gate = anyio.Event()
    agent = make_agent()

    @agent.prompt
    async def handle(turn: Turn) -> str:
        await gate.wait()
        return "end_turn"

    async with agent_harness(agent, initialize=True) as h:
        sid = await h.new_session()
        await h.prompt(sid, "first")
        outcomes: list[Any] = []

        async def second() -> None:
            try:
                outcomes.append(await h.prompt(sid, "second"))
            except RequestCancelled as exc:
                outcomes.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(second)
            await h.wait_for(lambda: len(h.requests("session/prompt")) == 2)
            await h.call("session/list", {})  # the second prompt is held by now
            await h.call("session/close", {"sessionId": sid})
    assert isinstance(outcomes[0], RequestCancelled)
    assert outcomes[0].code == -32800
    users = [u for u in h.updates(sid) if u["sessionUpdate"] == "user_message"]
    assert len(users) == 1


async def test_ss22_closing_an_unknown_session_succeeds() -> None:
    async with agent_harness(make_agent(), initialize=True) as h:
        assert await h.call("session/close", {"sessionId": "sess_nope"}) == {}


async def test_ss22_closing_an_idle_session_sends_no_idle_and_it_stays_resumable() -> None:
    async with agent_harness(make_agent(), initialize=True) as h:
        sid = await h.new_session()
        await h.turn(sid, "hello")
        assert await h.call("session/close", {"sessionId": sid}) == {}
        assert await h.call("session/close", {"sessionId": sid}) == {}
        assert len(h.idles(sid)) == 1
        await h.call("session/resume", {"sessionId": sid, "cwd": CWD})
        await h.turn(sid, "again")


async def test_ss26_prompting_an_unknown_session_is_32002_with_the_session_id() -> None:
    async with agent_harness(make_agent(), initialize=True) as h:
        with pytest.raises(ResourceNotFound) as info:
            await h.prompt("sess_nope", "hi")
    assert info.value.code == -32002
    assert info.value.data == {"sessionId": "sess_nope"}


# -- session/delete ---------------------------------------------------------------------


async def test_ss23_deleting_twice_returns_empty_results_and_the_session_is_never_listed() -> None:
    async with agent_harness(make_agent(), initialize=True) as h:
        keep = await h.new_session()
        gone = await h.new_session()
        await h.turn(gone, "hello")
        assert await h.call("session/delete", {"sessionId": gone}) == {}
        assert await h.call("session/delete", {"sessionId": gone}) == {}
        assert await h.call("session/delete", {"sessionId": "sess_unknown"}) == {}
        listed = [s["sessionId"] for s in (await h.call("session/list", {}))["sessions"]]
        with pytest.raises(ResourceNotFound):
            await h.call("session/resume", {"sessionId": gone, "cwd": CWD})
        with pytest.raises(ResourceNotFound):
            await h.prompt(gone, "still there?")
    assert listed == [keep]


async def test_ss23_deleting_a_busy_session_ends_its_work_cancelled_first() -> None:
    async with agent_harness(_streaming_agent(), initialize=True) as h:
        sid = await h.new_session()
        await h.prompt(sid, "go")
        await h.wait_for(lambda: len(h.updates(sid)) > 3)
        assert await h.call("session/delete", {"sessionId": sid}) == {}
        assert [i["stopReason"] for i in h.idles(sid)] == ["cancelled"]
        assert (await h.call("session/list", {}))["sessions"] == []


# -- config options -------------------------------------------------------------------


def _config_agent() -> Any:
    def options(session: Any) -> list[Any]:
        return [
            SessionConfigSelect(
                config_id="model",
                name="Model",
                current_value="fast",
                options=[
                    SessionConfigSelectOption(value="fast", name="Fast"),
                    SessionConfigSelectOption(value="smart", name="Smart"),
                ],
            ),
            SessionConfigBoolean(config_id="verbose", name="Verbose", current_value=False),
        ]

    return make_agent(config_options=options)


async def test_co01_new_session_returns_the_config_options() -> None:
    async with agent_harness(_config_agent(), initialize=True) as h:
        result = await h.call("session/new", {"cwd": CWD})
    assert [o["configId"] for o in result["configOptions"]] == ["model", "verbose"]


async def test_co07_setting_an_option_returns_the_complete_current_list() -> None:
    async with agent_harness(_config_agent(), initialize=True) as h:
        sid = await h.new_session()
        params = {"sessionId": sid, "configId": "model", "type": "id", "value": "smart"}
        result = await h.call("session/set_config_option", params)
        flag = {"sessionId": sid, "configId": "verbose", "type": "boolean", "value": True}
        result2 = await h.call("session/set_config_option", flag)
    assert result["configOptions"][0]["currentValue"] == "smart"
    assert [o["currentValue"] for o in result2["configOptions"]] == ["smart", True]


@pytest.mark.parametrize(
    ("config_id", "kind", "value"),
    [("model", "id", "huge"), ("nope", "id", "fast"), ("verbose", "id", "fast")],
)
async def test_co09_an_invalid_change_is_invalid_params_and_changes_nothing(
    config_id: str, kind: str, value: Any
) -> None:
    async with agent_harness(_config_agent(), initialize=True) as h:
        sid = await h.new_session()
        params = {"sessionId": sid, "configId": config_id, "type": kind, "value": value}
        with pytest.raises(InvalidParams):
            await h.call("session/set_config_option", params)
        ok = {"sessionId": sid, "configId": "verbose", "type": "boolean", "value": False}
        result = await h.call("session/set_config_option", ok)
    assert result["configOptions"][0]["currentValue"] == "fast"


async def test_session_data_survives_a_resume_on_another_connection_and_not_a_delete() -> None:
    agent = make_agent()

    @agent.prompt
    async def handle(turn: Turn) -> str:
        count = turn.session.data.get("count", 0) + 1
        turn.session.data["count"] = count
        await turn.say(str(count))
        return "end_turn"

    async with agent_harness(agent, initialize=True) as h:
        sid = await h.new_session()
        await h.turn(sid, "x")
    async with agent_harness(agent, initialize=True) as h:
        await h.call("session/resume", {"sessionId": sid, "cwd": CWD})
        await h.turn(sid, "x")
        said = [
            u["content"]["text"]
            for u in h.updates(sid)
            if "content" in u and u["sessionUpdate"] == "agent_message_chunk"
        ]
        await h.call("session/delete", {"sessionId": sid})
    assert said == ["2"]
    assert agent.session_data(sid) == {}


async def test_a_failing_session_start_hook_leaves_no_session_behind() -> None:
    agent = make_agent()

    async def on_start(session: Any) -> None:
        raise RuntimeError("no MCP today")

    agent.on_session_start = on_start
    async with agent_harness(agent, initialize=True) as h:
        with pytest.raises(RequestError) as info:
            await h.new_session()
        listed = await h.call("session/list", {})
    assert info.value.code == -32603
    assert listed == {"sessions": []}


# -- session roots (issue 10, "Smaller") ----------------------------------------------------


@pytest.mark.parametrize(
    ("cwd", "words"),
    [("/tmp/acp2-agent-tests\x00x", "NUL"), ("/tmp/acp2-no-such-dir-here", "not an existing")],
)
async def test_ss05_a_cwd_with_nul_or_that_is_no_directory_is_invalid_params(
    cwd: str, words: str
) -> None:
    async with agent_harness(make_agent(), initialize=True) as h:
        with pytest.raises(InvalidParams) as refused:
            await h.call("session/new", {"cwd": cwd})
        assert words in refused.value.message
        assert await h.new_session()  # the connection goes on


async def test_co07_option_values_stay_out_of_the_authors_data_and_outlive_the_connection() -> None:
    agent = _config_agent()
    seen: list[Any] = []

    @agent.prompt
    async def handle(turn: Turn) -> str:
        seen.append((dict(turn.session.data), turn.session.config_options))
        return "end_turn"

    async with agent_harness(agent, initialize=True) as h:
        sid = await h.new_session()
        params = {"sessionId": sid, "configId": "model", "type": "id", "value": "smart"}
        await h.call("session/set_config_option", params)
        await h.turn(sid, "hi")
    async with agent_harness(agent, initialize=True) as h:
        result = await h.call("session/resume", {"sessionId": sid, "cwd": CWD})
    data, options = seen[0]
    assert data == {}
    assert [o.current_value for o in options] == ["smart", False]
    assert result["configOptions"][0]["currentValue"] == "smart"
