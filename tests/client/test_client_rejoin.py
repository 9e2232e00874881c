"""``connect_url`` when a link cannot be resumed: a new connection under the same client,
every live session resumed in place with replay de-duplicated, prompts waiting for their
answer resent with their idempotency key (never run twice). Against the durable
WebSocket test server (tests/helpers/durable_ws.py), whose ``forget()`` acts as a
restarted server (resumes refused with 4404) while the agent and its sessions live on."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import anyio
import pytest

from acp2.client import connect_url
from acp2.testing.scenarios import build_test_agent
from acp2.transport.backoff import Backoff
from helpers.durable_ws import durable_ws_server
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio

CWD = "/tmp/acp2-client-tests"
FAST = Backoff(initial=0.01, max_delay=0.2, max_attempts=50, max_elapsed=20)


def user_messages(session: object) -> int:
    timeline = session.state.timeline  # type: ignore[attr-defined]
    return sum(1 for entry in timeline if getattr(entry, "role", None) == "user")


def counted(text: str) -> bool:
    """True when ``text`` is ``"0 1 2 ... k "`` for some k: in order, nothing doubled."""
    words = text.split()
    return words == [str(i) for i in range(len(words))]


async def test_a_refused_resume_rejoins_the_sessions_in_place_with_nothing_doubled() -> None:
    with anyio.fail_after(TIMEOUT * 2):
        async with (
            durable_ws_server() as server,
            connect_url(server.url, cwd=CWD, reconnect=FAST) as client,
        ):
            session = await client.new_session()
            first = await session.prompt("echo before the restart")
            assert await first.wait() == "end_turn"
            work = await session.prompt("stream 5000")
            await anyio.sleep(0.05)
            server.forget()  # a restart: the running turn is lost, the history is not
            await work.wait()  # it ends (the agent's snapshot says idle), never hangs
            assert counted(work.text)
            assert client.remote.rejoins == 1
            assert client.sessions[session.id] is session
            assert len(session.state.messages) == 4  # two user, two agent: nothing doubled
            again = await session.prompt("echo after the restart")
            assert await again.wait() == "end_turn"
            assert again.text == "after the restart"


async def test_a_prompt_sent_into_a_dead_link_is_sent_again_on_the_new_connection() -> None:
    with anyio.fail_after(TIMEOUT):
        async with (
            durable_ws_server() as server,
            connect_url(server.url, cwd=CWD, reconnect=FAST) as client,
        ):
            session = await client.new_session()
            server.forget()
            work = await session.prompt("echo after all")
            assert await work.wait() == "end_turn"
            assert work.text == "after all"
            assert client.remote.rejoins == 1


async def test_a_prompt_whose_answer_was_lost_runs_once() -> None:
    with anyio.fail_after(TIMEOUT):
        async with (
            durable_ws_server() as server,
            connect_url(server.url, cwd=CWD, reconnect=FAST) as client,
        ):
            session = await client.new_session()
            server.forget_after_prompt = True
            work = await session.prompt("echo only once")
            await work.wait()
            assert client.remote.rejoins == 1
            said = [m for m in session.state.messages.values() if m.kind == "user"]
            assert len(said) == 1  # the resent prompt was recognised, not run again
            assert work.message_id == said[0].message_id


async def test_a_plain_link_that_breaks_rejoins_too() -> None:
    with anyio.fail_after(TIMEOUT):
        async with (
            durable_ws_server(grant=False) as server,
            connect_url(server.url, cwd=CWD, reconnect=FAST) as client,
        ):
            session = await client.new_session()
            assert await (await session.prompt("echo one")).wait() == "end_turn"
            server.drop_links()
            work = await session.prompt("echo two")
            assert await work.wait() == "end_turn"
            assert work.text == "two"
            assert client.remote.rejoins == 1


async def test_without_rejoin_a_refused_resume_closes_the_connection() -> None:
    from acp2.errors import ConnectionClosed

    with anyio.fail_after(TIMEOUT):
        async with (
            durable_ws_server() as server,
            connect_url(server.url, cwd=CWD, reconnect=FAST, rejoin=False) as client,
        ):
            session = await client.new_session()
            work = await session.prompt("wait")
            server.forget()
            with pytest.raises(ConnectionClosed):
                await work.wait()


def hand_lease_to_a_dead_node(path: str, session_id: str, seconds: float) -> None:
    """Rewrite the session's lease row as a process on another node would have left it when
    it died: not renewed by anyone, lapsing in ``seconds``, not deleted by the agent's
    release (that deletes only its own rows)."""
    with sqlite3.connect(path, timeout=5.0) as db:
        changed = db.execute(
            "UPDATE leases SET owner = 'dead', host = 'elsewhere', pid = 1, expires_at = ?"
            " WHERE session_id = ?",
            (time.time() + seconds, session_id),
        ).rowcount
    assert changed == 1


async def test_a_rejoin_waits_for_the_lease_of_a_dead_owner_to_lapse(tmp_path: Path) -> None:
    history = str(tmp_path / "history.db")
    with anyio.fail_after(TIMEOUT * 2):
        async with (
            durable_ws_server(build_test_agent(history)) as server,
            connect_url(server.url, cwd=CWD, reconnect=FAST) as client,
        ):
            session = await client.new_session()
            first = await session.prompt("echo before")
            assert await first.wait() == "end_turn"
            hand_lease_to_a_dead_node(history, session.id, 1.5)
            server.forget()  # the client rejoins while the lease still has 1.5 s to run
            await client.remote.wait_rejoins(1)
            again = await session.prompt("echo after the lease lapsed")
            assert await again.wait() == "end_turn"
            assert again.text == "after the lease lapsed"
            assert client.sessions[session.id] is session


async def test_an_attached_observer_rejoins_by_attaching_again_and_stays_an_observer() -> None:
    from acp2.errors import InvalidRequest

    with anyio.fail_after(TIMEOUT * 2):
        async with (
            durable_ws_server() as server,
            connect_url(server.url, cwd=CWD, reconnect=FAST) as owner,
            connect_url(server.url, cwd=CWD, reconnect=FAST) as watcher,
        ):
            session = await owner.new_session()
            assert await (await session.prompt("echo one")).wait() == "end_turn"
            watched = await watcher.attach(session.id)
            # A restart of the watcher's connection only: the owner's stays, so the
            # session stays live for the watcher to find again.
            newest = list(server.connections)[-1]
            server.tg.start_soon(server.connections.pop(newest).ours.aclose)
            server.drop_links()
            await watcher.remote.wait_rejoins(1)
            seen = anyio.Event()

            def follow(update: object, raw: bytes) -> None:
                if "two" in watched.state.agent_text():
                    seen.set()

            watched.add_listener(follow)
            assert await (await session.prompt("echo two")).wait() == "end_turn"
            await seen.wait()  # the owner's next turn reached the watcher: attached again
            assert watched.role == "observer"
            with pytest.raises(InvalidRequest, match="observer"):
                await watched.prompt("echo not mine")  # resumed, it would have been taken
            assert len(watched.state.messages) == 4  # the re-attach doubled nothing
