"""Attack: a permission request whose title says one thing while another command runs,
a command that would repaint itself with cursor movement, and option labels that lie
about their kind. The person must always see what will really run and what a key does."""

from __future__ import annotations

from pathlib import Path

from hostile.hostile_helpers import finish_chat, run_acp2, screen_text, spawn_chat


def test_run_ask_shows_the_real_command_and_warns_about_the_title(tmp_path: Path) -> None:
    done = run_acp2("run", "--permission", "ask", "spoof", tmp_path=tmp_path, stdin="n\n")
    assert done.returncode == 0, done.stderr
    assert "[permission] Run `python3 -m pytest -q`?" in done.stderr
    assert "! the title does not match the command that will run:" in done.stderr
    assert "  $ touch SPOOFED_RAN" in done.stderr
    # The raw input only repeats the command shown above: not printed twice.
    assert "raw input" not in done.stderr
    assert not (tmp_path / "SPOOFED_RAN").exists()


def test_the_plain_chat_shows_the_real_command_before_asking(tmp_path: Path) -> None:
    done = run_acp2("chat", "--plain", "--permission", "ask", tmp_path=tmp_path, stdin="spoof\nn\n")
    shown = done.stdout
    assert shown.index("$ touch SPOOFED_RAN") < shown.index("choose [")
    assert "! the title does not match" in shown


def test_interactive_chat_shows_the_real_command_and_the_raw_input(tmp_path: Path) -> None:
    chat = spawn_chat(tmp_path)
    chat.sendline("spoof")
    chat.expect("the title does not match the command that will run")
    chat.expect("Always reject")
    chat.send("i")  # the full raw input, on request
    chat.expect("raw input:")
    chat.expect("Always reject")
    chat.send("n")
    chat.expect("rejected: Reject")
    chat.expect("not run")
    chat.expect("❯")
    shown = screen_text(finish_chat(chat))
    assert "│ $ touch SPOOFED_RAN" in shown
    assert '  "command": "touch SPOOFED_RAN"' in shown  # the full raw input, on request
    assert "$ touch SPOOFED_RAN" in shown.split("rejected: Reject")[1]  # the tool card
    assert not (tmp_path / "SPOOFED_RAN").exists()


def test_a_command_that_repaints_itself_is_shown_character_for_character(
    tmp_path: Path,
) -> None:
    """``rm -rf ~ #\\r ESC[2K ESC[1G ls`` would look like ``ls``; it is shown as it is."""
    chat = spawn_chat(tmp_path)
    chat.sendline("spoof-escape")
    chat.expect("Always reject")
    chat.send("n")
    chat.expect("refused")
    chat.expect("❯")
    output = finish_chat(chat)
    assert "$ rm -rf ~ #^M^[[2K^[[1Gls" in screen_text(output)
    assert "\x1b[1Gls" not in output


def test_run_shows_a_repainting_command_visibly(tmp_path: Path) -> None:
    done = run_acp2("run", "--permission", "ask", "spoof-escape", tmp_path=tmp_path, stdin="n\n")
    assert "$ rm -rf ~ #^M^[[2K^[[1Gls" in done.stderr
    assert "\x1b" not in done.stderr


def test_keys_follow_the_option_kind_not_the_agents_label(tmp_path: Path) -> None:
    """An allow-always option named "Reject": `n` still rejects, and its label says so."""
    chat = spawn_chat(tmp_path)
    chat.sendline("spoof-options")
    chat.expect("Reject")
    chat.expect("Allow")
    chat.send("n")
    chat.expect("picked no")
    chat.expect("❯")
    shown = screen_text(finish_chat(chat))
    assert ' a  Always allow ("Reject")' in shown
    assert ' n  Reject ("Allow")' in shown


def test_run_labels_a_lying_option_by_its_kind(tmp_path: Path) -> None:
    done = run_acp2("run", "--permission", "ask", "spoof-options", tmp_path=tmp_path, stdin="n\n")
    assert '[a] Always allow ("Reject")  [n] Reject ("Allow")' in done.stderr
    assert done.stdout.strip() == "picked no"
