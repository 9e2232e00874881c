"""The initialize handshake across versions, both directions, every frame validated."""

from __future__ import annotations

from collections import Counter
from typing import Any

from v1_check import assert_v1, assert_v2
from v1_testdata import METHOD_EXAMPLES

import acp2.compat.v1.schema as v1
import acp2.schema as v2
from acp2.compat.v1 import handshake as h
from acp2.schema.codec import decode, encode


def _example(method: str, which: int, tp: Any) -> Any:
    example = next(e for e in METHOD_EXAMPLES if e[0] == method)
    return decode(encode(example[which]), tp)


def test_a_zed_shaped_initialize_lifts_to_v2_with_a_synthesized_info_when_absent() -> None:
    dropped: Counter[str] = Counter()
    request = _example("initialize", 1, v1.InitializeRequest)
    lifted = h.initialize_request_from_v1(request, dropped)
    out = assert_v2(lifted, "InitializeRequest")
    assert out["info"] == {"name": "zed", "version": "0"}
    assert out["capabilities"] == {"auth": {"terminal": {}}, "elicitation": {"form": {}, "url": {}}}
    assert dropped == Counter({"initialize.fs": 1, "initialize.terminal": 1})
    bare = h.initialize_request_from_v1(v1.InitializeRequest(protocol_version=1), Counter())
    assert bare.info == h.UNKNOWN_IMPLEMENTATION


def test_boolean_config_options_are_wanted_only_when_advertised() -> None:
    assert h.wants_boolean_options(_example("initialize", 1, v1.InitializeRequest))
    assert not h.wants_boolean_options(v1.InitializeRequest(protocol_version=1))


def _v2_init_result() -> v2.InitializeResponse:
    return v2.InitializeResponse(
        protocol_version=2,
        info=v2.Implementation(name="acp2", version="0.1.0", title="acp2"),
        capabilities=v2.AgentCapabilities(
            session=v2.SessionCapabilities(
                prompt=v2.PromptCapabilities(image=v2.PromptImageCapabilities()),
                mcp=v2.McpCapabilities(
                    stdio=v2.McpStdioCapabilities(), http=v2.McpHttpCapabilities()
                ),
                delete=v2.SessionDeleteCapabilities(),
            )
        ),
        auth_methods=[
            v2.AuthMethodAgent(method_id="login", name="Log in"),
            v2.AuthMethodTerminal(
                method_id="tty",
                name="TTY",
                args=["--login"],
                env=[v2.EnvVariable(name="A", value="1")],
            ),
        ],
    )


def test_a_v2_initialize_result_is_answered_in_v1_shape() -> None:
    dropped: Counter[str] = Counter()
    result = h.initialize_result_to_v1(_v2_init_result(), terminal_auth=True, dropped=dropped)
    out = assert_v1(result, "InitializeResponse")
    assert out["protocolVersion"] == 1
    assert out["agentInfo"] == {"name": "acp2", "version": "0.1.0", "title": "acp2"}
    caps = out["agentCapabilities"]
    assert caps["loadSession"] is True
    assert caps["promptCapabilities"] == {"image": True, "audio": False, "embeddedContext": False}
    assert caps["mcpCapabilities"] == {"http": True, "sse": False}
    assert caps["sessionCapabilities"] == {"list": {}, "resume": {}, "close": {}, "delete": {}}
    assert caps["auth"] == {"logout": {}}
    assert out["authMethods"] == [
        {"id": "login", "name": "Log in"},
        {"id": "tty", "name": "TTY", "type": "terminal", "args": ["--login"], "env": {"A": "1"}},
    ]
    assert not dropped


def test_terminal_auth_methods_go_only_to_clients_that_can_run_them() -> None:
    dropped: Counter[str] = Counter()
    result = h.initialize_result_to_v1(_v2_init_result(), terminal_auth=False, dropped=dropped)
    assert [m.id for m in result.auth_methods or []] == ["login"]
    assert dropped["auth_method.terminal"] == 1


def test_an_agent_without_sessions_does_not_claim_load_session() -> None:
    bare = v2.InitializeResponse(protocol_version=2, info=v2.Implementation(name="a", version="1"))
    out = assert_v1(
        h.initialize_result_to_v1(bare, terminal_auth=False, dropped=Counter()),
        "InitializeResponse",
    )
    assert out["agentCapabilities"]["loadSession"] is False
    assert "authMethods" not in out or out["authMethods"] == []


