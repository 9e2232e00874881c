"""run_command: streamed output, exit status, time limit, killing the process group, the
scrubbed environment, and the sandbox (bubblewrap, Landlock) it runs in."""

from __future__ import annotations

import argparse
import functools
import itertools
import os
import subprocess
import sys
from functools import partial
from pathlib import Path

import anyio
import pytest
from coder_helpers import TIMEOUT, Recorder, coder_session, group_alive, group_members, wait_gone
from fake_openai import serve, text_reply, tool_reply

from acp2.cli import agent_cmd
from acp2.coder import build_coder_agent
from acp2.coder.providers.openai import OpenAIConfig, OpenAIModel
from acp2.coder.tools import confine, reaper, shell
from acp2.coder.tools.command_env import command_env, looks_secret
from acp2.coder.tools.confine import CommandPolicy, Confinement, bwrap_argv, choose
from acp2.coder.tools.errors import ToolError
from acp2.coder.tools.shell import run_command
from acp2.schema import ToolCallUpdate
from helpers import timeouts

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups"),
]


class Sink:
    """Collects output; ``seen(text)`` waits until ``text`` has arrived."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.exits: list[tuple[int | None, str | None]] = []
        self._changed = anyio.Event()

    async def write(self, data: bytes) -> None:
        self.data.extend(data)
        self._changed.set()
        self._changed = anyio.Event()

    async def exit(self, exit_code: int | None = None, signal: str | None = None) -> None:
        self.exits.append((exit_code, signal))

    async def seen(self, text: str) -> None:
        while text.encode() not in self.data:
            await self._changed.wait()


#: Commands without a sandbox (the process-group behaviour the sandbox builds on).
UNCONFINED = CommandPolicy(sandbox="none")

needs_proc = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc")


async def test_output_streams_while_the_command_runs(tmp_path: Path) -> None:
    fifo = tmp_path / "gate"
    os.mkfifo(fifo)
    sink = Sink()
    with anyio.fail_after(timeouts.TIMEOUT):
        async with anyio.create_task_group() as tg:
            results = []

            async def run() -> None:
                results.append(
                    await run_command(
                        "echo first; cat gate; echo second",
                        cwd=str(tmp_path),
                        time_limit=10,
                        sink=sink,
                    )
                )

            tg.start_soon(run)
            await sink.seen("first")
            assert not sink.exits  # still running: the output came live
            await anyio.to_thread.run_sync(fifo.write_text, "go\n")
    result = results[0]
    assert result.ok
    assert result.exit_code == 0
    assert result.output == "first\ngo\nsecond\n"
    assert sink.exits == [(0, None)]


async def test_stderr_is_merged_and_the_exit_status_reported(tmp_path: Path) -> None:
    sink = Sink()
    with anyio.fail_after(timeouts.TIMEOUT):
        result = await run_command(
            "echo out; echo err >&2; exit 3", cwd=str(tmp_path), time_limit=10, sink=sink
        )
    assert (result.exit_code, result.ok, result.timed_out) == (3, False, False)
    assert set(result.output.split()) == {"out", "err"}
    assert sink.exits == [(3, None)]


async def test_the_command_runs_in_the_given_directory(tmp_path: Path) -> None:
    with anyio.fail_after(timeouts.TIMEOUT):
        result = await run_command("pwd", cwd=str(tmp_path), time_limit=10, sink=Sink())
    assert result.output == f"{tmp_path}\n"


async def test_a_command_over_its_time_limit_is_stopped(tmp_path: Path) -> None:
    sink = Sink()
    with anyio.fail_after(timeouts.TIMEOUT):
        result = await run_command("sleep 30", cwd=str(tmp_path), time_limit=0.2, sink=sink)
    assert result.timed_out
    assert result.signal == "SIGTERM"
    assert sink.exits == [(None, "SIGTERM")]


@needs_proc
async def test_a_command_ignoring_sigterm_is_killed(tmp_path: Path) -> None:
    sink = Sink()
    with anyio.fail_after(timeouts.TIMEOUT):
        result = await run_command(
            "trap '' TERM; echo ready; sleep 30",
            cwd=str(tmp_path),
            time_limit=0.3,
            sink=sink,
            grace=0.2,
            policy=UNCONFINED,
        )
    assert result.timed_out
    assert result.signal == "SIGKILL"


@needs_proc
async def test_cancelling_kills_the_whole_process_group(tmp_path: Path) -> None:
    sink = Sink()
    with anyio.fail_after(timeouts.TIMEOUT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(
                partial(
                    run_command,
                    "sleep 60 & echo pgid $$; wait",
                    cwd=str(tmp_path),
                    time_limit=60,
                    sink=sink,
                    policy=UNCONFINED,
                )
            )
            await sink.seen("pgid ")
            await sink.seen("\n")
            pgid = int(sink.data.decode().split()[1])
            members = group_members(pgid)
            assert len(members) == 2  # the shell and its background sleep
            tg.cancel_scope.cancel()
        await wait_gone(members)
    assert not group_alive(pgid)
    assert len(sink.exits) == 1
    assert sink.exits[0][1] in ("SIGTERM", "SIGKILL")


@needs_proc
async def test_background_leftovers_do_not_outlive_the_command(tmp_path: Path) -> None:
    fifo = tmp_path / "gate"
    os.mkfifo(fifo)
    sink = Sink()
    with anyio.fail_after(timeouts.TIMEOUT):
        async with anyio.create_task_group() as tg:
            results = []

            async def run() -> None:
                command = "sleep 60 & echo pgid $$; cat gate > /dev/null"
                results.append(
                    await run_command(
                        command, cwd=str(tmp_path), time_limit=60, sink=sink, policy=UNCONFINED
                    )
                )

            tg.start_soon(run)
            await sink.seen("\n")
            pgid = int(sink.data.decode().split()[1])
            members = group_members(pgid)
            await anyio.to_thread.run_sync(fifo.write_text, "go\n")  # the shell exits: 0
        await wait_gone(members)
    assert results[0].exit_code == 0
    assert not group_alive(pgid)


# -- the environment -------------------------------------------------------------------


def test_a_command_gets_the_allow_list_without_secret_names_or_values() -> None:
    source = {
        "PATH": "/usr/bin",
        "HOME": "/home/u",
        "LC_ALL": "C.UTF-8",
        "OPENAI_API_KEY": "sk-abcdef123",
        "GH_TOKEN": "t",
        "EDITOR": "vi",
        "TERM": "xterm",
    }
    env = command_env(source, cwd="/p", secrets=["sk-abcdef123"])
    assert env == {
        "PATH": "/usr/bin",
        "HOME": "/home/u",
        "LC_ALL": "C.UTF-8",
        "TERM": "xterm",
        "PWD": "/p",
    }


def test_extra_names_pass_but_a_secret_name_or_the_key_value_never_does() -> None:
    source = {"PATH": "/bin", "EDITOR": "vi", "MY_AUTH": "x", "ALIAS": "prefix-sk-abcdef123"}
    env = command_env(
        source, cwd="/p", extra=["EDITOR", "MY_AUTH", "ALIAS"], secrets=["sk-abcdef123"]
    )
    assert env["EDITOR"] == "vi"
    assert "MY_AUTH" not in env
    assert "ALIAS" not in env
    assert env["TERM"] == "dumb"


@pytest.mark.parametrize(
    "name", ["OPENAI_API_KEY", "github_token", "AWS_SECRET_ACCESS_KEY", "PGPASSWORD", "X_AUTH"]
)
def test_names_that_look_secret(name: str) -> None:
    assert looks_secret(name)


async def test_a_command_run_directly_does_not_inherit_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-direct-run-key")
    with anyio.fail_after(timeouts.TIMEOUT):
        result = await run_command("env", cwd=str(tmp_path), time_limit=10, sink=Sink())
    output = result.output
    assert "PATH=" in output
    assert "sk-direct-run-key" not in output


# -- choosing and describing the sandbox ----------------------------------------------------


def test_the_permission_text_says_whether_the_command_is_sandboxed() -> None:
    assert Confinement("bubblewrap", "blocked").describe() == (
        "sandboxed: bubblewrap (writes limited to the project and a private /tmp, "
        "home hidden, no network)"
    )
    assert Confinement("landlock", "tcp-blocked").describe().startswith("sandboxed: Landlock (")
    assert "network allowed" in Confinement("bubblewrap", "allowed").describe()
    unconfined = Confinement("none", reason="bubblewrap is not installed").describe()
    assert unconfined.startswith("NOT sandboxed: bubblewrap is not installed")


def test_bwrap_hides_home_binds_the_roots_writable_and_makes_the_rest_read_only() -> None:
    argv = bwrap_argv(CommandPolicy(), cwd="/srv/p", roots=["/srv/p", "/srv/lib"], home="/home/u")
    pairs = list(itertools.pairwise(argv))
    assert "--unshare-net" in argv
    assert "--die-with-parent" in argv
    assert ("--cap-drop", "ALL") in pairs
    assert ("--tmpfs", "/tmp") in pairs
    assert ("--tmpfs", "/home/u") in pairs
    assert ("--bind", "/srv/p") in pairs
    assert ("--bind", "/srv/lib") in pairs
    assert argv.index("/home/u") < argv.index("/srv/p")  # the roots are bound over it
    assert argv[-4:] == ["--remount-ro", "/", "--chdir", "/srv/p"]
    assert "--unshare-net" not in bwrap_argv(
        CommandPolicy(network=True), cwd="/srv/p", roots=["/srv/p"], home="/home/u"
    )


def test_a_home_inside_the_project_is_not_replaced_by_an_empty_one() -> None:
    argv = bwrap_argv(CommandPolicy(), cwd="/home/u", roots=["/home/u"], home="/home/u")
    assert ("--tmpfs", "/home/u") not in list(itertools.pairwise(argv))


async def test_a_required_sandbox_that_is_missing_is_a_tool_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(confine, "_choose", functools.lru_cache(confine._choose.__wrapped__))
    monkeypatch.setattr(confine.landlock, "abi_version", lambda: 0)
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap
    sink = Sink()
    with pytest.raises(ToolError, match="bubblewrap was required"):
        await run_command("touch ran", cwd=str(tmp_path), time_limit=5, sink=sink, policy=BWRAP)
    assert not (tmp_path / "ran").exists()
    assert sink.exits == []


# -- running under a sandbox ------------------------------------------------------------------

BWRAP = CommandPolicy(sandbox="bubblewrap")
LANDLOCK = CommandPolicy(sandbox="landlock")
needs_bwrap = pytest.mark.skipif(
    choose(BWRAP).kind != "bubblewrap",
    reason="bubblewrap is missing or cannot create namespaces here",
)
needs_landlock = pytest.mark.skipif(
    choose(LANDLOCK).kind != "landlock", reason="the kernel has no Landlock"
)


@needs_bwrap
async def test_under_bubblewrap_writes_land_in_the_project_only(tmp_path: Path) -> None:
    project, other = tmp_path / "p", tmp_path / "other"
    project.mkdir()
    other.mkdir()
    command = f"echo in > in.txt; echo out > {other}/out.txt; echo $HOME; ls ~ | wc -l"
    with anyio.fail_after(timeouts.PROCESS_TIMEOUT):
        result = await run_command(command, cwd=str(project), time_limit=20, sink=Sink(),
                                   policy=BWRAP)  # fmt: skip
    assert (project / "in.txt").read_text() == "in\n"
    assert not (other / "out.txt").exists()
    assert result.output.splitlines()[-1] == "0"  # an empty private home


@needs_bwrap
@needs_proc
async def test_under_bubblewrap_a_timeout_and_a_cancel_stop_everything_inside(
    tmp_path: Path,
) -> None:
    marker = f"600.{os.getpid()}{id(tmp_path) % 1000}"
    command = f"sleep {marker} & setsid sleep {marker} & echo ready; wait"
    with anyio.fail_after(timeouts.PROCESS_TIMEOUT):
        result = await run_command(command, cwd=str(tmp_path), time_limit=0.5, sink=Sink(),
                                   policy=BWRAP, grace=0.5)  # fmt: skip
    assert result.timed_out
    # Killed with bubblewrap's PID namespace: each dies within the bound (a killed process
    # needs a moment to exit on a loaded machine), none is left running.
    with anyio.fail_after(timeouts.TIMEOUT):
        await wait_gone(running("sleep", marker))
    sink = Sink()
    with anyio.fail_after(timeouts.PROCESS_TIMEOUT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(partial(run_command, command, cwd=str(tmp_path), time_limit=60,
                                  sink=sink, policy=BWRAP))  # fmt: skip
            await sink.seen("ready")
            tg.cancel_scope.cancel()
    with anyio.fail_after(timeouts.TIMEOUT):
        await wait_gone(running("sleep", marker))


@needs_landlock
async def test_under_landlock_writes_land_in_the_project_and_a_private_tmpdir(
    tmp_path: Path,
) -> None:
    project, other = tmp_path / "p", tmp_path / "other"
    project.mkdir()
    other.mkdir()
    command = f'echo in > in.txt; echo t > "$TMPDIR/t" && echo TMP_OK; echo out > {other}/o'
    with anyio.fail_after(timeouts.PROCESS_TIMEOUT):
        result = await run_command(command, cwd=str(project), time_limit=20, sink=Sink(),
                                   policy=LANDLOCK)  # fmt: skip
    assert (project / "in.txt").read_text() == "in\n"
    assert "TMP_OK" in result.output
    assert not (other / "o").exists()


def running(*argv: str) -> list[int]:
    """Live pids whose command line is exactly ``argv``."""
    wanted = b"".join(a.encode() + b"\0" for a in argv)
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if cmdline == wanted and state != "Z":
            found.append(int(entry))
    return found


# -- the registry of live commands ----------------------------------------------------------


@needs_proc
async def test_kill_all_ends_every_registered_command_group(tmp_path: Path) -> None:
    sink = Sink()
    with anyio.fail_after(timeouts.PROCESS_TIMEOUT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(partial(run_command, "echo pgid $$; sleep 60", cwd=str(tmp_path),
                                  time_limit=60, sink=sink, policy=UNCONFINED))  # fmt: skip
            await sink.seen("\n")
            pgid = int(sink.data.decode().split()[1])
            assert reaper.live_groups() == [pgid]
            reaper.kill_all()
    assert sink.exits == [(None, "SIGKILL")]
    assert reaper.live_groups() == []


# -- the agent's flags and its permission prompt ------------------------------------------------


def test_the_command_flags_make_the_policy_and_the_key_is_a_secret(
    capsys: pytest.CaptureFixture[str],
) -> None:
    parser = argparse.ArgumentParser()
    agent_cmd.add_parser(parser.add_subparsers(dest="command"))
    flags = "--command-sandbox landlock --command-network --api-key sk-flag1 --command-env"
    flags += " EDITOR --command-env NPM_TOKEN --command-read /opt/x"
    args = parser.parse_args(["agent", *flags.split()])
    policy = agent_cmd.command_policy(args, {"OPENAI_API_KEY": "sk-env-22"})
    assert (policy.sandbox, policy.network) == ("landlock", True)
    assert policy.env == ("EDITOR",)
    assert policy.read_only == ("/opt/x",)
    assert set(policy.secrets) == {"sk-flag1", "sk-env-22"}
    assert "not passing NPM_TOKEN" in capsys.readouterr().err
    defaults = agent_cmd.command_policy(parser.parse_args(["agent"]), {})
    assert (defaults.sandbox, defaults.network, defaults.secrets) == ("auto", False, ())


async def test_the_permission_request_and_the_tool_call_say_how_the_command_runs(
    tmp_path: Path,
) -> None:
    policy = Recorder("allow_once")
    with serve() as fake, anyio.fail_after(TIMEOUT):
        fake.add(tool_reply([("c1", "run_command", {"command": "echo hi"})]), text_reply("ok"))
        config = OpenAIConfig(model="f", base_url=fake.url, api_key="sk-inproc-key", max_retries=0)
        agent = build_coder_agent(OpenAIModel(config), store=":memory:")
        async with coder_session(agent, tmp_path, permissions=policy) as session:
            work = await session.prompt("go")
            assert await work.wait() == "end_turn"
            [call] = session.state.tool_calls.values()
    expected = choose(CommandPolicy()).describe()
    assert expected.startswith(("sandboxed: ", "NOT sandboxed: "))
    [request] = policy.requests
    assert request.description == expected
    shown = [u for u in work.updates if isinstance(u, ToolCallUpdate) and u.content]
    assert any(expected in str(u.content) for u in shown)
    assert call.status == "completed"


async def test_a_sandbox_step_failing_in_the_child_is_a_tool_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse() -> None:
        raise OSError("no sandbox for you")

    real = confine.plan_launch

    def failing(*args: object, **kwargs: object) -> confine.Launch:
        launch = real(*args, **kwargs)  # type: ignore[arg-type]
        launch.child_steps = (refuse,)
        return launch

    monkeypatch.setattr(shell, "plan_launch", failing)
    with anyio.fail_after(timeouts.TIMEOUT), pytest.raises(ToolError, match="could not be started"):
        await run_command("touch ran", cwd=str(tmp_path), time_limit=5, sink=Sink())
    assert not (tmp_path / "ran").exists()
    assert reaper.live_groups() == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux")
def test_the_agent_process_hides_its_environment_from_same_user_processes() -> None:
    probe = (
        "import ctypes; from acp2.coder.lifetime import hide_process; "
        "done = hide_process(); print(done, ctypes.CDLL(None).prctl(3, 0, 0, 0, 0))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=timeouts.RUN_TIMEOUT,
        check=True,
    ).stdout
    assert out.split() == ["True", "0"]  # PR_GET_DUMPABLE: 0


@needs_bwrap
@needs_proc
async def test_under_bubblewrap_a_stopped_command_gets_its_grace_period(tmp_path: Path) -> None:
    command = "trap 'echo cleaning up > done.txt; exit 0' TERM; echo ready; sleep 30 & wait"
    sink = Sink()
    with anyio.fail_after(timeouts.PROCESS_TIMEOUT):
        result = await run_command(command, cwd=str(tmp_path), time_limit=1, sink=sink,
                                   policy=BWRAP, grace=5)  # fmt: skip
    assert result.timed_out
    assert (tmp_path / "done.txt").read_text() == "cleaning up\n"
