"""The vendored v1 schema, a validator per definition, and hand-written v1 examples."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator


@cache
def load_v1_schema() -> dict[str, Any]:
    """The vendored v1 schema (package data of acp2.compat.v1)."""
    text = resources.files("acp2.compat.v1").joinpath("schemas/acp-v1.json").read_text()
    schema: dict[str, Any] = json.loads(text)
    return schema


@cache
def load_v1_meta() -> dict[str, Any]:
    """The vendored v1 ``meta.json`` (method names by side)."""
    text = resources.files("acp2.compat.v1").joinpath("schemas/meta.json").read_text()
    meta: dict[str, Any] = json.loads(text)
    return meta


@cache
def _validator(name: str) -> Draft202012Validator:
    schema = load_v1_schema()
    root = {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": f"#/$defs/{name}"}
    return Draft202012Validator(root)


def v1_errors(value: Any, name: str) -> list[str]:
    """The validation errors of ``value`` against v1 ``#/$defs/<name>`` (empty when valid)."""
    return [e.message for e in _validator(name).iter_errors(value)]


_TEXT = {"type": "text", "text": "hi"}
_TOOL_FULL = {
    "toolCallId": "t1",
    "title": "Read a.py",
    "kind": "read",
    "status": "pending",
    "content": [
        {"type": "content", "content": _TEXT},
        {"type": "diff", "path": "/w/a.py", "oldText": None, "newText": "x = 1\n"},
        {"type": "terminal", "terminalId": "term-1"},
    ],
    "locations": [{"path": "/w/a.py", "line": 3}],
    "rawInput": {"path": "/w/a.py"},
}
_OPTION_SELECT = {
    "type": "select",
    "id": "model",
    "name": "Model",
    "category": "model",
    "currentValue": "fast",
    "options": [{"value": "fast", "name": "Fast"}, {"value": "deep", "name": "Deep"}],
}
_OPTION_GROUPED = {
    "type": "select",
    "id": "mode",
    "name": "Mode",
    "currentValue": "ask",
    "options": [{"group": "g", "name": "Group", "options": [{"value": "ask", "name": "Ask"}]}],
}
_OPTION_BOOL = {"type": "boolean", "id": "web", "name": "Web", "currentValue": True}

#: v1 ``session/update`` payloads, one per update kind (the ``update`` object).
UPDATES: dict[str, dict[str, Any]] = {
    "user_message_chunk": {"sessionUpdate": "user_message_chunk", "content": _TEXT},
    "agent_message_chunk": {
        "sessionUpdate": "agent_message_chunk",
        "content": _TEXT,
        "messageId": "m1",
    },
    "agent_thought_chunk": {"sessionUpdate": "agent_thought_chunk", "content": _TEXT},
    "tool_call": {"sessionUpdate": "tool_call", **_TOOL_FULL},
    "tool_call_update": {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "t1",
        "status": "completed",
        "title": None,
        "content": None,
        "rawOutput": {"ok": True},
    },
    "plan": {
        "sessionUpdate": "plan",
        "entries": [{"content": "Read", "priority": "high", "status": "in_progress"}],
    },
    "available_commands_update": {
        "sessionUpdate": "available_commands_update",
        "availableCommands": [
            {"name": "web", "description": "Search", "input": {"hint": "query"}},
            {"name": "plan", "description": "Plan"},
        ],
    },
    "current_mode_update": {"sessionUpdate": "current_mode_update", "currentModeId": "ask"},
    "config_option_update": {
        "sessionUpdate": "config_option_update",
        "configOptions": [_OPTION_SELECT, _OPTION_BOOL],
    },
    "session_info_update": {
        "sessionUpdate": "session_info_update",
        "title": "Fix bug",
        "updatedAt": None,
    },
    "usage_update": {
        "sessionUpdate": "usage_update",
        "used": 1200,
        "size": 200000,
        "cost": {"amount": 0.25, "currency": "USD"},
    },
}

_STDIO = {"name": "fs", "command": "mcp-fs", "args": ["--root", "/w"], "env": []}
_HTTP = {"type": "http", "name": "web", "url": "http://127.0.0.1:9/mcp", "headers": []}
_SSE = {"type": "sse", "name": "old", "url": "http://127.0.0.1:9/sse", "headers": []}
_PROMPT = [
    _TEXT,
    {"type": "image", "data": "aGk=", "mimeType": "image/png"},
    {"type": "audio", "data": "aGk=", "mimeType": "audio/wav"},
    {"type": "resource_link", "name": "a.py", "uri": "file:///w/a.py", "size": 10},
    {
        "type": "resource",
        "resource": {"uri": "file:///w/b.py", "text": "x", "mimeType": "text/x-python"},
        "annotations": {"audience": ["user"], "priority": 0.5},
    },
    {"type": "resource", "resource": {"uri": "file:///w/c.bin", "blob": "AAE="}},
]