def _init() -> v2.InitializeRequest:
    return v2.InitializeRequest(
        protocol_version=2,
        info=v2.Implementation(name="acp2", version="0.1"),
        capabilities=v2.ClientCapabilities(
            auth=v2.AuthCapabilities(terminal=v2.TerminalAuthCapabilities()),
            elicitation=v2.ElicitationCapabilities(form=v2.ElicitationFormCapabilities()),
        ),
    )


def test_initialize_asks_v1_and_advertises_files_and_terminals_only_when_enabled() -> None:
    plain = assert_v1(h.initialize_request_to_v1(_init()), "InitializeRequest")
    assert plain["protocolVersion"] == 1
    assert plain["clientInfo"] == {"name": "acp2", "version": "0.1"}
    caps = plain["clientCapabilities"]
    assert caps["fs"] == {"readTextFile": False, "writeTextFile": False}
    assert caps["terminal"] is False
    assert caps["auth"] == {"terminal": True}
    assert caps["session"] == {"configOptions": {"boolean": {}}}
    assert caps["elicitation"] == {"form": {}}
    enabled = h.initialize_request_to_v1(_init(), read_files=True, write_files=True, terminals=True)
    assert assert_v1(enabled, "InitializeRequest")["clientCapabilities"]["terminal"] is True


def test_a_v1_initialize_result_lifts_to_v2() -> None:
    lifted = h.initialize_result_from_v1(_example("initialize", 2, v1.InitializeResponse))
    out = assert_v2(lifted, "InitializeResponse")
    assert out["info"] == {"name": "acp2", "version": "0.1.0", "title": "acp2"}
    session = out["capabilities"]["session"]
    assert session["prompt"] == {"image": {}, "embeddedContext": {}}
    assert session["mcp"] == {"stdio": {}, "http": {}}
    assert session["delete"] == {}
    assert out["authMethods"] == [
        {"type": "agent", "methodId": "login", "name": "Log in", "description": None},
        {
            "type": "terminal",
            "methodId": "tty",
            "name": "Terminal",
            "args": ["--login"],
            "env": [{"name": "A", "value": "1"}],
        },
    ]


def test_a_bare_v1_initialize_result_gets_a_synthesized_info() -> None:
    lifted = h.initialize_result_from_v1(v1.InitializeResponse(protocol_version=1))
    assert assert_v2(lifted, "InitializeResponse")["info"] == {
        "name": "unknown",
        "version": "unknown",
    }


def _sessions(load: bool, **advertised: bool) -> v1.InitializeResponse:
    markers = {
        "list": v1.SessionListCapabilities(),
        "resume": v1.SessionResumeCapabilities(),
        "close": v1.SessionCloseCapabilities(),
    }
    extra = {name: markers[name] for name, on in advertised.items() if on}
    return v1.InitializeResponse(
        protocol_version=1,
        agent_info=v1.Implementation(name="agent-x", version="1"),
        agent_capabilities=v1.AgentCapabilities(
            load_session=load, session_capabilities=v1.SessionCapabilities(**extra)
        ),
    )


def test_a_v1_agent_with_every_session_method_gets_no_refusal_marker() -> None:
    lifted = h.initialize_result_from_v1(_sessions(True, list=True, resume=True, close=True))
    assert "_meta" not in assert_v2(lifted, "InitializeResponse")["capabilities"]["session"]


def test_a_bare_v1_agent_is_marked_refusing_list_and_resume_and_closing_locally() -> None:
    lifted = h.initialize_result_from_v1(_sessions(False))
    session = assert_v2(lifted, "InitializeResponse")["capabilities"]["session"]
    assert session["_meta"] == {
        "acp2": {
            "v1Sessions": {
                "refused": ["session/list", "session/resume"],
                "emulated": {"session/close": "local"},
            }
        }
    }


def test_v1_sessions_reads_each_capability_and_names_the_missing_one_in_refusals() -> None:
    found = h.v1_sessions(_sessions(True, list=True))
    assert (found.can_load, found.can_list, found.can_resume, found.can_close) == (
        True,
        True,
        False,
        False,
    )
    assert found.resumes
    assert found.refused() == []
    assert found.emulated() == {"session/resume": "load", "session/close": "local"}
    assert h.v1_sessions(_sessions(False)).refusal("session/list") == (
        "session/list is not available: the ACP v1 agent agent-x does not advertise "
        "sessionCapabilities.list"
    )
