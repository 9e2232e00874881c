"""v2 -> v1 tool calls, display terminals and permission requests."""

from __future__ import annotations

import base64
from typing import Any

import msgspec
import pytest
from v1_check import assert_v1, assert_v1_updates

import acp2.schema as v2
from acp2.coder.diffs import file_diff
from acp2.compat.v1.project import V1Projector
from acp2.compat.v1.project_tools import MAX_TERMINAL_BYTES, MAX_TERMINAL_TEXT

_TEXT = v2.TextContent(text="hi")


def _feed(p: V1Projector, *updates: Any) -> list[dict[str, Any]]:
    out = []
    for update in updates:
        out += assert_v1_updates(p.project(update))
    return out


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_the_first_update_of_a_tool_call_is_a_tool_call_and_later_ones_are_patches() -> None:
    p = V1Projector("s1")
    create, patch = _feed(
        p,
        v2.ToolCallUpdate(tool_call_id="t", title="Read", kind="read", status="pending"),
        v2.ToolCallUpdate(tool_call_id="t", status="completed", raw_output={"ok": True}),
    )
    assert create == {
        "sessionUpdate": "tool_call",
        "toolCallId": "t",
        "title": "Read",
        "kind": "read",
        "status": "pending",
    }
    assert patch == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "t",
        "status": "completed",
        "rawOutput": {"ok": True},
    }


def test_a_tool_call_without_a_title_gets_its_name_or_a_generic_one() -> None:
    p = V1Projector("s1")
    named, anonymous = _feed(
        p,
        v2.ToolCallUpdate(tool_call_id="a", name="read_file"),
        v2.ToolCallUpdate(tool_call_id="b", title=None),
    )
    assert (named["title"], anonymous["title"]) == ("read_file", "Tool call")
    assert p.dropped["tool_call.name"] == 1


def test_scalar_clears_cannot_be_sent_and_collection_clears_become_empty_lists() -> None:
    p = V1Projector("s1")
    _feed(p, v2.ToolCallUpdate(tool_call_id="t", title="T", content=[v2.Content(content=_TEXT)]))
    (patch,) = _feed(
        p, v2.ToolCallUpdate(tool_call_id="t", title=None, content=None, locations=None)
    )
    assert patch == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "t",
        "content": [],
        "locations": [],
    }
    assert p.dropped["tool_call.clear"] == 1


def test_a_patch_with_nothing_v1_can_carry_is_not_sent() -> None:
    p = V1Projector("s1")
    _feed(p, v2.ToolCallUpdate(tool_call_id="t", title="T"))
    caps = v2.ToolCallCapabilities(cancel=v2.ToolCallCancelCapabilities())
    assert _feed(p, v2.ToolCallUpdate(tool_call_id="t", capabilities=caps)) == []
    assert p.dropped["tool_call.capabilities"] == 1


def test_statuses_and_kinds_v1_lacks_are_mapped_and_counted() -> None:
    p = V1Projector("s1")
    out = _feed(
        p,
        v2.ToolCallUpdate(tool_call_id="t", title="T", kind="_browse"),
        v2.ToolCallUpdate(tool_call_id="t", status="paused"),
        v2.ToolCallUpdate(tool_call_id="t", status="cancelled"),
        v2.ToolCallUpdate(tool_call_id="t", status="_waiting", title="T2"),
    )
    assert out[0]["kind"] == "other"
    assert [u.get("status") for u in out[1:]] == ["in_progress", "failed", None]
    assert p.dropped["tool_call.kind"] == 1
    assert p.dropped["tool_call.status.paused"] == p.dropped["tool_call.status.cancelled"] == 1
    assert p.dropped["tool_call.status.unknown"] == 1


def test_content_chunks_are_sent_as_the_full_content_list() -> None:
    p = V1Projector("s1")
    item = v2.Content(content=_TEXT)
    _feed(p, v2.ToolCallUpdate(tool_call_id="t", title="T", content=[item]))
    (patch,) = _feed(p, v2.ToolCallContentChunk(tool_call_id="t", content=item))
    assert len(patch["content"]) == 2
    (created,) = _feed(p, v2.ToolCallContentChunk(tool_call_id="new", content=item))
    assert created["sessionUpdate"] == "tool_call"
    assert len(created["content"]) == 1


