"""initialize and auth on the agent runtime (IN-01..IN-17, AU-01..AU-09)."""

from __future__ import annotations

import pytest
from agent_harness import agent_harness, make_agent

from acp2.agent import AuthMethodSpec
from acp2.errors import AuthRequired, InvalidParams, InvalidRequest, MethodNotFound

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("requested", [2, 3, 65535])
async def test_in04_initialize_is_answered_with_protocol_version_2_whatever_was_requested(
    requested: int,
) -> None:
    async with agent_harness(make_agent()) as h:
        result = await h.initialize(protocolVersion=requested)
    assert result["protocolVersion"] == 2


async def test_in04_a_request_for_1_is_answered_1_in_v1_even_with_v2_keys() -> None:
    # A request for 1 is a v1 client whatever else it carries (the bridge peek has no
    # exception for v2-shaped ones); Aug and Nov both accept the answer 1 (D-05). The v1
    # answer is not a v2 frame, so the harness does not validate it against v2.
    async with agent_harness(make_agent(), validate=False) as h:
        result = await h.initialize(protocolVersion=1)
    assert result["protocolVersion"] == 1
    assert "agentCapabilities" in result
    assert "info" not in result


async def test_in03_initialize_result_carries_the_configured_info() -> None:
    agent = make_agent(name="my-agent", version="3.1", title="My Agent")
    async with agent_harness(agent) as h:
        result = await h.initialize()
    assert result["info"] == {"name": "my-agent", "version": "3.1", "title": "My Agent"}
    assert "authMethods" not in result


async def test_in03_info_has_no_title_when_none_is_configured() -> None:
    async with agent_harness(make_agent(name="plain", version="1")) as h:
        result = await h.initialize()
    assert result["info"] == {"name": "plain", "version": "1"}


async def test_in07_in09_capabilities_advertise_exactly_the_configured_features() -> None:
    agent = make_agent(
        prompt_image=True,
        prompt_audio=False,
        prompt_embedded_context=True,
        mcp_stdio=False,
        mcp_http=True,
        delete=True,
        additional_directories=False,
    )
    async with agent_harness(agent) as h:
        caps = (await h.initialize())["capabilities"]
    session = caps["session"]
    assert session["prompt"] == {"image": {}, "embeddedContext": {}}
    assert session["mcp"] == {"http": {}}
    assert session["delete"] == {}
    assert "additionalDirectories" not in session


async def test_in07_unconfigured_optional_features_are_omitted_not_false() -> None:
    agent = make_agent(
        prompt_embedded_context=False,
        delete=False,
        additional_directories=False,
        attach=False,
        fork=False,
        set_title=False,
        archive=False,
    )
    async with agent_harness(agent) as h:
        session = (await h.initialize())["capabilities"]["session"]
    # The in-memory store is a fact a client needs (no resume after exit), not a feature.
    assert session == {"prompt": {}, "mcp": {}, "_meta": {"acp2": {"store": "memory"}}}


async def test_in09_delete_is_not_served_when_not_advertised() -> None:
    async with agent_harness(make_agent(delete=False), initialize=True) as h:
        with pytest.raises(MethodNotFound):
            await h.call("session/delete", {"sessionId": "sess_x"})


async def test_in11_a_text_and_resource_link_prompt_is_accepted_without_extra_capabilities() -> (
    None
):
    agent = make_agent(prompt_embedded_context=False)
    async with agent_harness(agent) as h:
        sid = await h.start()
        blocks = [
            {"type": "text", "text": "look"},
            {"type": "resource_link", "uri": "file:///tmp/a.py", "name": "a.py"},
        ]
        idle = await h.turn(sid, blocks)
    assert idle["stopReason"] == "end_turn"


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("session/new", {"cwd": "/tmp"}),
        ("session/list", {}),
        ("session/prompt", {"sessionId": "s", "prompt": [{"type": "text", "text": "x"}]}),
        ("session/resume", {"sessionId": "s", "cwd": "/tmp"}),
        ("session/close", {"sessionId": "s"}),
    ],
)
async def test_in01_requests_before_initialize_are_rejected_with_32600(
    method: str, params: dict[str, object]
) -> None:
    async with agent_harness(make_agent()) as h:
        with pytest.raises(InvalidRequest) as info:
            await h.call(method, params)
        assert info.value.code == -32600
        # and initialize still works afterwards
        assert (await h.initialize())["protocolVersion"] == 2
        await h.new_session()


