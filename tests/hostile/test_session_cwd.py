"""Attack: session roots that are not directories (issue 10, "Smaller").

``session/new`` accepted a ``cwd`` holding a NUL character (no OS path can: later file
operations fail in odd places) and a directory that does not exist. Now ``cwd`` and each
``additionalDirectories`` entry, on ``session/new`` and ``session/resume``, must be an
absolute path (TR-17, SS-05) of an existing directory without NUL, else ``-32602`` with a
message saying which; the connection keeps working after each refusal.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from acp2.errors import InvalidParams
from hostile.store_helpers import TIMEOUT, agent_argv, raw_agent

pytestmark = pytest.mark.anyio


def _bad_roots(tmp_path: Path) -> list[tuple[dict[str, Any], str]]:
    a_file = tmp_path / "file.txt"
    a_file.write_text("not a directory")
    good = str(tmp_path)
    return [
        ({"cwd": good + "\x00/etc"}, "NUL"),
        ({"cwd": str(tmp_path / "missing")}, "not an existing directory"),
        ({"cwd": str(a_file)}, "not an existing directory"),
        ({"cwd": "relative/dir"}, "absolute"),
        ({"cwd": good, "additionalDirectories": [str(tmp_path / "gone")]}, "existing"),
        ({"cwd": good, "additionalDirectories": [good + "\x00"]}, "NUL"),
        ({"cwd": good, "additionalDirectories": ["rel"]}, "absolute"),
    ]


async def test_session_new_refuses_every_root_that_is_not_an_existing_directory(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(TIMEOUT):
        async with raw_agent(agent_argv(tmp_path / "h.sqlite3")) as agent:
            for params, words in _bad_roots(tmp_path):
                with pytest.raises(InvalidParams) as refused:
                    await agent.call("session/new", params)
                assert words in refused.value.message, params
            created = await agent.call("session/new", {"cwd": str(tmp_path)})
    assert created["sessionId"]


async def test_session_resume_refuses_the_same_roots(tmp_path: Path) -> None:
    with anyio.fail_after(TIMEOUT):
        async with raw_agent(agent_argv(tmp_path / "h.sqlite3")) as agent:
            sid = (await agent.call("session/new", {"cwd": str(tmp_path)}))["sessionId"]
            for params, words in _bad_roots(tmp_path)[4:]:
                with pytest.raises(InvalidParams) as refused:
                    await agent.call("session/resume", {"sessionId": sid, **params})
                assert words in refused.value.message, params
            with pytest.raises(InvalidParams):
                await agent.call("session/resume", {"sessionId": sid, "cwd": f"{tmp_path}\x00"})
            await agent.call("session/resume", {"sessionId": sid, "cwd": str(tmp_path)})


async def test_resuming_a_session_whose_directory_was_removed_is_refused(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with anyio.fail_after(TIMEOUT):
        async with raw_agent(agent_argv(tmp_path / "h.sqlite3")) as agent:
            sid = (await agent.call("session/new", {"cwd": str(work)}))["sessionId"]
            await agent.call("session/close", {"sessionId": sid})
            work.rmdir()
            with pytest.raises(InvalidParams) as refused:
                await agent.call("session/resume", {"sessionId": sid, "cwd": str(work)})
    assert "not an existing directory" in refused.value.message
