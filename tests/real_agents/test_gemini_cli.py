"""``acp2 run`` and acp2's client against Gemini CLI 0.61.0 (``gemini --acp``, ACP v1),
installed from ``npm/package-lock.json`` and pointed at the fake Gemini API.

What Gemini CLI does here (all on the tapped wire): it answers ``initialize`` with
protocol version 1 whatever was asked, sends its first ``available_commands_update``
right with the ``session/new`` answer, numbers its own requests from ``0``, asks
``session/request_permission`` for a tool call it never announced with ``tool_call``,
reads a file before ``write_file`` writes it (through ``fs/read_text_file`` when the
client offers it, and breaks on any error answer there: acp2 answers it empty), reads
files for ``read_file`` itself, runs shell commands itself (never ``terminal/*``) and
ends a cancelled turn with ``stopReason: "cancelled"``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp2.client import allow_all, connect
from interop.wire import read_log

from . import fake_gemini
from .agents import (
    RUN_TIMEOUT,
    Agent,
    gemini,
    need_run_options,
    requests_of,
    run,
    run_flags,
    tapped,
)
from .fake_gemini import FakeGemini

pytestmark = pytest.mark.real_agents


@pytest.fixture
def fake() -> Iterator[FakeGemini]:
    with fake_gemini.serve() as server:
        yield server


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


@pytest.fixture
def agent(gemini_js: Path, fake: FakeGemini, tmp_path: Path) -> Agent:
    return gemini(gemini_js, fake.url, tmp_path)


def fs_option() -> list[str]:
    return ["--fs"] if "--fs" in run_flags() else []


def processes_with_home(home: str) -> list[int]:
    """The pids whose environment has ``HOME=home`` (this test's agent processes)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:  # not a pid, gone, or not ours to read
            continue
        if f"HOME={home}".encode() in environ:
            found.append(int(entry.name))
    return found


def test_acp2_run_prints_the_streamed_text_and_ends_with_end_turn(
    agent: Agent, fake: FakeGemini, project: Path
) -> None:
    fake.add(fake_gemini.text("Hello ", "from the fake Gemini."))
    done = run(agent, "say hello", project)
    assert done.returncode == 0, done.stderr
    assert done.schema_errors == []
    assert done.summary["stopReason"] == "end_turn"
    assert done.summary["text"] == "Hello from the fake Gemini."
    states = [u["state"] for u in done.updates("state_update")]
    assert (states[0], states[-1]) == ("running", "idle")
    # The update Gemini sends with its session/new answer is not lost.
    assert done.updates("available_commands_update")
    assert "dropped" not in done.stderr
    # The prompt reached the model.
    (body,) = fake.streamed()
    assert body["contents"][-1]["parts"][-1] == {"text": "say hello"}


def test_acp2_run_answers_the_permission_of_a_file_write(
    agent: Agent, fake: FakeGemini, project: Path
) -> None:
    target = project / "hello.txt"
    fake.add(
        fake_gemini.call("write_file", {"file_path": str(target), "content": "hello, world\n"}),
        fake_gemini.text("Wrote hello.txt."),
    )
    done = run(agent, "write hello.txt", project, *fs_option())
    assert done.returncode == 0, done.stderr
    assert done.schema_errors == []
    assert done.summary["text"] == "Wrote hello.txt."
    (asked, answer), *_ = done.permissions()
    assert any(o["kind"] == "allow_once" for o in asked["options"])
    assert answer["outcome"]["outcome"] == "selected"
    assert target.read_text() == "hello, world\n"
    tool_calls = done.updates("tool_call_update")
    assert tool_calls[-1]["status"] == "completed"
    # What the model was told: the write succeeded.
    response = fake.streamed()[-1]["contents"][-1]["parts"][0]["functionResponse"]
    assert "output" in response["response"], response


def test_the_permission_line_of_a_new_file_carries_its_diff_as_a_creation(
    agent: Agent, fake: FakeGemini, project: Path
) -> None:
    # Gemini CLI sends a write's diff only in its permission request (oldText "",
    # _meta.kind "add"): the person must see it before answering (issue 26).
    target = project / "fresh.txt"
    fake.add(
        fake_gemini.call("write_file", {"file_path": str(target), "content": "fresh line\n"}),
        fake_gemini.text("Created it."),
    )
    done = run(agent, "create fresh.txt", project)
    assert done.returncode == 0, done.stderr
    (asked, _), *_ = done.permissions()
    call = asked["subject"]["toolCall"]
    (diff,) = [item for item in call["content"] if item["type"] == "diff"]
    assert diff["changes"] == [{"operation": "add", "path": str(target), "fileType": "text"}]
    assert "--- /dev/null" in diff["patch"]["text"]
    assert "+fresh line" in diff["patch"]["text"]
    assert [location["path"] for location in call["locations"]] == [str(target)]
    assert target.read_text() == "fresh line\n"


def test_acp2_run_fs_serves_the_read_and_the_write_of_gemini(
    agent: Agent, fake: FakeGemini, project: Path
) -> None:
    need_run_options("--fs")
    target = project / "new.txt"
    fake.add(
        fake_gemini.call("write_file", {"file_path": str(target), "content": "new\n"}),
        fake_gemini.text("Done."),
    )
    done = run(agent, "write new.txt", project, "--fs")
    assert done.returncode == 0, done.stderr
    assert done.schema_errors == []
    reads = requests_of(done.wire, "fs/read_text_file")
    writes = requests_of(done.wire, "fs/write_text_file")
    assert reads
    assert all(answer["result"] == {"content": ""} for _, answer in reads)
    assert [(params["path"], answer["result"]) for params, answer in writes] == [(str(target), {})]
    assert target.read_text() == "new\n"


def test_acp2_run_answers_the_permission_of_a_shell_command(
    agent: Agent, fake: FakeGemini, project: Path
) -> None:
    command = {"command": "touch made-by-shell.txt", "description": "make a file"}
    fake.add(fake_gemini.call("run_shell_command", command), fake_gemini.text("Ran it."))
    done = run(agent, "run a command", project)
    assert done.returncode == 0, done.stderr
    assert done.schema_errors == []
    assert len(done.permissions()) == 1
    assert (project / "made-by-shell.txt").exists()
    # After a shell command Gemini CLI does not exit when its stdin closes: acp2 ends
    # its process group (SIGKILL after the graces), nothing of it is left.
    assert processes_with_home(agent.env["HOME"]) == []
    # The tool call was never announced: the permission request named it first.
    assert requests_of(done.wire, "terminal/create") == []  # Gemini runs it itself


def test_acp2_run_cancel_after_ends_the_turn_cancelled(
    agent: Agent, fake: FakeGemini, project: Path
) -> None:
    fake.add(fake_gemini.text("Working on it", hold=True))
    done = run(agent, "take your time", project, "--cancel-after", "6")
    assert done.returncode == 1, done.stderr
    assert done.schema_errors == []
    assert done.summary["stopReason"] == "cancelled"
    assert [u["stopReason"] for u in done.updates("state_update") if u["state"] == "idle"] == [
        "cancelled"
    ]
    assert fake.disconnected.wait(RUN_TIMEOUT)  # the CLI dropped the model request


def test_acp2_run_resume_continues_a_gemini_session_through_session_load(
    agent: Agent, fake: FakeGemini, project: Path
) -> None:
    # Gemini advertises loadSession but not sessionCapabilities.resume: the resume goes
    # through session/load, its replay withheld (issue 26, fault 3). Before, acp2 sent
    # session/resume and the user got -32601.
    fake.add(fake_gemini.text("First answer."), fake_gemini.text("Second answer."))
    first = run(agent, "remember the word banana", project)
    assert first.returncode == 0, first.stderr
    session_id = first.summary["sessionId"]
    second = run(agent, "which word?", project, "--resume", session_id)
    assert [m for m, _ in requests_of_client(second.wire)] == ["session/load"]
    assert second.schema_errors == []
    if second.returncode != 0:
        # Gemini CLI 0.61.0 often rewrites the session's chat file empty while it loads
        # it, then fails its own lookup; the same with a raw v1 client alone
        # (docs/real-agents.md). Its reason reaches the user in one line (fault 5).
        assert second.stderr == (
            "acp2 run: error: Internal error: No previous sessions found for this project.\n"
        )
        pytest.xfail("Gemini CLI 0.61.0 lost the session while loading it (its own race)")
    assert second.summary == {
        "sessionId": session_id,
        "stopReason": "end_turn",
        "text": "Second answer.",
    }
    shown = [u for u in second.lines[:-1] if "First answer" in str(u)]
    assert shown == []  # the replay is not shown as new
    # The model got the first turn back as context: the session was continued.
    *_, body = fake.streamed()
    said = json.dumps(body["contents"])
    assert "remember the word banana" in said
    assert "which word?" in said


def requests_of_client(wire: list[Any]) -> list[tuple[str, dict[str, Any]]]:
    """(method, params) of the session requests other than new / prompt the client sent."""
    skip = {"initialize", "session/new", "session/prompt"}
    return [
        (f.method, f.message.get("params", {}))
        for f in wire
        if f.sender == "client" and f.kind == "request" and f.method not in skip
        and f.method.startswith("session/")
    ]  # fmt: skip


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc")
def test_no_process_of_the_relaunching_launcher_outlives_acp2_run(
    agent: Agent, fake: FakeGemini, project: Path
) -> None:
    # Without GEMINI_CLI_NO_RELAUNCH gemini.js re-spawns node with a bigger heap and
    # ignores SIGTERM in the parent: the teardown must still leave neither behind.
    agent.env.pop("GEMINI_CLI_NO_RELAUNCH")
    fake.add(fake_gemini.text("Relaunched."))
    done = run(agent, "say it", project)
    assert done.returncode == 0, done.stderr
    assert done.summary["text"] == "Relaunched."
    assert processes_with_home(agent.env["HOME"]) == []


@pytest.mark.anyio
async def test_the_client_serves_fs_to_gemini_under_the_session_cwd(
    agent: Agent, fake: FakeGemini, project: Path, tmp_path: Path
) -> None:
    target = project / "notes.txt"
    fake.add(
        fake_gemini.call("write_file", {"file_path": str(target), "content": "from gemini\n"}),
        fake_gemini.text("Saved."),
    )
    log = tmp_path / "wire.jsonl"
    argv = tapped(agent, log)
    with anyio.fail_after(RUN_TIMEOUT):
        async with connect(
            argv, cwd=project, env=agent.env, permissions=allow_all, files=True,
            initialize_timeout=RUN_TIMEOUT,
        ) as client:  # fmt: skip
            session = await client.new_session()
            work = await session.prompt("save a note")
            stop = await work.wait()
    assert (stop, work.text) == ("end_turn", "Saved.")
    assert target.read_text() == "from gemini\n"
    wire = read_log(log)
    assert [p["path"] for p, _ in requests_of(wire, "fs/write_text_file")] == [str(target)]
    assert requests_of(wire, "session/request_permission")


def test_acp2_run_debug_names_the_fields_of_gemini_that_acp2_decodes_away(
    agent: Agent, fake: FakeGemini, project: Path
) -> None:
    """Fault 5: Gemini's ``session/new`` answer carries v1's unstable ``models`` (its model
    picker), which acp2 does not lift; ``--debug`` says so instead of dropping it
    without a word."""
    fake.add(fake_gemini.text("Hello."))
    done = run(agent, "say hello", project, "--debug")
    assert done.returncode == 0, done.stderr
    ignored = [line for line in done.stderr.splitlines() if "ignored fields" in line]
    assert any(
        "agent: session/new: ignored fields" in line and "'models'" in line for line in ignored
    )