def test_a_display_terminal_is_rendered_as_text_into_the_tool_call_content() -> None:
    p = V1Projector("s1")
    _feed(p, v2.TerminalOutputChunk(terminal_id="x", data=_b64(b"early\n")))
    (create,) = _feed(
        p,
        v2.ToolCallUpdate(tool_call_id="t", title="Run", content=[v2.Terminal(terminal_id="x")]),
    )
    assert "early" in create["content"][0]["content"]["text"]
    (chunk,) = _feed(p, v2.TerminalOutputChunk(terminal_id="x", data=_b64(b"\x1b[31mred\x1b[0m")))
    text = chunk["content"][0]["content"]["text"]
    assert "early\nred" in text
    assert "\x1b" not in text
    (done,) = _feed(
        p,
        v2.TerminalUpdate(
            terminal_id="x",
            command="make",
            exit_status=v2.TerminalExitStatus(exit_code=2),
            size=v2.TerminalSize(cols=80, rows=24),
        ),
    )
    text = done["content"][0]["content"]["text"]
    assert text.startswith("```\n$ make\nearly\nred")
    assert text.endswith("(exit code 2)")
    assert p.dropped["terminal.size"] == 1


def test_a_terminal_snapshot_replaces_the_rendered_output() -> None:
    p = V1Projector("s1")
    _feed(
        p, v2.ToolCallUpdate(tool_call_id="t", title="Run", content=[v2.Terminal(terminal_id="x")])
    )
    _feed(p, v2.TerminalOutputChunk(terminal_id="x", data=_b64(b"AB")))
    (snap,) = _feed(
        p, v2.TerminalUpdate(terminal_id="x", output=v2.TerminalOutput(data=_b64(b"X")))
    )
    (more,) = _feed(p, v2.TerminalOutputChunk(terminal_id="x", data=_b64(b"C")))
    assert snap["content"][0]["content"]["text"] == "```\nX\n```"
    assert more["content"][0]["content"]["text"] == "```\nXC\n```"


def test_bad_base64_terminal_output_is_counted_not_raised() -> None:
    p = V1Projector("s1")
    assert _feed(p, v2.TerminalOutputChunk(terminal_id="x", data="%%%")) == []
    assert p.dropped["terminal.bad_base64"] == 1


def test_a_diff_v1_cannot_carry_exactly_is_sent_as_its_patch_text_or_a_change_list() -> None:
    p = V1Projector("s1")
    no_hunks = v2.Diff(
        changes=[v2.DiffModifyChange(path="/w/a.py")],
        patch=v2.DiffPatch(format="git_patch", text="diff --git /w/a.py /w/a.py\n"),
    )
    moved = v2.Diff(changes=[v2.DiffMoveChange(old_path="/w/a", path="/w/b")])
    unknown = msgspec.Raw(b'{"type":"_image"}')
    (out,) = _feed(
        p, v2.ToolCallUpdate(tool_call_id="t", title="E", content=[no_hunks, moved, unknown])
    )
    texts = [item["content"]["text"] for item in out["content"]]
    assert texts == ["```diff\ndiff --git /w/a.py /w/a.py\n```", "- move: /w/a -> /w/b"]
    assert p.dropped["tool_call.diff"] == 2
    assert p.dropped["tool_call.content.unknown"] == 1


_OLD = "".join(f"line {i}\n" for i in range(40))
_NEW = _OLD.replace("line 3\n", "line three\n").replace("line 30\n", "")


def test_an_edit_reaches_a_v1_client_as_native_diffs_one_per_hunk_with_the_line_numbers() -> None:
    p = V1Projector("s1")
    diff = file_diff("/w/a.py", _OLD, _NEW)
    (out,) = _feed(p, v2.ToolCallUpdate(tool_call_id="t", title="Edit", content=[diff]))
    first, second = out["content"]
    assert first == {
        "type": "diff",
        "path": "/w/a.py",
        "oldText": "".join(f"line {i}\n" for i in range(7)),
        "newText": "".join(f"line {i}\n" for i in range(7)).replace("line 3", "line three"),
        "_meta": {"acp2": {"oldLine": 1, "newLine": 1}},
    }
    assert "line 30\n" in second["oldText"]
    assert "line 30\n" not in second["newText"]
    assert second["_meta"] == {"acp2": {"oldLine": 28, "newLine": 28}}
    assert p.dropped["tool_call.diff"] == 0


