"""An acp2 client driving a v1 agent: v2 requests project to v1, v1 answers lift to v2."""

from __future__ import annotations

from collections import Counter
from typing import Any

import msgspec
import pytest
from v1_check import assert_v1, assert_v2
from v1_testdata import METHOD_EXAMPLES

import acp2.compat.v1.schema as v1
import acp2.schema as v2
from acp2.compat.v1 import client_side as c
from acp2.schema.codec import decode, encode, to_builtins


def _v1_result(method: str, tp: Any) -> Any:
    result = next(r for m, _, r in METHOD_EXAMPLES if m == method)
    return decode(encode(result), tp)


def test_session_new_always_sends_mcp_servers_with_args_and_env() -> None:
    dropped: Counter[str] = Counter()
    request = v2.NewSessionRequest(
        cwd="/w",
        mcp_servers=[
            v2.McpServerStdio(name="fs", command="/bin/mcp"),
            v2.McpServerHttp(name="web", url="http://x"),
            msgspec.Raw(b'{"type":"_ws","name":"w"}'),
        ],
    )
    out = assert_v1(c.new_session_request_to_v1(request, dropped), "NewSessionRequest")
    assert out["mcpServers"] == [
        {"name": "fs", "command": "/bin/mcp", "args": [], "env": []},
        {"name": "web", "type": "http", "url": "http://x", "headers": []},
    ]
    assert dropped["mcp_server.unknown"] == 1
    assert (
        assert_v1(
            c.new_session_request_to_v1(v2.NewSessionRequest(cwd="/w"), dropped),
            "NewSessionRequest",
        )["mcpServers"]
        == []
    )


def test_resume_with_replay_from_start_is_session_load_and_without_it_session_resume() -> None:
    load = c.resume_request_to_v1(
        v2.ResumeSessionRequest(session_id="s1", cwd="/w", replay_from=v2.ReplayFromStart()),
        Counter(),
    )
    assert assert_v1(load, "LoadSessionRequest") == {
        "sessionId": "s1",
        "cwd": "/w",
        "mcpServers": [],
    }
    resume = c.resume_request_to_v1(v2.ResumeSessionRequest(session_id="s1", cwd="/w"), Counter())
    assert isinstance(resume, v1.ResumeSessionRequest)
    assert_v1(resume, "ResumeSessionRequest")


def test_a_replay_cursor_v1_cannot_express_is_invalid_params() -> None:
    request = v2.ResumeSessionRequest(
        session_id="s1", cwd="/w", replay_from=msgspec.Raw(b'{"type":"_after","seq":3}')
    )
    with pytest.raises(c.InvalidParams) as info:
        c.resume_request_to_v1(request, Counter())
    assert info.value.code == -32602


def test_a_v1_permission_request_lifts_to_a_tool_call_subject_with_a_title() -> None:
    request = decode(
        encode(next(p for m, p, _ in METHOD_EXAMPLES if m == "session/request_permission")),
        v1.RequestPermissionRequest,
    )
    out = assert_v2(c.permission_request_from_v1(request), "RequestPermissionRequest")
    assert out["title"] == "rm -rf build"
    assert out["subject"] == {
        "type": "tool_call",
        "toolCall": {"toolCallId": "t9", "title": "rm -rf build"},
    }
    untitled = v1.RequestPermissionRequest(
        session_id="s1",
        tool_call=v1.ToolCallUpdate(tool_call_id="never-announced", title=None),
        options=request.options,
    )
    lifted = assert_v2(c.permission_request_from_v1(untitled), "RequestPermissionRequest")
    assert lifted["title"] == "Permission required"
    assert lifted["subject"]["toolCall"] == {"toolCallId": "never-announced"}


