"""The line editor for keys typed while the agent works (acp2.ui.lineedit)."""

from __future__ import annotations

from acp2.ui.lineedit import LineEditor


def feed(*chunks: bytes) -> tuple[LineEditor, list[tuple[str, str]]]:
    editor = LineEditor()
    events: list[tuple[str, str]] = []
    for chunk in chunks:
        events += editor.feed(chunk)
    return editor, events


def test_enter_submits_the_line_and_blank_lines_are_dropped() -> None:
    editor, events = feed(b"first\r", b"\r", b"  \n", b"second\n", b"draft")
    assert events == [("submit", "first"), ("submit", "second")]
    assert editor.text == "draft"


def test_backspace_ctrl_u_and_ctrl_w_edit() -> None:
    editor, _ = feed(b"helo\x7flo wor\x7f\x7f\x7fthere")
    assert editor.text == "hello there"
    feed_more = editor.feed(b"\x17")
    assert feed_more == []
    assert editor.text == "hello "
    editor.feed(b"\x15")
    assert editor.text == ""


def test_escape_enter_inserts_a_newline() -> None:
    _, events = feed(b"one\x1b\rtwo\r")
    assert events == [("submit", "one\ntwo")]


def test_a_bracketed_paste_keeps_newlines_even_split_across_reads() -> None:
    _, events = feed(b"\x1b[20", b"0~a\r\nb\rc", b"\x1b[20", b"1~\r")
    assert events == [("submit", "a\nb\nc")]


def test_arrows_and_function_keys_are_ignored() -> None:
    editor, events = feed(b"a\x1b[A\x1b[1;5C\x1bOPb")
    assert events == []
    assert editor.text == "ab"


def test_control_keys_report_toggles_and_ctrl_d_only_on_an_empty_line() -> None:
    _, events = feed(b"\x14\x0f\x04")
    assert events == [("thoughts", ""), ("output", ""), ("eof", "")]
    _, events = feed(b"x\x04")
    assert events == []


def test_utf8_split_across_reads_is_decoded() -> None:
    editor, _ = feed("é€".encode()[:1], "é€".encode()[1:])
    assert editor.text == "é€"


def test_other_control_characters_and_alt_letters_are_dropped_and_tab_is_a_space() -> None:
    editor, _ = feed(b"a\x00\x07\x1b\x1bb\tc")
    assert editor.text == "a c"


def test_an_esc_alone_is_an_interrupt_and_alt_enter_stays_a_newline() -> None:
    editor = LineEditor()
    assert editor.feed(b"ab\x1b\r") == []  # alt-enter: one write
    assert editor.text == "ab\n"
    assert not editor.escape_pending
    assert editor.feed(b"\x1b") == []
    assert editor.escape_pending  # the reader waits for a key that may follow
    assert editor.escape_alone() == [("interrupt", "")]
    assert editor.text == "ab\n"  # the typing is kept
    assert editor.escape_alone() == []
    editor.feed(b"\x1b")
    editor.feed(b"[A")  # an arrow's sequence split across reads: never an interrupt
    assert not editor.escape_pending
    assert editor.text == "ab\n"
