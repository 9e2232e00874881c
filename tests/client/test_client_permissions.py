"""Permission requests answered by a policy (PR-01..PR-10)."""

from __future__ import annotations

import io

import anyio
import pytest
from client_helpers import fake_agent, in_process, initialize_result

from acp2.client import PermissionRequest, allow_all, deny_all, interactive
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio


async def test_tools_with_allow_all_runs_the_tool_to_completion() -> None:
    """PR-06: allow-all picks allow_once; the tool call completes."""
    with anyio.fail_after(TIMEOUT):
        async with in_process(permissions=allow_all) as client:
            session = await client.new_session()
            work = await session.prompt("tools")
            assert await work.wait() == "end_turn"
            (call,) = session.state.tool_calls.values()
            assert call.status == "completed"
            assert work.text == "Edited hello.txt."
            assert any(t.exited for t in session.state.terminals.values())


async def test_tools_with_deny_all_fails_the_tool_and_changes_nothing() -> None:
    """PR-06, PR-08: deny-all picks reject_once; the tool call fails."""
    with anyio.fail_after(TIMEOUT):
        async with in_process(permissions=deny_all) as client:
            session = await client.new_session()
            work = await session.prompt("tools")
            assert await work.wait() == "end_turn"
            (call,) = session.state.tool_calls.values()
            assert call.status == "failed"
            assert "nothing was changed" in work.text


async def test_a_callback_policy_sees_the_request_with_its_subject_already_applied() -> None:
    """PR-04: the tool_call subject patches the stored tool call before the policy runs;
    PR-03: the permission title is not copied onto the tool call."""
    seen: list[tuple[str, str | None, str | None]] = []

    async def policy(request: PermissionRequest) -> str:
        call = request.tool_call
        assert call is not None
        seen.append((request.title, call.title, call.status))
        return "allow_always"

    with anyio.fail_after(TIMEOUT):
        async with in_process(permissions=policy) as client:
            session = await client.new_session()
            assert await (await session.prompt("tools")).wait() == "end_turn"
    assert seen == [("Allow editing hello.txt?", "Edit hello.txt", "pending")]


async def test_the_chosen_option_id_is_what_the_agent_receives() -> None:
    """PR-07: outcome selected with the optionId the policy returned."""
    with anyio.fail_after(TIMEOUT):
        async with in_process(permissions=lambda request: "reject_always") as client:
            session = await client.new_session()
            work = await session.prompt("permission May I?")
            assert await work.wait() == "end_turn"
            assert work.text == "You chose: reject_always"


@pytest.mark.parametrize(
    "policy",
    [lambda request: "not-offered", lambda request: None, lambda request: 1 / 0],
    ids=["unoffered-option", "declined", "policy-raises"],
)
async def test_a_declining_or_broken_policy_is_answered_cancelled(policy: object) -> None:
    """PR-08, D-30: an unoffered id, None, or an exception becomes outcome cancelled."""
    with anyio.fail_after(TIMEOUT):
        async with in_process(permissions=policy) as client:  # type: ignore[arg-type]
            session = await client.new_session()
            work = await session.prompt("permission ok?")
            assert await work.wait() == "end_turn"
            assert work.text == "You chose: cancelled"


async def test_the_interactive_policy_reads_a_number_and_shows_the_options() -> None:
    """PR-06 (interactive): numbered options on output, the choice read from input."""
    out = io.StringIO()
    policy = interactive(input=io.StringIO("3\n"), output=out)
    with anyio.fail_after(TIMEOUT):
        async with in_process(permissions=policy) as client:
            session = await client.new_session()
            work = await session.prompt("permission Proceed?")
            assert await work.wait() == "end_turn"
            assert work.text == "You chose: reject_once"
    shown = out.getvalue()
    assert "[permission] Proceed?" in shown
    assert "[y] Allow once  [a] Always allow  [n] Reject  [4] Always reject" in shown


async def test_the_interactive_policy_takes_a_letter_and_shows_no_agent_escape() -> None:
    """y picks allow-once; the agent's title reaches the output without its ESC bytes."""
    out = io.StringIO()
    policy = interactive(input=io.StringIO("y\n"), output=out)
    with anyio.fail_after(TIMEOUT):
        async with in_process(permissions=policy) as client:
            session = await client.new_session()
            work = await session.prompt("permission Go\x1b]0;pwned\x07?")
            assert await work.wait() == "end_turn"
            assert work.text == "You chose: allow_once"
    assert "\x1b" not in out.getvalue()
    assert "Go^[]0;pwned^G?" in out.getvalue()


async def test_interactive_policy_declines_on_end_of_input() -> None:
    """PR-08: no answer is never approval."""
    policy = interactive(input=io.StringIO(""), output=io.StringIO())
    with anyio.fail_after(TIMEOUT):
        async with in_process(permissions=policy) as client:
            session = await client.new_session()
            work = await session.prompt("permission Proceed?")
            assert await work.wait() == "end_turn"
            assert work.text == "You chose: cancelled"


async def test_cancel_request_from_the_agent_answers_the_pending_permission_cancelled() -> None:
    """PR-10, D-15: `$/cancel_request` for a pending permission request is answered with
    outcome cancelled (not -32800), and the policy's wait is abandoned."""
    release = anyio.Event()

    async def slow_policy(request: PermissionRequest) -> str:
        await release.wait()
        return "allow_once"

    async def script(fake, msg):  # type: ignore[no-untyped-def]
        method = msg.get("method")
        if method == "initialize":
            await fake.respond(msg, initialize_result())
        elif method == "session/new":
            await fake.respond(msg, {"sessionId": "s1"})

    params = {
        "sessionId": "s1",
        "title": "Run it?",
        "options": [{"optionId": "ok", "name": "OK", "kind": "allow_once"}],
    }
    with anyio.fail_after(TIMEOUT):
        async with fake_agent(script, permissions=slow_policy) as (client, fake):
            session = await client.new_session()
            rid = await fake.request("session/request_permission", params)
            while not session._permissions:
                await session._wait_change()
            await fake.send(
                {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": rid}}
            )
            (answer,) = await fake.wait_for(lambda: fake.answers_to(rid))
            assert answer["result"] == {"outcome": {"outcome": "cancelled"}}
            assert not session._permissions


async def test_a_permission_request_for_an_unknown_session_is_declined() -> None:
    """PR-08: never approve what cannot be shown to the user."""

    async def script(fake, msg):  # type: ignore[no-untyped-def]
        if msg.get("method") == "initialize":
            await fake.respond(msg, initialize_result())

    params = {
        "sessionId": "nope",
        "title": "Run it?",
        "options": [{"optionId": "ok", "name": "OK", "kind": "allow_once"}],
    }
    with anyio.fail_after(TIMEOUT):
        async with fake_agent(script, permissions=allow_all) as (_client, fake):
            rid = await fake.request("session/request_permission", params)
            answers = await fake.wait_for(lambda: fake.answers_to(rid))
            assert answers[0]["result"] == {"outcome": {"outcome": "cancelled"}}


def test_the_permission_modes_are_one_literal_and_the_cli_offers_exactly_those() -> None:
    import typing

    from acp2.cli.main import build_parser
    from acp2.client.permissions import PERMISSION_MODES, PermissionMode

    assert typing.get_args(PermissionMode) == PERMISSION_MODES
    for command in ("run", "chat"):
        parser = build_parser([command])
        with pytest.raises(SystemExit):
            parser.parse_args([command, "--permission", "maybe"])
        for mode in PERMISSION_MODES:
            assert parser.parse_args([command, "--permission", mode]).permission == mode
