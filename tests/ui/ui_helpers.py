"""Helpers for the UI tests: session states built from wire updates, capture consoles,
and the test agent served in process for the chat loops."""

from __future__ import annotations

import base64
import io
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from rich.console import Console

from acp2.client import ClientConnection, PermissionPolicy
from acp2.schema import SessionUpdate
from acp2.schema.codec import decode
from acp2.state import SessionState, reduce
from helpers.inprocess import served

CWD = "/tmp/acp2-ui-tests"


def update(obj: dict[str, Any]) -> Any:
    """One ``session/update`` payload decoded from its JSON form."""
    return decode(json.dumps(obj).encode(), SessionUpdate)


def state_from(*updates: dict[str, Any]) -> SessionState:
    """A session state with ``updates`` (JSON objects) reduced into it, in order."""
    state = SessionState(session_id="sess_test")
    for obj in updates:
        reduce(state, update(obj))
    return state


def feed(state: SessionState, *updates: dict[str, Any]) -> SessionState:
    """Reduce more ``updates`` into ``state``; return it."""
    for obj in updates:
        reduce(state, update(obj))
    return state


def say(text: str, message_id: str = "agent_1", kind: str = "agent") -> dict[str, Any]:
    """An ``agent_message_chunk`` (or thought / user chunk with ``kind``)."""
    tag = {"agent": "agent_message_chunk", "thought": "agent_thought_chunk"}.get(
        kind, "user_message_chunk"
    )
    return {
        "sessionUpdate": tag,
        "messageId": message_id,
        "content": {"type": "text", "text": text},
    }


def tool(call_id: str, **fields: Any) -> dict[str, Any]:
    """A ``tool_call_update`` with camelCase ``fields``."""
    return {"sessionUpdate": "tool_call_update", "toolCallId": call_id, **fields}


def plan(*steps: tuple[str, str], plan_id: str = "plan") -> dict[str, Any]:
    """A ``plan_update`` of ``(content, status)`` steps."""
    entries = [{"content": c, "priority": "medium", "status": s} for c, s in steps]
    return {
        "sessionUpdate": "plan_update",
        "plan": {"type": "items", "planId": plan_id, "entries": entries},
    }


def terminal_output(terminal_id: str, data: bytes) -> dict[str, Any]:
    """A ``terminal_output_chunk`` carrying ``data``."""
    encoded = base64.b64encode(data).decode()
    return {"sessionUpdate": "terminal_output_chunk", "terminalId": terminal_id, "data": encoded}


PATCH = "diff --git /w/a.py /w/a.py\n--- /w/a.py\n+++ /w/a.py\n@@ -1 +1 @@\n-old = 1\n+new = 2\n"


def diff_content(patch: str = PATCH) -> dict[str, Any]:
    """A ``diff`` tool call content item modifying ``/w/a.py``."""
    return {
        "type": "diff",
        "changes": [{"operation": "modify", "path": "/w/a.py"}],
        "patch": {"format": "git_patch", "text": patch},
    }


def capture(width: int = 80, height: int = 24, *, color: bool = False) -> Console:
    """A recording console that draws like a terminal of ``width`` x ``height``."""
    return Console(
        file=io.StringIO(),
        width=width,
        height=height,
        force_terminal=True,
        color_system="standard" if color else None,
        record=True,
        legacy_windows=False,
    )


def text_of(console: Console) -> str:
    """Everything printed on ``console`` as plain text, trailing spaces removed."""
    return "\n".join(line.rstrip() for line in console.export_text(clear=False).splitlines())


def render(renderable: Any, width: int = 80) -> str:
    """``renderable`` printed on a fresh capture console, as plain text."""
    console = capture(width)
    console.print(renderable)
    return text_of(console)


@asynccontextmanager
async def served_test_agent(permissions: PermissionPolicy) -> AsyncIterator[ClientConnection]:
    """The test agent served in process; yields a connected client using ``permissions``."""
    from acp2.testing.scenarios import build_test_agent

    async with served(build_test_agent(), cwd=CWD, permissions=permissions) as client:
        yield client
