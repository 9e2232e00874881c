"""The coding agent end to end: a fake OpenAI-compatible server on 127.0.0.1 drives the
real agent, and the real client runtime reads the session/update stream (PL-*, TC-*)."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from coder_helpers import (
    TIMEOUT,
    Recorder,
    coder_session,
    group_alive,
    group_members,
    kinds,
    snapshot,
    text_of,
    thoughts_of,
    wait_gone,
)
from fake_openai import FakeOpenAI, Gate, Reply, chunk, serve, text_reply, tool_reply, usage_chunk
from msgspec import UNSET

from acp2.client import allow_all, deny_all
from acp2.coder import CoderSettings, build_coder_agent
from acp2.coder.providers.openai import OpenAIConfig, OpenAIModel
from acp2.coder.tools.confine import CommandPolicy
from acp2.schema import (
    AgentMessageChunk,
    Diff,
    StateUpdate,
    SystemPrompt,
    TerminalOutputChunk,
    TextContent,
    ToolCallUpdate,
    UsageUpdate,
)
from helpers.inprocess import served

pytestmark = pytest.mark.anyio


def agent_for(fake: FakeOpenAI, **settings: Any) -> Any:
    config = OpenAIConfig(
        model="fake", base_url=fake.url, api_key="sk-x", max_retries=2, backoff=0.001
    )
    return build_coder_agent(
        OpenAIModel(config), store=":memory:", settings=CoderSettings(**settings)
    )


def states(updates: list[Any]) -> list[str]:
    return [u.state for u in updates if isinstance(u, StateUpdate)]


async def test_streamed_text_reasoning_and_usage_reach_the_client_and_the_turn_ends() -> None:
    with serve() as fake, anyio.fail_after(TIMEOUT):
        fake.add(
            Reply(
                events=[
                    chunk(reasoning="Thinking it over. "),
                    chunk("Hello "),
                    chunk("there."),
                    chunk(finish="stop"),
                    usage_chunk(40, 2),
                ]
            )
        )
        async with coder_session(agent_for(fake, context_window=1000), "/tmp") as session:
            work = await session.prompt("hi")
            assert await work.wait() == "end_turn"
    updates = work.updates
    assert thoughts_of(updates) == "Thinking it over. "
    assert text_of(updates) == "Hello there."
    usage = [u for u in updates if isinstance(u, UsageUpdate)]
    assert [(u.used, u.size) for u in usage] == [(42, 1000)]
    assert kinds(updates)[0] == "user_message"
    assert states(updates) == ["running", "idle"]
    assert fake.requests[0]["messages"][-1] == {"role": "user", "content": "hi"}


async def test_the_idle_carries_the_tokens_of_every_exchange_of_the_turn(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    cached = usage_chunk(100, 4)
    cached["usage"]["prompt_tokens_details"] = {"cached_tokens": 80}
    with serve() as fake, anyio.fail_after(TIMEOUT):
        fake.add(
            tool_reply([("r1", "read_file", {"path": "a.txt"})], usage=(50, 10)),
            Reply(events=[chunk("Read it."), chunk(finish="stop"), cached]),
        )
        async with coder_session(agent_for(fake), tmp_path) as session:
            work = await session.prompt("read a.txt")
            assert await work.wait() == "end_turn"
            totals = session.state.token_totals
    idle = [u for u in work.updates if isinstance(u, StateUpdate)][-1]
    assert idle.state == "idle"
    assert idle.usage is not UNSET
    assert idle.usage is not None
    counts = (idle.usage.input_tokens, idle.usage.output_tokens, idle.usage.total_tokens)
    assert counts == (150, 14, 164)
    assert idle.usage.cached_read_tokens == 80
    assert totals is not None
    assert (totals.turns, totals.total) == (1, 164)


async def test_a_fork_goes_on_from_a_copy_of_the_conversation_and_the_source_keeps_its_own(
    tmp_path: Path,
) -> None:
    with serve() as fake, anyio.fail_after(TIMEOUT):
        fake.add(text_reply("first answer"), text_reply("in the fork"), text_reply("source"))
        async with served(agent_for(fake), cwd=str(tmp_path)) as client:
            source = await client.new_session(str(tmp_path))
            await (await source.prompt("remember kiwi")).wait()
            forked = await client.fork(source.id, cwd=str(tmp_path))
            await (await forked.prompt("what fruit?")).wait()
            await (await source.prompt("and now?")).wait()
    in_fork = [m["content"] for m in fake.requests[1]["messages"] if m["role"] != "system"]
    assert in_fork == ["remember kiwi", "first answer", "what fruit?"]
    in_source = [m["content"] for m in fake.requests[2]["messages"] if m["role"] != "system"]
    assert in_source == ["remember kiwi", "first answer", "and now?"]


@pytest.mark.parametrize("mode", ["override", "append"])
async def test_a_client_system_prompt_reaches_the_model_as_its_system_message(
    tmp_path: Path, mode: str
) -> None:
    prompt = SystemPrompt(mode=mode, content=[TextContent(text="Answer in French.")])
    with serve() as fake, anyio.fail_after(TIMEOUT):
        fake.add(text_reply("Bonjour"))
        async with served(agent_for(fake), cwd=str(tmp_path)) as client:
            session = await client.new_session(str(tmp_path), system_prompt=prompt)
            await (await session.prompt("hi")).wait()
    system = fake.requests[0]["messages"][0]
    assert system["role"] == "system"
    if mode == "override":
        assert system["content"] == "Answer in French."
    else:
        assert system["content"].startswith("You are a careful coding agent")
        assert system["content"].endswith("\n\nAnswer in French.")


async def test_steering_during_the_answer_is_taken_before_the_turn_ends(tmp_path: Path) -> None:
    gate = Gate()
    with serve() as fake, anyio.fail_after(TIMEOUT):
        fake.add(
            Reply(events=[chunk("Working"), gate, chunk(finish="stop"), usage_chunk(5, 1)]),
            text_reply("Using tabs."),
        )
        async with served(agent_for(fake), cwd=str(tmp_path)) as client:
            session = await client.new_session(str(tmp_path))
            started = anyio.Event()
            session.add_listener(
                lambda u, raw: started.set() if isinstance(u, AgentMessageChunk) else None
            )
            work = await session.prompt("indent the file")
            await started.wait()
            steered = await client.steer(session.id, "use tabs")
            gate.open()
            assert await work.wait() == "end_turn"
    assert steered is not None
    second = [(m["role"], m["content"]) for m in fake.requests[1]["messages"][1:]]
    assert second == [
        ("user", "indent the file"),
        ("assistant", "Working"),
        ("user", "use tabs"),
    ]
    assert "Using tabs." in session.state.agent_text()


async def test_tool_calls_across_exchanges_are_reported_run_and_sent_back(
    tmp_path: Path,
) -> None:
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    with serve() as fake, anyio.fail_after(TIMEOUT):
        fake.add(
            tool_reply(
                [("r1", "read_file", {"path": "calc.py"}), ("s1", "search", {"pattern": "return"})],
                text="Looking.",
            ),
            tool_reply(
                [
                    (
                        "e1",
                        "edit_file",
                        {"path": "calc.py", "old_string": "a - b", "new_string": "a + b"},
                    )
                ]
            ),
            text_reply("Fixed the sign."),
        )
        async with coder_session(agent_for(fake), tmp_path) as session:
            work = await session.prompt("fix add")
            assert await work.wait() == "end_turn"
            calls = session.state.tool_calls
    assert (tmp_path / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert len(fake.requests) == 3
    tool_results = [m for m in fake.requests[1]["messages"] if m["role"] == "tool"]
    assert tool_results[0]["content"] == "def add(a, b):\n    return a - b\n"
    assert tool_results[1]["content"] == "calc.py:2:     return a - b"
    assert [(c.title, c.kind, c.status) for c in calls.values()] == [
        ("Read calc.py", "read", "completed"),
        ("Search /return/ in .", "search", "completed"),
        ("Edit calc.py", "edit", "completed"),
    ]
    edit = list(calls.values())[2]
    assert isinstance(edit.content[0], Diff)
    assert edit.locations[0].path == str(tmp_path / "calc.py")
    # pending -> permission (requires_action -> running) -> in_progress -> completed
    updates = work.updates
    edit_id = edit.tool_call_id
    trail = [
        u.status if isinstance(u, ToolCallUpdate) else u.state
        for u in updates
        if (
            isinstance(u, ToolCallUpdate)
            and u.tool_call_id == edit_id
            and isinstance(u.status, str)
        )
        or isinstance(u, StateUpdate)
    ]
    assert trail == [
        "running",
        "pending",
        "requires_action",
        "running",
        "in_progress",
        "completed",
        "idle",
    ]


async def test_a_length_stop_ends_the_turn_with_max_tokens() -> None:
    with serve() as fake, anyio.fail_after(TIMEOUT):
        fake.add(text_reply("This answer was cut", finish="length"))
        async with coder_session(agent_for(fake), "/tmp") as session:
            work = await session.prompt("write an essay")
            assert await work.wait() == "max_tokens"
    assert text_of(work.updates) == "This answer was cut"


async def test_a_content_filter_stop_ends_the_turn_with_refusal() -> None:
    with serve() as fake, anyio.fail_after(TIMEOUT):
        fake.add(
            Reply(events=[chunk(refusal="I can't help with that."), chunk(finish="content_filter")])
        )
        async with coder_session(agent_for(fake), "/tmp") as session:
            work = await session.prompt("something bad")
            assert await work.wait() == "refusal"
    assert text_of(work.updates) == "I can't help with that."


async def test_too_many_model_requests_end_with_max_turn_requests(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    with serve() as fake, anyio.fail_after(TIMEOUT):
        fake.add(*[tool_reply([(f"c{i}", "read_file", {"path": "a.txt"})]) for i in range(5)])
        async with coder_session(agent_for(fake, max_requests=2), tmp_path) as session:
            work = await session.prompt("loop forever")
            assert await work.wait() == "max_turn_requests"
    assert len(fake.requests) == 2


async def test_a_429_is_retried_and_the_turn_succeeds() -> None:
    with serve() as fake, anyio.fail_after(TIMEOUT):
        fake.add(
            Reply(
                status=429,
                body={"error": {"message": "rate limited"}},
                headers={"Retry-After": "0"},
            ),
            text_reply("Back in business."),
        )
        async with coder_session(agent_for(fake), "/tmp") as session:
            work = await session.prompt("hi")
            assert await work.wait() == "end_turn"
    assert text_of(work.updates) == "Back in business."
    assert len(fake.requests) == 2


async def test_a_server_failing_every_retry_ends_the_turn_with_a_clear_error() -> None:
    with serve() as fake, anyio.fail_after(TIMEOUT):
        fake.add(*[Reply(status=500, body={"error": {"message": "kaput"}})] * 3)
        async with coder_session(agent_for(fake), "/tmp") as session:
            work = await session.prompt("hi")
            reason = await work.wait()
            messages = list(session.state.messages.values())
    assert reason == "error"
    assert len(fake.requests) == 3
    shown = " ".join(b.text for m in messages if m.kind == "agent" for b in m.content)
    assert "failed 3 times" in shown
    assert "HTTP 500" in shown
    assert "kaput" in shown


async def test_cancel_mid_stream_closes_the_http_stream_and_ends_cancelled() -> None:
    with serve() as fake, anyio.fail_after(TIMEOUT):
        fake.add(Reply(events=[chunk("Starting a long answer")], hold=True))
        async with coder_session(agent_for(fake), "/tmp") as session:
            work = await session.prompt("talk")
            async for update in work:
                if isinstance(update, AgentMessageChunk):
                    break
            await session.cancel()
            assert await work.wait() == "cancelled"
        assert await anyio.to_thread.run_sync(fake.disconnected.wait, 5)
    assert isinstance(work.updates[-1], StateUpdate)
    assert work.updates[-1].state == "idle"


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc")
async def test_cancel_mid_command_kills_the_process_group_before_the_idle(tmp_path: Path) -> None:
    command = "sleep 60 & echo pgid $$; wait"
    with serve() as fake, anyio.fail_after(TIMEOUT):
        fake.add(tool_reply([("x1", "run_command", {"command": command})]))
        unconfined = CommandPolicy(sandbox="none")  # the shell's $$ is the host's pgid
        agent = agent_for(fake, commands=unconfined)
        async with coder_session(agent, tmp_path, permissions=allow_all) as session:
            work = await session.prompt("run it")
            output = b""
            async for update in work:
                if isinstance(update, TerminalOutputChunk):
                    output += base64.b64decode(update.data)
                    if output.endswith(b"\n"):
                        break
            pgid = int(output.split()[1])
            members = group_members(pgid)
            assert len(members) == 2  # the shell and its background sleep
            await session.cancel()
            assert await work.wait() == "cancelled"
            call = next(iter(session.state.tool_calls.values()))
            terminal = next(iter(session.state.terminals.values()))
        await wait_gone(members)
    assert not group_alive(pgid)
    assert call.status == "cancelled"
    assert terminal.exit_status is not None
    assert len(fake.requests) == 1  # nothing more was asked of the model


async def test_allow_always_is_remembered_for_the_rest_of_the_session(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    policy = Recorder("allow_always")
    with serve() as fake, anyio.fail_after(TIMEOUT):
        fake.add(
            tool_reply([("w1", "write_file", {"path": "a.txt", "content": "two\n"})]),
            text_reply("ok"),
            tool_reply([("w2", "write_file", {"path": "b.txt", "content": "three\n"})]),
            text_reply("ok again"),
        )
        async with coder_session(agent_for(fake), tmp_path, permissions=policy) as session:
            assert await (await session.prompt("first")).wait() == "end_turn"
            assert await (await session.prompt("second")).wait() == "end_turn"
    assert len(policy.requests) == 1
    assert (tmp_path / "a.txt").read_text() == "two\n"
    assert (tmp_path / "b.txt").read_text() == "three\n"
    # the second prompt continued the same conversation
    assert [m["content"] for m in fake.requests[2]["messages"] if m["role"] == "user"] == [
        "first",
        "second",
    ]


async def test_a_rejected_edit_fails_the_call_and_the_model_is_told(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("keep\n")
    with serve() as fake, anyio.fail_after(TIMEOUT):
        fake.add(
            tool_reply(
                [("e1", "edit_file", {"path": "a.txt", "old_string": "keep", "new_string": "lose"})]
            ),
            text_reply("Understood."),
        )
        async with coder_session(agent_for(fake), tmp_path, permissions=deny_all) as session:
            assert await (await session.prompt("change it")).wait() == "end_turn"
            call = next(iter(session.state.tool_calls.values()))
    assert (tmp_path / "a.txt").read_text() == "keep\n"
    assert call.status == "failed"
    told = [m["content"] for m in fake.requests[1]["messages"] if m["role"] == "tool"]
    assert told == ["Error: the user rejected this action."]


async def test_commands_ask_with_a_command_subject_in_the_session_cwd(tmp_path: Path) -> None:
    policy = Recorder("allow_once")
    with serve() as fake, anyio.fail_after(TIMEOUT):
        fake.add(tool_reply([("c1", "run_command", {"command": "echo hi"})]), text_reply("ok"))
        async with coder_session(agent_for(fake), tmp_path, permissions=policy) as session:
            assert await (await session.prompt("say hi")).wait() == "end_turn"
            terminal = next(iter(session.state.terminals.values()))
    subject = policy.requests[0].command
    assert subject is not None
    assert (subject.command, subject.cwd) == ("echo hi", str(tmp_path))
    assert bytes(terminal.output) == b"hi\n"
    assert terminal.exit_status.exit_code == 0
    told = [m["content"] for m in fake.requests[1]["messages"] if m["role"] == "tool"]
    assert told == ["The command exited with status 0.\nhi\n"]


async def test_a_model_trying_to_escape_the_roots_changes_nothing(tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("SECRET\n")
    work_dir = tmp_path / "work"
    work_dir.mkdir()
    (work_dir / "link").symlink_to(tmp_path / "outside")
    secret = str(tmp_path / "outside" / "secret.txt")
    attempts = [
        ("a1", "read_file", {"path": "../outside/secret.txt"}),
        ("a2", "read_file", {"path": secret}),
        ("a3", "read_file", {"path": "link/secret.txt"}),
        ("a4", "write_file", {"path": "link/new.txt", "content": "x"}),
        ("a5", "edit_file", {"path": secret, "old_string": "SECRET", "new_string": "x"}),
        ("a6", "write_file", {"path": "../escape.txt", "content": "x"}),
        ("a7", "search", {"pattern": "SECRET", "path": ".."}),
        ("a8", "list_files", {"path": "/"}),
    ]
    before = snapshot(tmp_path)
    policy = Recorder("allow_always")
    with serve() as fake, anyio.fail_after(TIMEOUT):
        fake.add(tool_reply(attempts), text_reply("I give up."))
        async with coder_session(agent_for(fake), work_dir, permissions=policy) as session:
            assert await (await session.prompt("get out")).wait() == "end_turn"
            statuses = {c.status for c in session.state.tool_calls.values()}
    assert snapshot(tmp_path) == before
    assert statuses == {"failed"}
    assert not policy.requests
    told = [m["content"] for m in fake.requests[1]["messages"] if m["role"] == "tool"]
    assert len(told) == len(attempts)
    assert all(t.startswith("Error: ") and "outside the workspace" in t for t in told)
    assert not any("SECRET" in t for t in told)


async def test_cancel_while_asking_permission_ends_cancelled_and_writes_nothing(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.txt").write_text("keep\n")
    asked = anyio.Event()

    async def never_answers(request: Any) -> Any:
        asked.set()
        await anyio.sleep_forever()

    with serve() as fake, anyio.fail_after(TIMEOUT):
        fake.add(tool_reply([("w1", "write_file", {"path": "a.txt", "content": "lose\n"})]))
        async with coder_session(agent_for(fake), tmp_path, permissions=never_answers) as session:
            work = await session.prompt("overwrite it")
            await asked.wait()
            await session.cancel()
            assert await work.wait() == "cancelled"
            call = next(iter(session.state.tool_calls.values()))
    assert (tmp_path / "a.txt").read_text() == "keep\n"
    assert call.status == "cancelled"


async def test_additional_directories_are_part_of_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "main").mkdir()
    (tmp_path / "lib").mkdir()
    target = tmp_path / "lib" / "shared.txt"
    with serve() as fake, anyio.fail_after(TIMEOUT):
        fake.add(
            tool_reply([("w1", "write_file", {"path": str(target), "content": "shared\n"})]),
            text_reply("ok"),
        )
        async with coder_session(
            agent_for(fake), tmp_path / "main", additional=[tmp_path / "lib"]
        ) as session:
            assert await (await session.prompt("write it")).wait() == "end_turn"
    assert target.read_text() == "shared\n"
    assert str(tmp_path / "lib") in fake.requests[0]["messages"][0]["content"]
