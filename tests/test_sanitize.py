"""acp2.sanitize: the one sanitizer of peer text shown on a terminal."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp2 import sanitize

#: Characters that must never survive: C0 (but \n and \t), DEL, C1, bidi controls.
FORBIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
ATTACKS = [
    "\x1b]0;pwned window title\x07",
    "\x1b]52;c;cm0gLXJmIH4=\x1b\\",
    "\x1b]8;;https://evil.example/\x1b\\https://github.com/\x1b]8;;\x1b\\",
    "\x1b[2J\x1b[H",
    "\x1b[1A\x1b[2K",
    "\x9b2J",
    "\x9d0;c1 title\x9c",
    "\x1bPq#0;2;0;0;0\x1b\\",
    "\x1b_apc\x1b\\",
    "\x1bc",
    "\x1b(0",
    "\u202eexe.txt",
    "tail \x1b",
]
SPECIAL = st.sampled_from(["\x1b", "\x9b", "\x9d", "\x07", "\r", "\n", "\t", "\u202e", "[", "]"])
HOSTILE_TEXT = st.lists(st.one_of(SPECIAL, st.text(max_size=5)), max_size=30).map("".join)


@pytest.mark.parametrize("attack", ATTACKS)
@pytest.mark.parametrize(
    "clean", [sanitize.prose, sanitize.exact, sanitize.line, sanitize.terminal]
)
def test_no_escape_sequence_or_control_survives_any_sanitizer(clean: object, attack: str) -> None:
    assert callable(clean)
    assert FORBIDDEN.search(clean(f"before {attack} after")) is None


@given(HOSTILE_TEXT)
def test_random_hostile_text_comes_out_without_controls(text: str) -> None:
    for clean in (sanitize.prose, sanitize.exact, sanitize.line, sanitize.terminal):
        assert FORBIDDEN.search(clean(text)) is None


@given(HOSTILE_TEXT)
def test_terminal_colours_keep_nothing_but_sgr_sequences(text: str) -> None:
    shown = sanitize.terminal(text, colors=True)
    without_sgr = re.sub(r"\x1b\[[0-9;:]*m", "", shown)
    assert FORBIDDEN.search(without_sgr) is None


def test_safe_text_is_returned_as_it_is() -> None:
    text = "plain text\twith tabs\nand lines, ünïcödé and emoji 👩‍💻"
    assert sanitize.prose(text) is text
    assert sanitize.terminal(text) is text


def test_prose_removes_whole_sequences_and_keeps_lines() -> None:
    text = "a\x1b]0;title\x07b\x1b[31mc\x1b[0m\r\nd\n\te"
    assert sanitize.prose(text) == "abc\nd\n\te"


def test_prose_drops_a_lone_carriage_return_so_both_halves_show() -> None:
    assert sanitize.prose("rm -rf ~\rls      ") == "rm -rf ~ls      "


def test_prose_shows_other_controls_and_bidi_overrides_by_name() -> None:
    assert sanitize.prose("bell\x07 \x9b \u202eabc") == "bell^G <U+009B> <U+202E>abc"


def test_exact_shows_every_escape_character_and_removes_nothing() -> None:
    command = "touch SPOOFED_RAN #\x1b[2K\rpython3 -m pytest -q"
    assert sanitize.exact(command) == "touch SPOOFED_RAN #^[[2K^Mpython3 -m pytest -q"


def test_exact_shows_zero_width_and_unusual_spaces() -> None:
    assert sanitize.exact("rm\u200b -rf\u00a0~\ufeff") == "rm<U+200B> -rf<U+00A0>~<U+FEFF>"


def test_exact_keeps_newlines_and_tabs_of_a_multi_line_command() -> None:
    assert sanitize.exact("ls\n\techo hi") == "ls\n\techo hi"


def test_line_flattens_newlines_so_a_title_stays_one_line() -> None:
    assert sanitize.line("Run tests\r\nrm -rf ~\tnow") == "Run tests⏎rm -rf ~ now"


def test_terminal_keeps_colours_only_when_asked() -> None:
    text = "\x1b[1;31merror\x1b[0m \x1b]8;;https://x\x1b\\link\x1b]8;;\x1b\\ \x1b[5A"
    assert sanitize.terminal(text, colors=True) == "\x1b[1;31merror\x1b[0m link "
    assert sanitize.terminal(text) == "error link "


def test_terminal_keeps_the_last_state_of_a_progress_line() -> None:
    assert sanitize.terminal("10%\r50%\r100%\r\ndone\n") == "100%\ndone\n"


def test_visible_names_c0_del_and_other_characters() -> None:
    assert [sanitize.visible(c) for c in "\x1b\x00\x7f\x9b"] == ["^[", "^@", "^?", "<U+009B>"]


def test_terminal_colours_never_conceal_text() -> None:
    text = "\x1b[8mhidden\x1b[0m \x1b[1;8;31mx\x1b[38;5;8;48;2;8;8;8my\x1b[m"
    assert sanitize.terminal(text, colors=True) == (
        "hidden\x1b[0m \x1b[1;31mx\x1b[38;5;8;48;2;8;8;8my\x1b[m"
    )
