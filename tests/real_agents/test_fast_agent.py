"""``acp2 run`` and acp2's client against fast-agent 0.10.48 (``fast-agent acp``, ACP v1),
installed from ``py/requirements-fast-agent.txt`` into a CPython 3.12 venv and pointed
at the fake OpenAI-compatible server of ``tests/coder/fake_openai.py``.

What fast-agent does here (on the tapped wire): it answers ``initialize`` in the v1
shape (``agentCapabilities``, ``agentInfo``) but echoes the protocol version asked (2),
offers its ``read_text_file`` / ``write_text_file`` tools only when the
client offers ``fs``, asks ``session/request_permission`` before each tool call (the
call announced with ``tool_call`` first), reads a file before it writes it and takes
``-32002`` for a missing file as "new file", reports a failed read to the model, runs
its shell tool (``--shell``) as ``execute`` on the client's terminals when the
client offers them (as ``bash`` locally otherwise), and ends
a cancelled turn with ``stopReason: "cancelled"``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from acp2.client import allow_all, connect
from interop.wire import read_log

from .agents import RUN_TIMEOUT, Agent, fast_agent, need_run_options, requests_of, run, tapped

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "coder"))

from fake_openai import FakeOpenAI, Reply, chunk, serve, text_reply, tool_reply

pytestmark = pytest.mark.real_agents


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with serve() as server:
        yield server


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "notes.txt").write_text("some notes\n")
    return folder


@pytest.fixture
def agent(fast_agent_cmd: list[str], fake: FakeOpenAI, tmp_path: Path) -> Agent:
    return fast_agent(fast_agent_cmd, fake.url, tmp_path)


def file_tools(project: Path) -> list[Reply]:
    """Read notes.txt, write hello.txt (new), read missing.txt, then say so."""
    return [
        tool_reply([("call_1", "read_text_file", {"path": str(project / "notes.txt")})]),
        tool_reply(
            [("call_2", "write_text_file", {"path": str(project / "hello.txt"), "content": "hi\n"})]
        ),
        tool_reply([("call_3", "read_text_file", {"path": str(project / "missing.txt")})]),
        text_reply("All done."),
    ]


def tool_results(fake: FakeOpenAI) -> list[str]:
    """What the agent told the model each tool returned, in order."""
    messages = fake.requests[-1]["messages"]
    return [m["content"] for m in messages if m["role"] == "tool"]


def test_acp2_run_prints_the_streamed_text_and_ends_with_end_turn(
    agent: Agent, fake: FakeOpenAI, project: Path
) -> None:
    fake.add(text_reply("Hello from the fake model."))
    done = run(agent, "say hello", project)
    assert done.returncode == 0, done.stderr
    assert done.schema_errors == []
    assert done.summary["stopReason"] == "end_turn"
    assert done.summary["text"] == "Hello from the fake model."
    states = [u["state"] for u in done.updates("state_update")]
    assert (states[0], states[-1]) == ("running", "idle")
    assert fake.requests[0]["messages"][-1] == {"role": "user", "content": "say hello"}
    # It echoes version 2 in a v1-shaped answer; acp2 goes by the shape and speaks v1.
    answer = next(f.message for f in done.wire if f.sender == "agent" and f.kind == "response")
    assert answer["result"]["protocolVersion"] == 2
    assert "agentCapabilities" in answer["result"]


def test_acp2_run_fs_answers_the_permissions_and_file_requests(
    agent: Agent, fake: FakeOpenAI, project: Path
) -> None:
    need_run_options("--fs")
    fake.add(*file_tools(project))
    done = run(agent, "use the files", project, "--fs")
    assert done.returncode == 0, done.stderr
    assert done.schema_errors == []
    assert done.summary["text"] == "All done."
    # The agent asks once per tool call; the bridge asks once more before the write.
    titles = [asked.get("title", "") for asked, _ in done.permissions()]
    assert len(requests_of(done.wire, "session/request_permission")) == 3
    assert [t for t in titles if t.startswith("Write ")] == [f"Write {project / 'hello.txt'}"]
    assert len(titles) == 4
    assert (project / "hello.txt").read_text() == "hi\n"
    assert tool_results(fake)[0] == "some notes\n"
    assert "Resource not found" in tool_results(fake)[2]


def test_acp2_run_terminal_runs_the_shell_tool_on_a_client_terminal(
    fast_agent_cmd: list[str], fake: FakeOpenAI, project: Path, tmp_path: Path
) -> None:
    need_run_options("--fs", "--terminal")
    agent = fast_agent(fast_agent_cmd, fake.url, tmp_path, shell=True)
    fake.add(
        # On the client's terminals fast-agent's shell tool is "execute" (locally "bash").
        tool_reply([("call_1", "execute", {"command": "echo from-a-terminal > made.txt"})]),
        text_reply("Ran it."),
    )
    done = run(agent, "run a command", project, "--fs", "--terminal")
    assert done.returncode == 0, done.stderr
    assert done.schema_errors == []
    created = requests_of(done.wire, "terminal/create")
    assert len(created) == 1
    assert "terminalId" in created[0][1]["result"]
    assert (project / "made.txt").read_text() == "from-a-terminal\n"


def test_acp2_run_cancel_after_ends_the_turn_cancelled(
    agent: Agent, fake: FakeOpenAI, project: Path
) -> None:
    fake.add(Reply(events=[chunk("Working on it")], hold=True))
    done = run(agent, "take your time", project, "--cancel-after", "6")
    assert done.returncode == 1, done.stderr
    assert done.schema_errors == []
    assert done.summary["stopReason"] == "cancelled"
    idle = [u["stopReason"] for u in done.updates("state_update") if u["state"] == "idle"]
    assert idle == ["cancelled"]
    assert fake.disconnected.wait(RUN_TIMEOUT)  # the agent dropped the model request


@pytest.mark.anyio
async def test_the_client_serves_fs_to_fast_agent_under_the_session_cwd(
    agent: Agent, fake: FakeOpenAI, project: Path, tmp_path: Path
) -> None:
    fake.add(*file_tools(project))
    log = tmp_path / "wire.jsonl"
    with anyio.fail_after(RUN_TIMEOUT):
        async with connect(
            tapped(agent, log), cwd=project, env=agent.env, permissions=allow_all,
            files=True, initialize_timeout=RUN_TIMEOUT,
        ) as client:  # fmt: skip
            session = await client.new_session()
            work = await session.prompt("use the files")
            stop = await work.wait()
    assert (stop, work.text) == ("end_turn", "All done.")
    assert (project / "hello.txt").read_text() == "hi\n"
    wire = read_log(log)
    reads = requests_of(wire, "fs/read_text_file")
    missing = [answer for params, answer in reads if params["path"].endswith("missing.txt")]
    assert [answer["error"]["code"] for answer in missing] == [-32002]
    assert len(requests_of(wire, "session/request_permission")) == 3
    assert tool_results(fake)[0] == "some notes\n"
    assert "Resource not found" in tool_results(fake)[2]
