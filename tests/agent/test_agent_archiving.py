"""``session/archive`` / ``session/unarchive`` on the agent runtime (Preview, unstable):
advertised and served by default; archived sessions leave the default list (the flag is
in the store, so it survives a restart), are closed first, and come back on unarchive."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from agent_harness import agent_harness, make_agent

from acp2.errors import MethodNotFound, ResourceNotFound

pytestmark = pytest.mark.anyio


async def _listed(h: Any) -> list[str]:
    return [s["sessionId"] for s in (await h.call("session/list", {}))["sessions"]]


async def test_archive_hides_a_session_until_unarchive_and_twice_is_fine() -> None:
    async with agent_harness(make_agent(), initialize=True, validate="agent") as h:
        kept, hidden = await h.new_session(), await h.new_session()
        assert await h.call("session/archive", {"sessionId": hidden}) == {}
        assert await h.call("session/archive", {"sessionId": hidden}) == {}
        assert await _listed(h) == [kept]
        assert await h.call("session/unarchive", {"sessionId": hidden}) == {}
        assert await h.call("session/unarchive", {"sessionId": hidden}) == {}
        assert sorted(await _listed(h)) == sorted([kept, hidden])


async def test_an_archived_session_is_closed_first() -> None:
    async with agent_harness(make_agent(), initialize=True, validate="agent") as h:
        sid = await h.new_session()
        await h.call("session/archive", {"sessionId": sid})
        with pytest.raises(ResourceNotFound):
            await h.prompt(sid, "still there?")


async def test_the_archive_flag_survives_a_restart(tmp_path: Path) -> None:
    store = str(tmp_path / "history.db")
    async with agent_harness(make_agent(store=store), initialize=True, validate="agent") as h:
        sid = await h.new_session()
        await h.call("session/archive", {"sessionId": sid})
    async with agent_harness(make_agent(store=store), initialize=True, validate="agent") as h:
        assert await _listed(h) == []
        await h.call("session/unarchive", {"sessionId": sid})
        assert await _listed(h) == [sid]


async def test_archiving_an_unknown_session_is_32002() -> None:
    async with agent_harness(make_agent(), initialize=True, validate="agent") as h:
        with pytest.raises(ResourceNotFound):
            await h.call("session/archive", {"sessionId": "sess_nope"})


async def test_with_archive_off_it_is_neither_advertised_nor_served() -> None:
    async with agent_harness(make_agent(archive=False), validate="agent") as h:
        session = (await h.initialize())["capabilities"]["session"]
        sid = await h.new_session()
        with pytest.raises(MethodNotFound):
            await h.call("session/archive", {"sessionId": sid})
    assert "archive" not in session
