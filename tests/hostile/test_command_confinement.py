"""Attack: a model-chosen command writes outside the project, reads home secrets and talks
to local services.

Before the fix a command could do all three. Under bubblewrap or Landlock it may write
only inside the session's directories (and a private temporary directory), cannot read
the home directory, and (by default) cannot connect over TCP -- bubblewrap also hides
unix sockets outside the project. ``--command-network`` lets it connect again.
"""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

import anyio
import pytest

from acp2.client import PermissionRequest, connect_transport
from acp2.coder.tools.confine import CommandPolicy, choose
from hostile.command_agent import (
    SANDBOXED,
    TIMEOUT,
    agent_argv,
    agent_env,
    serve,
    spawn_agent,
    text_reply,
    tool_reply,
    tool_results,
)

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform != "linux", reason="Linux sandboxes"),
]

#: A file in a system directory the sandbox shows read-only (removed after each test).
SYSTEM_FILE = Path(f"/usr/acp2-hostile-{os.getpid()}")
SSH_KEY = "-----BEGIN OPENSSH PRIVATE KEY----- the-users-ssh-key"


def attack(outside: Path, home: Path, port: int, unix: Path) -> str:
    """One command trying every escape; each success prints a marker."""
    return "; ".join(
        [
            f"echo pwned > {outside}/escaped && echo WROTE_OUTSIDE",
            f"echo pwned > {home}/.bashrc && echo WROTE_HOME",
            f"echo pwned > {SYSTEM_FILE} && echo WROTE_SYSTEM",
            f"cat {home}/.ssh/id_ed25519",
            f"ls {home} && echo LISTED_HOME",
            f"bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}' && echo TCP_CONNECTED",
            f"python3 -c 'import socket; socket.socket(socket.AF_UNIX).connect(\"{unix}\")'"
            " && echo UNIX_CONNECTED",
            "echo ok > inside.txt && echo WROTE_INSIDE",
            'echo tmp > "${TMPDIR:-/tmp}/scratch" && echo WROTE_TMP',
        ]
    )


class World:
    """A project, a folder outside it, a fake home with an ssh key, a TCP listener and a
    unix socket listener -- everything the attack goes after."""

    def __init__(self, tmp_path: Path) -> None:
        self.project = tmp_path / "project"
        self.outside = tmp_path / "outside"
        self.home = tmp_path / "home"
        for folder in (self.project, self.outside, self.home / ".ssh"):
            folder.mkdir(parents=True)
        (self.home / ".ssh" / "id_ed25519").write_text(SSH_KEY)
        self.tcp = socket.create_server(("127.0.0.1", 0))
        self.unix_path = tmp_path / "service.sock"
        self.unix = socket.socket(socket.AF_UNIX)
        self.unix.bind(str(self.unix_path))
        self.unix.listen()

    def close(self) -> None:
        """Stop the listeners; remove (and remember) a file the attack wrote in /usr."""
        self.tcp.close()
        self.unix.close()
        self.wrote_system = SYSTEM_FILE.exists()
        SYSTEM_FILE.unlink(missing_ok=True)


async def run_attack(tmp_path: Path, *flags: str) -> tuple[str, World, list[PermissionRequest]]:
    world = World(tmp_path)
    asked: list[PermissionRequest] = []

    def approve(request: PermissionRequest) -> object:
        asked.append(request)
        return request.option_of_kind("allow_once")

    try:
        command = attack(world.outside, world.home, world.tcp.getsockname()[1], world.unix_path)
        with serve() as fake:
            fake.add(tool_reply([("c1", "run_command", {"command": command})]), text_reply("ok"))
            argv = agent_argv(fake, tmp_path / "h.db", *flags)
            env = agent_env(HOME=str(world.home))
            with anyio.fail_after(TIMEOUT):
                async with (
                    spawn_agent(argv, cwd=world.project, env=env) as proc,
                    connect_transport(proc, cwd=world.project, permissions=approve) as client,
                ):
                    session = await client.new_session(str(world.project))
                    assert await (await session.prompt("attack")).wait() == "end_turn"
            return tool_results(fake), world, asked
    finally:
        world.close()


@pytest.mark.parametrize("sandbox", SANDBOXED)
async def test_a_sandboxed_command_writes_only_in_the_project_and_reaches_nothing(
    tmp_path: Path, sandbox: str
) -> None:
    result, world, asked = await run_attack(tmp_path, "--command-sandbox", sandbox)
    assert "WROTE_INSIDE" in result
    assert (world.project / "inside.txt").read_text() == "ok\n"
    assert "WROTE_TMP" in result  # a private temporary directory works
    for escape in ("WROTE_OUTSIDE", "WROTE_HOME", "WROTE_SYSTEM", "LISTED_HOME", "TCP_CONNECTED"):
        assert escape not in result
    assert "the-users-ssh-key" not in result
    assert not (world.outside / "escaped").exists()
    assert not (world.home / ".bashrc").exists()
    assert not world.wrote_system
    if sandbox == "bubblewrap":  # Landlock does not govern connecting to unix sockets
        assert "UNIX_CONNECTED" not in result
    [request] = asked
    assert request.description is not None
    name = "bubblewrap" if sandbox == "bubblewrap" else "Landlock"
    assert request.description.startswith(f"sandboxed: {name} (writes limited to the project")
    assert request.description.endswith(("no network)", "no TCP network)"))


@pytest.mark.parametrize("sandbox", SANDBOXED)
async def test_with_network_allowed_a_sandboxed_command_connects(
    tmp_path: Path, sandbox: str
) -> None:
    result, _, asked = await run_attack(tmp_path, "--command-sandbox", sandbox, "--command-network")
    assert "TCP_CONNECTED" in result
    assert "WROTE_OUTSIDE" not in result
    assert "network allowed" in (asked[0].description or "")


async def test_without_a_sandbox_the_prompt_says_so_and_the_command_is_unconfined(
    tmp_path: Path,
) -> None:
    result, _, asked = await run_attack(tmp_path, "--command-sandbox", "none")
    assert "WROTE_OUTSIDE" in result  # what the sandbox is for
    assert (asked[0].description or "").startswith("NOT sandboxed:")


def test_a_required_sandbox_that_is_missing_refuses_rather_than_running_unconfined(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from acp2.coder.tools import confine

    confine._choose.cache_clear()
    monkeypatch.setenv("PATH", "/nonexistent")
    try:
        assert choose(CommandPolicy(sandbox="bubblewrap")).kind == "refused"
    finally:
        confine._choose.cache_clear()
