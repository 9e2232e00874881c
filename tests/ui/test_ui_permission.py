"""Permission requests for people (acp2.client.permission_text): shown, and answered from text."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any, cast

import pytest
from ui_helpers import diff_content, render, state_from, tool

from acp2.client import ClientSession, PermissionRequest
from acp2.client.permission_text import (
    INVALID,
    asked,
    choice_hint,
    choice_text,
    parse_choice,
    request_text,
)
from acp2.schema import PermissionOption, RequestPermissionRequest
from acp2.schema.codec import decode
from acp2.state import SessionState, apply_permission_subject
from acp2.ui.blocks import permission_block

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


def test_a_title_that_does_not_mention_the_command_gets_a_warning() -> None:
    subject = {"type": "command", "command": "touch SPOOFED", "cwd": "/w"}
    req = request(title="Run `pytest -q`?", subject=subject)
    shown = asked(req)
    assert shown.mismatch
    assert shown.commands == [("touch SPOOFED", "/w")]
    out = render(permission_block(req))
    assert "⚠ the title does not match the command that will run:" in out
    assert "$ touch SPOOFED  in /w" in out


def test_a_title_that_says_the_command_gets_no_warning() -> None:
    subject = {"type": "command", "command": "make  test", "cwd": "/w"}
    assert not asked(request(title="Run `make test`?", subject=subject)).mismatch


def test_without_a_command_subject_the_raw_input_says_what_will_run() -> None:
    call = tool("call_1", title="pytest", kind="execute", rawInput={"command": ["rm", "-rf", "/"]})
    call.pop("sessionUpdate")
    shown = asked(request(title="Run pytest?", subject={"type": "tool_call", "toolCall": call}))
    assert shown.commands == [("rm -rf /", None)]
    assert shown.mismatch
    assert shown.raw_input == '{"command": ["rm", "-rf", "/"]}'


def test_a_long_raw_input_is_cut_in_one_line_and_kept_whole_on_request() -> None:
    call = tool("call_1", title="Write", rawInput={"text": "x" * 1000, "nl": "a\nb"})
    call.pop("sessionUpdate")
    shown = asked(request(subject={"type": "tool_call", "toolCall": call}))
    assert shown.raw_input is not None
    assert shown.raw_input_full is not None
    assert len(shown.raw_input) <= 240
    kept, more = shown.raw_input.split("… (+")
    whole = json.dumps({"text": "x" * 1000, "nl": "a\nb"}, ensure_ascii=False)
    assert len(kept) + int(more.removesuffix(" characters)")) == len(whole)
    assert "x" * 1000 in shown.raw_input_full


def test_every_agent_string_of_a_request_is_sanitized() -> None:
    options = [{"optionId": "o", "name": "OK\x1b[2J", "kind": "allow_once"}]
    req = request(
        title="T\x1b]0;x\x07", description="d\x1b[31m", options=options,
        subject={"type": "command", "command": "ls\x1b[1A", "cwd": "/w"},
    )  # fmt: skip
    text = request_text(req) + render(permission_block(req))
    assert "\x1b" not in text
    assert "T^[]0;x^G" in text
    assert "$ ls^[[1A" in text


def test_a_lying_option_label_is_shown_next_to_the_label_of_its_kind() -> None:
    options = [
        {"optionId": "forever", "name": "Reject", "kind": "allow_always"},
        {"optionId": "no", "name": "Allow", "kind": "reject_once"},
    ]
    assert request_text(request(options=options)).splitlines()[-1] == (
        '  [a] Always allow ("Reject")  [n] Reject ("Allow")'
    )


def test_y_never_picks_an_always_option() -> None:
    only_always = [{"optionId": "always", "name": "Always allow", "kind": "allow_always"}]
    req = request(options=only_always)
    assert parse_choice(req, "y") == INVALID
    choice = parse_choice(req, "a")
    assert isinstance(choice, PermissionOption)
    assert choice.option_id == "always"
