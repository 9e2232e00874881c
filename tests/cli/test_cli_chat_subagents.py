"""``acp2 chat`` with subagents (Preview subagents), in a pseudo-terminal against
``acp2 test-agent``'s ``subagent`` scenario, spawned over stdio or served by ``acp2
serve``: the child is folded under the tool call that made it, ``/subagents`` lists the
children, ``/subagent N`` expands one's transcript, and ``/cancel-subagent N`` (typed
during the turn, run at once) cancels a cancellable child while its parent goes on."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import TEST_AGENT
from pty_helpers import leave, pty_env, shown, spawn_chat, wait_idle

from helpers.serve_process import serving

pexpect = pytest.importorskip("pexpect")


@pytest.fixture(params=["stdio", "serve"])
def chat(tmp_path: Path, request: pytest.FixtureRequest) -> Any:
    """``acp2 chat`` in a pseudo-terminal, with the test agent spawned over stdio or
    served by an ``acp2 serve --test-agent`` subprocess (by URL)."""
    with contextlib.ExitStack() as stack:
        if request.param == "stdio":
            way = ["--", *TEST_AGENT]
        else:
            port = stack.enter_context(serving(tmp_path, "--test-agent"))
            way = ["--url", f"http://127.0.0.1:{port}/acp"]
        env = pty_env(tmp_path / "data")
        child = spawn_chat(["chat", *way], env, tmp_path, tmp_path / "pty.log")
        child.expect("❯")
        yield child
        if child.isalive():
            child.terminate(force=True)


def test_a_folded_child_is_listed_and_expanded_to_its_whole_transcript(chat: Any) -> None:
    chat.sendline("/subagents")
    chat.expect("this session has no subagents")
    chat.sendline("subagent found three pages")
    chat.expect(shown("↳ helper -- a test subagent"))  # folded under its tool call
    chat.expect("helper done")
    wait_idle(chat)
    chat.sendline("/subagents")
    chat.expect(shown("1 ↳ helper -- a test subagent  end_turn  (/subagent 1)"))
    chat.sendline("/subagent 1")
    chat.expect(shown("↳ helper -- a test subagent  end_turn"))
    chat.expect(shown("→"))  # the task, a message between the sessions
    chat.expect("found three pages")
    chat.expect("reported: found three pages")
    chat.sendline("/subagent 7")
    chat.expect("usage: /subagent N, N from 1 to 1")
    assert leave(chat)[0] == 0


def test_cancel_subagent_typed_during_the_turn_cancels_the_child_and_the_parent_goes_on(
    chat: Any,
) -> None:
    chat.sendline("subagent wait")
    chat.expect("ctrl-c to cancel")
    chat.send("/subagents\r")  # runs beside the turn
    chat.expect(shown("/cancel-subagent 1)"))
    chat.send("/cancel-subagent 1\r")
    chat.expect("cancelling helper")
    chat.expect("helper ended: cancelled")
    chat.expect("helper cancelled")  # the parent's own words, after its child ended
    wait_idle(chat)
    chat.sendline("/cancel-subagent 1")
    chat.expect("the agent does not let helper be cancelled")  # its work is over
    assert leave(chat)[0] == 0
