"""Permission requests for people (acp2.ui.permission): shown, and answered from text."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any, cast

import pytest
from ui_helpers import diff_content, render, state_from, tool

from acp2.client import ClientSession, PermissionRequest
from acp2.schema import PermissionOption, RequestPermissionRequest
from acp2.schema.codec import decode
from acp2.state import SessionState, apply_permission_subject
from acp2.ui.blocks import permission_block
from acp2.ui.permission import (
    INVALID,
    choice_hint,
    choice_text,
    parse_choice,
    request_text,
)

OPTIONS = [
    {"optionId": "once", "name": "Allow", "kind": "allow_once"},
    {"optionId": "always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "no", "name": "Reject", "kind": "reject_once"},
]


def request(state: SessionState | None = None, **fields: Any) -> PermissionRequest:
    """A permission request on a stand-in session whose state is ``state``."""
    params = {"sessionId": "sess_test", "title": "Edit a.py?", "options": OPTIONS, **fields}
    decoded = decode(json.dumps(params).encode(), RequestPermissionRequest)
    state = state or SessionState()
    apply_permission_subject(state, decoded.subject)
    session = cast(ClientSession, SimpleNamespace(state=state))
    return PermissionRequest(session, decoded)


@pytest.mark.parametrize(
    ("answer", "option_id"),
    [
        ("1", "once"),
        (" 2 ", "always"),
        ("3", "no"),
        ("y", "once"),
        ("YES", "once"),
        ("a", "always"),
        ("n", "no"),
        ("no", "no"),
    ],
)
def test_an_answer_picks_an_option_by_number_or_letter(answer: str, option_id: str) -> None:
    choice = parse_choice(request(), answer)
    assert isinstance(choice, PermissionOption)
    assert choice.option_id == option_id


@pytest.mark.parametrize("answer", ["", "0", "4", "maybe", "-1"])
def test_anything_else_is_invalid(answer: str) -> None:
    assert parse_choice(request(), answer) == INVALID


def test_a_letter_for_a_kind_not_offered_is_invalid() -> None:
    only_allow = [{"optionId": "ok", "name": "OK", "kind": "allow_once"}]
    req = request(options=only_allow)
    assert parse_choice(req, "n") == INVALID
    assert choice_hint(req) == "y, 1"


def test_the_hint_lists_numbers_and_letters() -> None:
    assert choice_hint(request()) == "y/a/n, 1-3"


def test_the_panel_shows_title_description_tool_call_diff_and_numbered_options() -> None:
    subject = {
        "type": "tool_call",
        "toolCall": tool("call_1", title="Edit a.py", kind="edit", content=[diff_content()]),
    }
    subject["toolCall"].pop("sessionUpdate")
    req = request(state_from(), description="Fixes the bug", subject=subject)
    out = render(permission_block(req))
    for expected in (
        "permission requested",
        "Edit a.py?",
        "Fixes the bug",
        "✎ Edit a.py",
        "+new = 2",
        " y  Allow once",
        " a  Always allow",
        " n  Reject",
    ):
        assert expected in out
    assert all(len(line) <= 80 for line in out.splitlines())


def test_a_command_subject_shows_the_command_and_where_it_runs() -> None:
    subject = {"type": "command", "command": "rm -rf build", "cwd": "/w"}
    req = request(subject=subject)
    assert "$ rm -rf build  in /w" in render(permission_block(req))
    assert "  $ rm -rf build   (in /w)" in request_text(req).splitlines()


def test_the_plain_request_lists_the_options() -> None:
    lines = request_text(request(description="why")).splitlines()
    assert lines == [
        "[permission] Edit a.py?",
        "  why",
        "  [y] Allow once  [a] Always allow  [n] Reject",
    ]


def test_the_outcome_in_words() -> None:
    options = request().options
    assert choice_text(options[0]) == "allowed: Allow once"
    assert choice_text(options[2]) == "rejected: Reject"
    assert choice_text(None) == "declined"


def test_a_command_request_does_not_repeat_a_tool_call_that_only_restates_it() -> None:
    state = state_from(tool("call_1", title="make test", kind="execute"))
    subject = {"type": "command", "command": "make test", "cwd": "/w", "toolCallId": "call_1"}
    out = render(permission_block(request(state, subject=subject)))
    assert out.count("make test") == 1