def test_a_new_file_reaches_a_v1_client_as_a_native_diff_of_its_whole_text() -> None:
    p = V1Projector("s1")
    added = file_diff("/w/new.txt", None, "a\nb")
    empty = file_diff("/w/empty.txt", None, "")
    (out,) = _feed(p, v2.ToolCallUpdate(tool_call_id="t", title="W", content=[added, empty]))
    assert out["content"] == [
        {"type": "diff", "path": "/w/new.txt", "oldText": None, "newText": "a\nb"},
        {"type": "diff", "path": "/w/empty.txt", "oldText": None, "newText": ""},
    ]


def test_a_missing_final_newline_is_kept_on_the_side_that_lacks_it() -> None:
    p = V1Projector("s1")
    diff = file_diff("/w/x", "a\nb", "a\nc\n")
    (out,) = _feed(p, v2.ToolCallUpdate(tool_call_id="t", title="E", content=[diff]))
    (item,) = out["content"]
    assert (item["oldText"], item["newText"]) == ("a\nb", "a\nc\n")


def test_a_permission_for_an_edit_shows_the_v1_client_the_native_diff() -> None:
    p = V1Projector("s1")
    call = v2.ToolCallFields(
        tool_call_id="t", title="Write new.txt", content=[file_diff("/w/new.txt", None, "hi\n")]
    )
    request = v2.RequestPermissionRequest(
        session_id="s1",
        title="Allow?",
        subject=v2.ToolCallPermissionSubject(tool_call=call),
        options=[v2.PermissionOption(option_id="y", name="Allow", kind="allow_once")],
    )
    shown = msgspec.to_builtins(p.tools.permission(request))["toolCall"]["content"]
    assert shown == [{"type": "diff", "path": "/w/new.txt", "oldText": None, "newText": "hi\n"}]


@pytest.mark.parametrize(
    "patch",
    [
        "diff --git /w/a /w/a\n@@ -1,2 +1,2 @@\n-a\n+b\n",  # a hunk shorter than its header
        "diff --git /w/a /w/a\n@@ -1 +1 @@\n-a\n+b\ndiff --git /w/b /w/b\n",  # two files
        "diff --git /w/a /w/a\nBinary files /w/a and /w/a differ\n",
        "diff --git /w/a /w/a\n@@ bad @@\n",
    ],
)
def test_a_patch_that_does_not_parse_exactly_falls_back_to_its_text(patch: str) -> None:
    p = V1Projector("s1")
    diff = v2.Diff(
        changes=[v2.DiffModifyChange(path="/w/a")],
        patch=v2.DiffPatch(format="git_patch", text=patch),
    )
    (out,) = _feed(p, v2.ToolCallUpdate(tool_call_id="t", title="E", content=[diff]))
    assert out["content"][0]["content"]["text"].startswith("```diff\n")
    assert p.dropped["tool_call.diff"] == 1


_OPTIONS = [
    v2.PermissionOption(option_id="y", name="Allow", kind="allow_once"),
    v2.PermissionOption(option_id="n", name="No", kind="_ask_later"),
]


def test_a_tool_call_permission_keeps_the_call_and_puts_the_prompt_text_in_meta() -> None:
    p = V1Projector("s1")
    _feed(p, v2.ToolCallUpdate(tool_call_id="t", title="rm"))
    request = v2.RequestPermissionRequest(
        session_id="s1",
        title="Delete build?",
        description="It is big",
        subject=v2.ToolCallPermissionSubject(
            tool_call=v2.ToolCallFields(tool_call_id="t", status="pending")
        ),
        options=_OPTIONS,
    )
    out = assert_v1(p.permission(request), "RequestPermissionRequest")
    assert out["toolCall"] == {"toolCallId": "t", "status": "pending"}
    assert out["_meta"] == {"acp2": {"title": "Delete build?", "description": "It is big"}}
    assert [o["kind"] for o in out["options"]] == ["allow_once", "reject_once"]
    assert p.dropped["permission.option_kind"] == 1