async def test_in17_a_repeated_initialize_is_accepted_and_the_session_methods_work() -> None:
    async with agent_harness(make_agent()) as h:
        await h.initialize()
        second = await h.initialize(info={"name": "other", "version": "2"})
        assert second["protocolVersion"] == 2
        await h.new_session()


async def test_in16_malformed_client_capabilities_are_treated_as_absent() -> None:
    async with agent_harness(make_agent(), validate="agent") as h:
        result = await h.initialize(capabilities={"auth": "yes", "elicitation": 5})
        assert result["protocolVersion"] == 2
        await h.new_session()


async def test_in02_initialize_without_info_is_invalid_params() -> None:
    async with agent_harness(make_agent(), validate="agent") as h:
        with pytest.raises(InvalidParams):
            await h.call("initialize", {"protocolVersion": 2})


# -- auth ---------------------------------------------------------------------------


def _auth_agent(logins: list[str]) -> object:
    async def login() -> None:
        logins.append("login")

    spec = AuthMethodSpec("agent-login", "Log in", login=login, description="via the agent")
    return make_agent(auth_methods=[spec])


async def test_au01_auth_methods_are_advertised_only_when_configured() -> None:
    async with agent_harness(_auth_agent([])) as h:  # type: ignore[arg-type]
        result = await h.initialize()
    assert result["authMethods"] == [
        {
            "type": "agent",
            "methodId": "agent-login",
            "name": "Log in",
            "description": "via the agent",
        }
    ]


async def test_au08_session_new_needs_login_then_works() -> None:
    logins: list[str] = []
    async with agent_harness(_auth_agent(logins), initialize=True) as h:  # type: ignore[arg-type]
        with pytest.raises(AuthRequired) as info:
            await h.new_session()
        assert info.value.code == -32000
        assert await h.call("auth/login", {"methodId": "agent-login"}) == {}
        assert logins == ["login"]
        await h.new_session()


async def test_au09_logout_gates_session_requests_again() -> None:
    async with agent_harness(_auth_agent([]), initialize=True) as h:  # type: ignore[arg-type]
        await h.call("auth/login", {"methodId": "agent-login"})
        await h.new_session()
        assert await h.call("auth/logout", {}) == {}
        with pytest.raises(AuthRequired):
            await h.new_session()
        with pytest.raises(AuthRequired):
            await h.call("session/list", {})


async def test_au04_login_with_an_unknown_method_is_invalid_params() -> None:
    async with agent_harness(_auth_agent([]), initialize=True) as h:  # type: ignore[arg-type]
        with pytest.raises(InvalidParams):
            await h.call("auth/login", {"methodId": "nope"})
        with pytest.raises(AuthRequired):
            await h.new_session()


@pytest.mark.parametrize("method", ["auth/login", "auth/logout"])
async def test_au01_without_auth_methods_auth_requests_are_method_not_found(method: str) -> None:
    async with agent_harness(make_agent(), initialize=True) as h:
        with pytest.raises(MethodNotFound) as info:
            await h.call(method, {"methodId": "x"} if method == "auth/login" else {})
        assert info.value.code == -32601
        await h.new_session()  # no auth needed


async def test_tr11_removed_v1_methods_and_unknown_extensions_are_method_not_found() -> None:
    async with agent_harness(make_agent(), initialize=True, validate="agent") as h:
        for method in ("session/load", "authenticate", "_unknown/ext"):
            with pytest.raises(MethodNotFound):
                await h.call(method, {})


async def test_ex04_extension_requests_and_notifications_reach_their_handlers() -> None:
    agent = make_agent()
    seen: list[object] = []

    @agent.ext_method("_test/echo")
    async def echo(params: object) -> object:
        return {"echo": True}

    @agent.ext_notification("_test/note")
    async def note(params: object) -> None:
        seen.append(params)

    async with agent_harness(agent, initialize=True) as h:
        await h.notify("_test/note", {"n": 1})
        assert await h.call("_test/echo", {"x": 1}) == {"echo": True}
    assert len(seen) == 1


def test_ext_method_names_must_start_with_an_underscore() -> None:
    agent = make_agent()
    with pytest.raises(ValueError, match="must start with '_'"):
        agent.ext_method("test/echo")
    with pytest.raises(ValueError, match="must start with '_'"):
        agent.ext_notification("note")