def test_a_v1_permission_request_keeps_every_field_of_its_tool_call() -> None:
    # Gemini CLI puts the proposed diff of a write only in the permission request.
    request = decode(
        encode(
            {
                "sessionId": "s1",
                "toolCall": {
                    "toolCallId": "w1",
                    "status": "pending",
                    "title": "Writing to new.txt",
                    "kind": "edit",
                    "content": [
                        {
                            "type": "diff",
                            "path": "/w/new.txt",
                            "oldText": "",
                            "newText": "hello\n",
                            "_meta": {"kind": "add"},
                        },
                        {"type": "content", "content": {"type": "text", "text": "why"}},
                        {"type": "terminal", "terminalId": "term-1"},
                    ],
                    "locations": [{"path": "/w/new.txt", "line": 3}],
                    "rawInput": {"file_path": "/w/new.txt"},
                    "rawOutput": {"ok": True},
                    "_meta": {"vendor": 1},
                },
                "options": [{"optionId": "y", "name": "Allow", "kind": "allow_once"}],
            }
        ),
        v1.RequestPermissionRequest,
    )
    out = assert_v2(c.permission_request_from_v1(request), "RequestPermissionRequest")
    call = out["subject"]["toolCall"]
    assert out["title"] == call["title"] == "Writing to new.txt"
    assert (call["toolCallId"], call["status"], call["kind"]) == ("w1", "pending", "edit")
    assert call["locations"] == [{"path": "/w/new.txt", "line": 3}]
    assert call["rawInput"] == {"file_path": "/w/new.txt"}
    assert call["rawOutput"] == {"ok": True}
    assert call["_meta"] == {"vendor": 1}
    diff, text, terminal = call["content"]
    assert diff["changes"] == [{"operation": "add", "path": "/w/new.txt", "fileType": "text"}]
    assert diff["patch"]["text"].splitlines()[1:3] == ["new file mode 100644", "--- /dev/null"]
    assert "+hello" in diff["patch"]["text"]
    assert text == {"type": "content", "content": {"type": "text", "text": "why"}}
    assert terminal == {"type": "terminal", "terminalId": "term-1"}


def test_null_fields_of_a_v1_permission_tool_call_are_left_out_not_cleared() -> None:
    call = v1.ToolCallUpdate(tool_call_id="t", content=None, locations=None, kind=None)
    request = v1.RequestPermissionRequest(session_id="s1", tool_call=call, options=[])
    lifted = to_builtins(c.permission_request_from_v1(request))
    assert lifted["subject"]["toolCall"] == {"toolCallId": "t"}


def test_a_v2_permission_answer_goes_back_as_v1_and_unknown_outcomes_are_cancelled() -> None:
    chosen = v2.RequestPermissionResponse(outcome=v2.SelectedPermissionOutcome(option_id="y"))
    assert assert_v1(c.permission_result_to_v1(chosen), "RequestPermissionResponse") == {
        "outcome": {"outcome": "selected", "optionId": "y"}
    }
    odd = v2.RequestPermissionResponse(outcome=msgspec.Raw(b'{"outcome":"_later"}'))
    assert assert_v1(c.permission_result_to_v1(odd), "RequestPermissionResponse") == {
        "outcome": {"outcome": "cancelled"}
    }


@pytest.mark.parametrize(
    ("method", "cls"),
    [
        ("fs/read_text_file", v1.ReadTextFileRequest),
        ("fs/write_text_file", v1.WriteTextFileRequest),
        ("terminal/create", v1.CreateTerminalRequest),
        ("terminal/output", v1.TerminalOutputRequest),
        ("terminal/wait_for_exit", v1.WaitForTerminalExitRequest),
        ("terminal/kill", v1.KillTerminalRequest),
        ("terminal/release", v1.ReleaseTerminalRequest),
    ],
)
def test_agent_file_and_terminal_requests_decode_to_v1_models(method: str, cls: type) -> None:
    params = next(p for m, p, _ in METHOD_EXAMPLES if m == method)
    assert isinstance(c.decode_agent_request(method, encode(params)), cls)


def test_malformed_agent_requests_are_invalid_params_and_other_methods_are_not_served() -> None:
    with pytest.raises(c.InvalidParams, match="fs/read_text_file"):
        c.decode_agent_request("fs/read_text_file", b'{"sessionId":"s1"}')
    with pytest.raises(c.InvalidParams):
        c.decode_agent_request("terminal/create", b"not json")
    with pytest.raises(KeyError):
        c.decode_agent_request("session/prompt", b"{}")