def test_a_permission_for_an_unannounced_call_borrows_the_prompt_title() -> None:
    p = V1Projector("s1")
    request = v2.RequestPermissionRequest(
        session_id="s1",
        title="Run it?",
        subject=v2.ToolCallPermissionSubject(tool_call=v2.ToolCallFields(tool_call_id="t")),
        options=_OPTIONS[:1],
    )
    assert (
        assert_v1(p.permission(request), "RequestPermissionRequest")["toolCall"]["title"]
        == "Run it?"
    )


def test_command_and_subjectless_permissions_get_a_synthesized_tool_call() -> None:
    p = V1Projector("s1")
    command = v2.RequestPermissionRequest(
        session_id="s1",
        title="Run make?",
        subject=v2.CommandPermissionSubject(command="make", cwd="/w"),
        options=_OPTIONS[:1],
    )
    bare = v2.RequestPermissionRequest(session_id="s1", title="OK?", options=_OPTIONS[:1])
    odd = v2.RequestPermissionRequest(
        session_id="s1", title="?", subject=msgspec.Raw(b'{"type":"_x"}'), options=_OPTIONS[:1]
    )
    c, b, o = (assert_v1(p.permission(r), "RequestPermissionRequest") for r in (command, bare, odd))
    assert c["toolCall"]["rawInput"] == {"command": "make", "cwd": "/w"}
    assert c["toolCall"]["kind"] == "execute"
    assert b["toolCall"]["title"] == "OK?"
    assert (
        len({c["toolCall"]["toolCallId"], b["toolCall"]["toolCallId"], o["toolCall"]["toolCallId"]})
        == 3
    )
    assert p.dropped["permission.command"] == p.dropped["permission.none"] == 1
    assert p.dropped["permission.unknown"] == 1


def test_a_command_permission_for_a_shown_call_keeps_its_title() -> None:
    p = V1Projector("s1")
    _feed(p, v2.ToolCallUpdate(tool_call_id="t", title="Shell"))
    request = v2.RequestPermissionRequest(
        session_id="s1",
        title="Run make?",
        subject=v2.CommandPermissionSubject(command="make", cwd="/w", tool_call_id="t"),
        options=_OPTIONS[:1],
    )
    out = assert_v1(p.permission(request), "RequestPermissionRequest")
    assert out["toolCall"] == {"toolCallId": "t", "rawInput": {"command": "make", "cwd": "/w"}}


def test_a_permission_subject_patch_sets_the_content_later_chunks_append_to() -> None:
    p = V1Projector("s1")
    _feed(p, v2.ToolCallUpdate(tool_call_id="t", title="Edit"))
    item = v2.Content(content=_TEXT)
    p.permission(
        v2.RequestPermissionRequest(
            session_id="s1",
            title="Apply?",
            subject=v2.ToolCallPermissionSubject(
                tool_call=v2.ToolCallFields(tool_call_id="t", content=[item])
            ),
            options=_OPTIONS[:1],
        )
    )
    (patch,) = _feed(p, v2.ToolCallContentChunk(tool_call_id="t", content=item))
    assert len(patch["content"]) == 2


def test_only_the_end_of_a_long_terminal_output_is_kept_and_rendered() -> None:
    p = V1Projector("s1")
    _feed(
        p, v2.ToolCallUpdate(tool_call_id="t", title="Run", content=[v2.Terminal(terminal_id="x")])
    )
    for _ in range(3):
        _feed(p, v2.TerminalOutputChunk(terminal_id="x", data=_b64(b"a" * MAX_TERMINAL_BYTES)))
    (last,) = _feed(p, v2.TerminalOutputChunk(terminal_id="x", data=_b64(b"END")))
    text = last["content"][0]["content"]["text"]
    assert text.endswith("aEND\n```")
    assert len(text) < MAX_TERMINAL_TEXT + 20


def _write_permission(call_id: str) -> v2.RequestPermissionRequest:
    patch = v2.DiffPatch(format="git_patch", text="diff --git /w/new.txt /w/new.txt\n+new\n")
    diff = v2.Diff(changes=[v2.DiffAddChange(path="/w/new.txt", file_type="text")], patch=patch)
    call = v2.ToolCallFields(
        tool_call_id=call_id,
        title="Write new.txt",
        kind="edit",
        status="pending",
        content=[v2.Content(content=v2.TextContent(text="a new file")), diff],
        locations=[v2.ToolCallLocation(path="/w/new.txt", line=2)],
        raw_input={"path": "/w/new.txt"},
    )
    return v2.RequestPermissionRequest(
        session_id="s1",
        title="Write?",
        subject=v2.ToolCallPermissionSubject(tool_call=call),
        options=_OPTIONS[:1],
    )


