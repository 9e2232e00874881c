"""Plain facts about entries (acp2.client.describe): sanitized strings, paths relative to the
session root, diff line counts, the command in a tool call's raw input."""

from __future__ import annotations

import json
from typing import Any

from ui_helpers import diff_content, state_from, tool

from acp2.client import describe
from acp2.schema import Diff, TextContent
from acp2.schema.codec import decode


def diff(patch: str) -> Diff:
    return decode(json.dumps(diff_content(patch)).encode(), Diff)


def call(**fields: Any) -> Any:
    return state_from(tool("call_1", **fields)).tool_calls["call_1"]


def test_patch_headers_are_shown_relative_to_the_session_root() -> None:
    patch = describe.diff_patch(diff(
        "diff --git /w/src/a.py /w/src/a.py\n--- /w/src/a.py\n+++ /w/src/a.py\n"
        "@@ -1 +1 @@\n-old\n+new\n"
    ), "/w")  # fmt: skip
    assert patch is not None
    assert patch.splitlines()[:3] == [
        "diff --git a/src/a.py b/src/a.py",
        "--- a/src/a.py",
        "+++ b/src/a.py",
    ]


def test_lines_inside_a_hunk_and_paths_outside_the_root_are_left_alone() -> None:
    text = "--- /etc/passwd\n+++ /etc/passwd\n@@ -1 +1 @@\n--- /w/x\n+new\n"
    assert describe.diff_patch(diff(text), "/w") == text


def test_diff_stats_and_summary_count_added_and_removed_lines() -> None:
    patch = "--- /w/a.py\n+++ /w/a.py\n@@ -1,2 +1,3 @@\n-a\n+b\n+c\n+d\n"
    assert describe.diff_stats(diff(patch)) == (3, 1)
    assert describe.diff_summary(diff(patch), "/w") == "a.py +3 \u22121"


def test_changed_paths_are_relative_and_shown_exactly() -> None:
    assert describe.diff_changes(diff("x"), "/w") == ["modify a.py"]
    assert describe.relative("/w", "/w") == "/w"
    assert describe.relative("/wx/a", "/w") == "/wx/a"


def test_the_patch_text_shows_escape_characters_by_name() -> None:
    patch = describe.diff_patch(diff("@@ -1 +1 @@\n+evil\x1b]0;t\x07\n"))
    assert patch == "@@ -1 +1 @@\n+evil^[]0;t^G\n"


def test_a_title_is_one_sanitized_line() -> None:
    assert describe.tool_title(call(title="Read\x1b[2J\nfile")) == "Read^[[2J⏎file"


def test_text_content_loses_its_escape_sequences() -> None:
    assert describe.block_text(TextContent(text="a\x1b]52;c;eA==\x07b")) == "ab"


def test_an_error_message_is_sanitized() -> None:
    assert describe.error_message({"message": "bad\x1b[31m thing"}) == "bad thing"


def test_the_command_of_a_raw_input_string_or_argv() -> None:
    assert describe.raw_command({"command": "make test"}) == "make test"
    assert describe.raw_command({"cmd": ["rm", "-rf", "a b"]}) == "rm -rf 'a b'"
    assert describe.raw_command({"path": "x"}) is None
    assert describe.raw_command("make") is None


def test_a_tool_card_shows_the_raw_command_only_when_the_title_does_not_say_it() -> None:
    lying = call(title="python3 -m pytest -q", rawInput={"command": "touch X"})
    honest = call(title="Run `make  test`", rawInput={"command": "make test"})
    assert describe.shown_command(lying) == "touch X"
    assert describe.shown_command(honest) is None