#: ``(method, params, result)`` examples for every v1 method; result None = notification.
METHOD_EXAMPLES: list[tuple[str, dict[str, Any], dict[str, Any] | None]] = [
    (
        "initialize",
        {
            "protocolVersion": 1,
            "clientInfo": {"name": "zed", "version": "0"},
            "clientCapabilities": {
                "fs": {"readTextFile": True, "writeTextFile": True},
                "terminal": True,
                "session": {"configOptions": {"boolean": {}}},
                "auth": {"terminal": True},
                "elicitation": {"form": {}, "url": {}},
            },
        },
        {
            "protocolVersion": 1,
            "agentInfo": {"name": "acp2", "title": "acp2", "version": "0.1.0"},
            "agentCapabilities": {
                "loadSession": True,
                "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
                "mcpCapabilities": {"http": True, "sse": False},
                "sessionCapabilities": {"list": {}, "resume": {}, "close": {}, "delete": {}},
                "auth": {"logout": {}},
            },
            "authMethods": [
                {"id": "login", "name": "Log in", "description": None},
                {
                    "type": "terminal",
                    "id": "tty",
                    "name": "Terminal",
                    "args": ["--login"],
                    "env": {"A": "1"},
                },
            ],
        },
    ),
    ("authenticate", {"methodId": "login"}, {}),
    ("logout", {}, {}),
    (
        "session/new",
        {"cwd": "/w", "mcpServers": [_STDIO, _HTTP, _SSE], "additionalDirectories": ["/x"]},
        {
            "sessionId": "s1",
            "modes": {
                "currentModeId": "ask",
                "availableModes": [{"id": "ask", "name": "Ask", "description": None}],
            },
            "configOptions": [_OPTION_SELECT, _OPTION_GROUPED, _OPTION_BOOL],
        },
    ),
    ("session/load", {"sessionId": "s1", "cwd": "/w", "mcpServers": []}, {"modes": None}),
    (
        "session/list",
        {"cwd": "/w", "cursor": None},
        {
            "sessions": [{"sessionId": "s1", "cwd": "/w", "title": "T", "updatedAt": None}],
            "nextCursor": "c2",
        },
    ),
    ("session/resume", {"sessionId": "s1", "cwd": "/w"}, {"configOptions": None}),
    ("session/close", {"sessionId": "s1"}, {}),
    ("session/delete", {"sessionId": "s1"}, {}),
    ("session/set_mode", {"sessionId": "s1", "modeId": "code"}, {}),
    (
        "session/set_config_option",
        {"sessionId": "s1", "configId": "model", "value": "deep"},
        {"configOptions": [_OPTION_SELECT]},
    ),
    ("session/prompt", {"sessionId": "s1", "prompt": _PROMPT}, {"stopReason": "end_turn"}),
    ("session/cancel", {"sessionId": "s1"}, None),
    ("session/update", {"sessionId": "s1", "update": UPDATES["plan"]}, None),
    (
        "session/request_permission",
        {
            "sessionId": "s1",
            "toolCall": {"toolCallId": "t9", "title": "rm -rf build"},
            "options": [
                {"optionId": "y", "name": "Allow", "kind": "allow_once"},
                {"optionId": "n", "name": "Reject", "kind": "reject_always"},
            ],
        },
        {"outcome": {"outcome": "selected", "optionId": "y"}},
    ),
    (
        "fs/read_text_file",
        {"sessionId": "s1", "path": "/w/a.py", "line": 1, "limit": 20},
        {"content": "x = 1\n"},
    ),
    ("fs/write_text_file", {"sessionId": "s1", "path": "/w/a.py", "content": "y\n"}, {}),
    (
        "terminal/create",
        {
            "sessionId": "s1",
            "command": "make",
            "args": ["test"],
            "env": [{"name": "CI", "value": "1"}],
            "cwd": "/w",
            "outputByteLimit": 4096,
        },
        {"terminalId": "term-1"},
    ),
    (
        "terminal/output",
        {"sessionId": "s1", "terminalId": "term-1"},
        {"output": "ok\n", "truncated": False, "exitStatus": {"exitCode": 0, "signal": None}},
    ),
    (
        "terminal/wait_for_exit",
        {"sessionId": "s1", "terminalId": "term-1"},
        {"exitCode": None, "signal": "SIGTERM"},
    ),
    ("terminal/kill", {"sessionId": "s1", "terminalId": "term-1"}, {}),
    ("terminal/release", {"sessionId": "s1", "terminalId": "term-1"}, {}),
    (
        "elicitation/create",
        {
            "mode": "form",
            "message": "Name?",
            "sessionId": "s1",
            "requestedSchema": {
                "type": "object",
                "properties": {"name": {"type": "string", "enum": []}},
                "required": ["name"],
            },
        },
        {"action": "accept", "content": {"name": "Ada"}},
    ),
    ("elicitation/complete", {"elicitationId": "e1"}, None),
    ("$/cancel_request", {"requestId": 0}, None),
]
