"""What ``acp2 run`` shows (acp2.ui.oneshot): JSON lines without raw controls, the reply
streamed as it grows, permission requests logged as JSON."""

from __future__ import annotations

import io
import json
from types import SimpleNamespace
from typing import Any, cast

import pytest
from ui_helpers import feed, say, state_from, update

from acp2.client import ClientSession, PermissionRequest
from acp2.schema import PermissionOption, RequestPermissionRequest
from acp2.schema.codec import decode
from acp2.ui.oneshot import PermissionLog, ReplyStream, json_line


def test_json_line_escapes_c1_bidi_and_separators_but_keeps_the_value() -> None:
    raw = json.dumps({"t": "a\x9b2J\u202eb\u2028c\x7f"}, ensure_ascii=False)
    line = json_line(raw.encode())
    assert line == '{"t": "a\\u009b2J\\u202eb\\u2028c\\u007f"}'
    assert json.loads(line) == json.loads(raw)


def test_the_reply_stream_writes_each_new_piece_sanitized() -> None:
    state = state_from()
    out = io.StringIO()
    stream = ReplyStream(lambda: state, out)
    for chunk in ("Hel", "lo\x1b]0;t\x07", " world"):
        obj = say(chunk)
        feed(state, obj)
        stream(update(obj), b"")
    assert out.getvalue() == "Hello world"
    stream.end()
    assert out.getvalue() == "Hello world\n"


def test_messages_are_separated_by_a_blank_line_and_thoughts_are_left_out() -> None:
    state = state_from()
    out = io.StringIO()
    stream = ReplyStream(lambda: state, out)
    for obj in (say("one"), say("hmm", "t_1", kind="thought"), say("two", "agent_2")):
        feed(state, obj)
        stream(update(obj), b"")
    assert out.getvalue() == "one\n\ntwo"


@pytest.mark.anyio
async def test_the_permission_log_writes_the_request_and_the_answer() -> None:
    params = decode(
        json.dumps({
            "sessionId": "s",
            "title": "Go\u202e?",
            "options": [{"optionId": "ok", "name": "OK", "kind": "allow_once"}],
        }).encode(),
        RequestPermissionRequest,
    )  # fmt: skip
    request = PermissionRequest(cast(ClientSession, SimpleNamespace(state=None)), params)
    lines: list[str] = []

    def policy(req: PermissionRequest) -> Any:
        return req.options[0]

    choice = await PermissionLog(policy, lines.append)(request)
    assert isinstance(choice, PermissionOption)
    assert "\u202e" not in lines[0]
    assert json.loads(lines[0])["permissionRequest"]["title"] == "Go\u202e?"
    assert json.loads(lines[1]) == {
        "permissionResponse": {"outcome": {"outcome": "selected", "optionId": "ok"}},
        "n": 1,
    }
