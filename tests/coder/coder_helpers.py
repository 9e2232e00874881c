"""Helpers for the coding-agent tests: run an agent in process and talk to it as a client.

``coder_session(agent, cwd)`` serves ``agent`` on one end of a memory pair and yields a
:class:`~acp2.client.ClientSession` on the other (through the real client runtime), so
every test sees exactly the ``session/update`` stream an editor would.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio

from acp2.client import ClientSession, PermissionRequest, allow_all
from acp2.schema import AgentMessageChunk, AgentThoughtChunk, TextContent
from helpers.inprocess import served
from helpers.timeouts import SCENARIO_TIMEOUT as TIMEOUT  # noqa: F401 - the coder tests' bound


@asynccontextmanager
async def coder_session(
    agent: Any,
    cwd: str | os.PathLike[str],
    *,
    permissions: Any = allow_all,
    additional: Sequence[str | os.PathLike[str]] = (),
) -> AsyncIterator[ClientSession]:
    """Serve ``agent`` in process; yield a new session rooted at ``cwd``."""
    async with served(agent, cwd=str(cwd), permissions=permissions) as client:
        yield await client.new_session(
            str(cwd), additional_directories=[str(a) for a in additional]
        )


class Recorder:
    """A permission policy that answers with a fixed option kind and records each request."""

    def __init__(self, *kinds: str) -> None:
        self.kinds = list(kinds)
        self.requests: list[PermissionRequest] = []

    def __call__(self, request: PermissionRequest) -> Any:
        self.requests.append(request)
        kind = self.kinds.pop(0) if len(self.kinds) > 1 else self.kinds[0]
        return request.option_of_kind(kind)


def text_of(updates: Sequence[Any], kind: type = AgentMessageChunk) -> str:
    """The text of every ``kind`` chunk (agent message or thought), joined."""
    return "".join(
        u.content.text for u in updates if type(u) is kind and isinstance(u.content, TextContent)
    )


def thoughts_of(updates: Sequence[Any]) -> str:
    """The text of every agent_thought_chunk, joined."""
    return text_of(updates, AgentThoughtChunk)


def kinds(updates: Sequence[Any]) -> list[str]:
    """The ``sessionUpdate`` tag of each update, in order."""
    return [type(u).__struct_config__.tag for u in updates]  # type: ignore[attr-defined]


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (relative path -> bytes), symlinks as their target text."""
    found: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if path.is_symlink():
            found[rel] = b"-> " + os.readlink(path).encode()
        elif path.is_file():
            found[rel] = path.read_bytes()
    return found


def until(predicate: Callable[[], bool]) -> Callable[[Any, bytes], None]:
    """A session listener setting ``.event`` once ``predicate()`` holds after an update."""
    event = anyio.Event()

    def listener(_update: Any, _raw: bytes) -> None:
        if predicate():
            event.set()

    listener.event = event  # type: ignore[attr-defined]
    return listener


def group_members(pgid: int) -> list[int]:
    """The pids of the live (non-zombie) processes of group ``pgid`` (Linux /proc)."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z" and int(fields[2]) == pgid:
            members.append(int(entry))
    return members


def group_alive(pgid: int) -> bool:
    """True while any non-zombie process belongs to process group ``pgid``."""
    return bool(group_members(pgid))


async def wait_gone(pids: Sequence[int]) -> None:
    """Wait until every process in ``pids`` has exited, event-driven through pidfds (a
    killed process needs a moment to die); bound it with ``anyio.fail_after``."""
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        try:
            await anyio.wait_readable(fd)
        finally:
            os.close(fd)
