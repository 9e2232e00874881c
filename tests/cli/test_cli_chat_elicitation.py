"""``acp2 chat`` answering the agent's elicitations (EL-05, EL-07, EL-12): a form asked
field by field with its checks, a link shown in full before the user agrees; in the
transcript (answers read from the input lines) and on a terminal (pexpect)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import TEST_AGENT, run_acp2
from pty_helpers import leave, pty_env, shown, spawn_chat, wait_idle

from helpers.processes import terminal_env

pexpect = pytest.importorskip("pexpect")


def chat(stdin: str, tmp_path: Path, permission: str = "ask") -> str:
    done = run_acp2(
        "chat",
        "--permission",
        permission,
        "--",
        *TEST_AGENT,
        stdin=stdin,
        env=terminal_env(tmp_path / "data"),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_el05_the_transcript_asks_each_field_again_until_it_fits_and_sends_the_form(
    tmp_path: Path,
) -> None:
    out = chat("form\nAda\n7\n2\n200\n33\nyes\ny\n", tmp_path)
    assert "the agent asks: Tell me about you" in out
    assert "pick 1-2" in out  # "7" is not a colour
    assert "at most 150" in out  # nor 200 an age
    assert "Form: age=33, colour=g, name=Ada, subscribe=True" in out


def test_a_form_the_user_declines_at_the_end_is_declined(tmp_path: Path) -> None:
    out = chat("form\nAda\n1\n\n\nn\n", tmp_path)
    assert "The form was declined." in out


def test_el12_the_whole_link_is_shown_before_the_user_agrees(tmp_path: Path) -> None:
    out = chat("link https://example.com/sign-in?x=1\ny\n", tmp_path)
    link = out.index("link: https://example.com/sign-in?x=1")
    assert link < out.index("open this link yourself")
    assert "Link accepted and completed." in out


def test_without_ask_the_transcript_declines_every_elicitation(tmp_path: Path) -> None:
    out = chat("form\nlink\n", tmp_path, permission="deny")
    assert "[elicitation] Tell me about you -> declined" in out
    assert "The form was declined." in out
    assert "Link decline." in out or "Link declined." in out


def test_el05_on_a_terminal_the_form_is_asked_with_the_defaults_prefilled(tmp_path: Path) -> None:
    env = pty_env(tmp_path / "data")
    child = spawn_chat(["chat", "--", *TEST_AGENT], env, tmp_path, tmp_path / "pty.log")
    child.expect("connected to acp2 test agent")
    child.expect("❯")
    child.sendline("form")
    child.expect("Tell me about you")
    child.expect(shown("Your name:"))
    child.sendline("Grace")
    child.expect(shown("Colour:"))
    child.sendline("1")
    child.expect(shown("Age (optional):"))
    child.sendline("")
    child.expect(shown("Subscribe (optional) [enter: no]:"))  # a yes/no default: named
    child.sendline("")
    child.expect(shown("send this? [Y/n]"))
    child.sendline("")
    child.expect("Form: colour=r, name=Grace, subscribe=False")
    wait_idle(child)
    status, _ = leave(child)
    assert status == 0


def test_on_a_terminal_typing_y_at_a_yes_no_field_with_a_default_answers_yes(
    tmp_path: Path,
) -> None:
    """The default "no" is not prefilled, so "y" is not appended to it ("noy")."""
    env = pty_env(tmp_path / "data")
    child = spawn_chat(["chat", "--", *TEST_AGENT], env, tmp_path, tmp_path / "pty.log")
    child.expect("❯")
    child.sendline("form")
    child.expect(shown("Your name:"))
    child.sendline("Grace")
    child.expect(shown("Colour:"))
    child.sendline("1")
    child.expect(shown("Age (optional):"))
    child.sendline("")
    child.expect(shown("Subscribe (optional)"))
    child.sendline("y")
    child.expect(shown("send this? [Y/n]"))
    child.sendline("")
    child.expect("Form: colour=r, name=Grace, subscribe=True")
    wait_idle(child)
    assert leave(child)[0] == 0


def test_a_subagent_is_shown_folded_under_the_tool_call_that_spawned_it(tmp_path: Path) -> None:
    out = chat("subagent found three pages\n", tmp_path, permission="deny")
    call = out.index("Ask the helper (completed)")
    child = out.index("    ↳ helper -- a test subagent")
    finished = out.index("      end_turn -- found three pages")
    assert call < child < finished < out.index("helper done")
    assert "↳ helper started" not in out  # not printed again on a line of its own
    assert "\x1b" not in out
