"""Attack: an agent puts terminal escape sequences (OSC 0 window title, OSC 52 clipboard
write, OSC 8 link with a hidden target, CSI screen clear and cursor moves, 8-bit CSI /
OSC, bidi override, BEL) in every field acp2 shows. None may reach the terminal in
``acp2 run``, ``acp2 run --json``, ``acp2 chat --plain`` or the interactive chat."""

from __future__ import annotations

from pathlib import Path

from hostile.hostile_helpers import assert_no_peer_sequence, finish_chat, run_acp2, spawn_chat


def test_run_text_mode_prints_the_reply_without_any_escape(tmp_path: Path) -> None:
    done = run_acp2("run", "inject", tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "hello" in done.stdout
    output = done.stdout + done.stderr
    assert "\x1b" not in output  # off a terminal nothing of ours is styled either
    assert_no_peer_sequence(output)


def test_run_json_escapes_c1_and_bidi_controls_inside_strings(tmp_path: Path) -> None:
    done = run_acp2("run", "--json", "inject", tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout
    assert_no_peer_sequence(done.stdout)
    assert "\\u009b31m" in done.stdout  # the same JSON value, written as an escape
    assert "\\u202e" in done.stdout


def test_run_error_messages_are_sanitized(tmp_path: Path) -> None:
    done = run_acp2("run", "anything else", tmp_path=tmp_path)
    assert done.returncode == 1
    assert "failed" in done.stderr
    assert "\x1b" not in done.stderr
    assert_no_peer_sequence(done.stderr)


def test_plain_chat_transcript_carries_no_escape(tmp_path: Path) -> None:
    done = run_acp2("chat", "--plain", tmp_path=tmp_path, stdin="inject\nfail\n")
    assert "[stop: end_turn]" in done.stdout, done.stderr
    assert "tool text" in done.stdout
    assert "$ echo" in done.stdout
    output = done.stdout + done.stderr
    assert "\x1b" not in output
    assert_no_peer_sequence(output)


def test_plain_chat_shows_markdown_link_text_and_target_as_sent(tmp_path: Path) -> None:
    done = run_acp2("chat", "--plain", tmp_path=tmp_path, stdin="inject\n")
    assert "[https://github.com/acp2](https://evil.example/x)" in done.stdout


def test_interactive_chat_never_writes_the_agents_sequences(tmp_path: Path) -> None:
    """Our own styling escapes are allowed; the agent's never are."""
    chat = spawn_chat(tmp_path)
    chat.sendline("inject")
    chat.expect("✓ end_turn")
    chat.expect("❯")
    chat.sendline("fail")
    chat.expect("failed")
    chat.expect("❯")
    chat.send("/cm")  # the agent's command and its description, in the completion menu
    chat.expect("desc")
    chat.sendcontrol("u")
    output = finish_chat(chat)
    assert "outputhttps://github.com/acp2" in output  # the terminal output, sanitized
    assert_no_peer_sequence(output)


def test_interactive_chat_shows_where_a_markdown_link_really_goes(tmp_path: Path) -> None:
    """A link's target is printed next to its text, never hidden in an OSC 8 hyperlink."""
    chat = spawn_chat(tmp_path)
    chat.sendline("inject")
    chat.expect("https://evil.example/x")
    chat.expect("✓ end_turn")
    chat.expect("❯")
    output = finish_chat(chat)
    assert "\x1b]8;" not in output