def test_a_permission_subject_puts_every_field_of_the_call_into_the_v1_tool_call() -> None:
    p = V1Projector("s1")
    out = assert_v1(p.permission(_write_permission("w")), "RequestPermissionRequest")
    call = out["toolCall"]
    assert (call["title"], call["kind"], call["status"]) == ("Write new.txt", "edit", "pending")
    assert call["locations"] == [{"path": "/w/new.txt", "line": 2}]
    assert call["rawInput"] == {"path": "/w/new.txt"}
    text, diff = call["content"]
    assert text == {"type": "content", "content": {"type": "text", "text": "a new file"}}
    assert "/w/new.txt" in str(diff)  # a diff v1 can show (its rendering is not pinned here)


def test_the_first_update_of_a_call_a_permission_named_restates_what_it_showed() -> None:
    # A v1 client makes the call from the request, and a v1 tool_call restates a call
    # whole: without the request's content the diff the person approved would vanish.
    p = V1Projector("s1")
    p.permission(_write_permission("w"))
    (create,) = _feed(p, v2.ToolCallUpdate(tool_call_id="w", status="in_progress"))
    assert create["sessionUpdate"] == "tool_call"
    assert (create["title"], create["kind"], create["status"]) == (
        "Write new.txt",
        "edit",
        "in_progress",
    )
    assert len(create["content"]) == 2
    assert create["locations"] == [{"path": "/w/new.txt", "line": 2}]
    p.permission(_write_permission("c"))
    (chunked,) = _feed(
        p, v2.ToolCallContentChunk(tool_call_id="c", content=v2.Content(content=_TEXT))
    )
    assert len(chunked["content"]) == 3
    assert chunked["title"] == "Write new.txt"


def test_a_permission_naming_a_shown_call_by_id_alone_carries_the_calls_content() -> None:
    # acp2's agents announce the call with its diff, then ask with {toolCallId} only; a v1
    # client that shows only the request's toolCall must still see the diff.
    p = V1Projector("s1")
    patch = v2.DiffPatch(format="git_patch", text="diff --git /w/a.py /w/a.py\n-x\n+y\n")
    diff = v2.Diff(changes=[v2.DiffModifyChange(path="/w/a.py", file_type="text")], patch=patch)
    _feed(p, v2.ToolCallUpdate(tool_call_id="t", title="Edit a.py", content=[diff]))
    request = v2.RequestPermissionRequest(
        session_id="s1",
        title="Apply?",
        subject=v2.ToolCallPermissionSubject(tool_call=v2.ToolCallFields(tool_call_id="t")),
        options=_OPTIONS[:1],
    )
    out = assert_v1(p.permission(request), "RequestPermissionRequest")
    (shown,) = out["toolCall"]["content"]
    assert "/w/a.py" in str(shown)


def test_a_second_request_for_an_unannounced_call_keeps_what_the_first_showed() -> None:
    p = V1Projector("s1")
    p.permission(_write_permission("w"))
    again = v2.RequestPermissionRequest(
        session_id="s1",
        title="Really?",
        subject=v2.ToolCallPermissionSubject(
            tool_call=v2.ToolCallFields(tool_call_id="w", status="pending")
        ),
        options=_OPTIONS[:1],
    )
    p.permission(again)
    (create,) = _feed(p, v2.ToolCallUpdate(tool_call_id="w", status="completed"))
    assert create["title"] == "Write new.txt"
    assert len(create["content"]) == 2


def test_a_call_showing_a_diff_and_a_terminal_keeps_the_native_diff_on_each_output_change() -> None:
    p = V1Projector("s1")
    diff = file_diff("/w/a.py", "a\n", "b\n")
    call = v2.ToolCallUpdate(
        tool_call_id="t", title="Edit", content=[diff, v2.Terminal(terminal_id="x")]
    )
    (first,) = _feed(p, call)
    (again,) = _feed(p, v2.TerminalOutputChunk(terminal_id="x", data=_b64(b"ok")))
    assert again["content"][0] == first["content"][0]
    assert again["content"][0]["type"] == "diff"
    assert again["content"][1]["content"]["text"] == "```\nok\n```"
