"""The SQLite history store: committed before the wire, disconnects, listing (SS-18, TR-06)."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path
from typing import Any
from unittest.mock import ANY

import anyio
import anyio.lowlevel
import pytest
from agent_harness import agent_harness, make_agent

from acp2.agent import HistoryStore, Turn
from acp2.agent.emitter import BIG_UPDATE, Emitter
from acp2.schema import AgentMessageChunk, TextContent, UserMessage
from acp2.schema.codec import encode
from acp2.store import SessionStore
from acp2.store import sqlite as store_module
from acp2.store.sqlite import HistoryWriteError, SessionInUse, default_store_path
from helpers.stores import Backend

pytestmark = pytest.mark.anyio

_HEAD = b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":'


def _committed(backend: Backend, session_id: str) -> list[Any]:
    """The update rows another process would see now (only committed transactions)."""
    rows = backend.execute(
        f"SELECT body FROM {backend.table('updates')} WHERE session_id = '{session_id}'"
        " ORDER BY seq"
    )
    return [json.loads(body) for r in rows for body in bytes(r[0]).split(b"\n")]


async def test_every_recorded_update_is_committed_before_the_client_receives_it(
    store_backend: Backend,
) -> None:
    agent = make_agent(store=store_backend.spec)

    @agent.prompt
    async def handle(turn: Turn) -> str:
        for i in range(50):
            await turn.say(f"{i} ")
        call = await turn.tool_call("x")
        await call.complete()
        return "end_turn"

    checked: list[str] = []
    missing: list[Any] = []
    async with agent_harness(agent, initialize=True) as h:
        original = h.tap

        def tap(direction: str, frame: bytes) -> None:
            if direction == "in" and frame.startswith(_HEAD):
                message = json.loads(frame)
                update = message["params"]["update"]
                if update["sessionUpdate"] != "state_update":
                    if update not in _committed(store_backend, message["params"]["sessionId"]):
                        missing.append(update)
                    checked.append(update["sessionUpdate"])
            original(direction, frame)  # type: ignore[arg-type]

        h.tap = tap  # type: ignore[method-assign]
        sid = await h.new_session()
        await h.turn(sid, "go")
    assert missing == []
    assert checked.count("agent_message_chunk") == 50
    assert checked[0] == "user_message"


async def test_tr06_a_client_disconnect_mid_turn_cancels_the_turn_and_keeps_the_history(
    tmp_path: Path,
) -> None:
    path = tmp_path / "h.sqlite3"
    agent = make_agent(store=str(path))
    outcome: list[str] = []

    @agent.prompt
    async def handle(turn: Turn) -> str:
        try:
            while True:
                await turn.say("more ")
                await anyio.lowlevel.checkpoint()
        except anyio.get_cancelled_exc_class():
            outcome.append("cancelled")
            raise

    async with agent_harness(agent, initialize=True) as h:
        sid = await h.new_session()
        await h.prompt(sid, "go")
        await h.wait_for(lambda: len(h.updates(sid)) > 20)
        seen = [u for u in h.updates(sid) if u["sessionUpdate"] == "agent_message_chunk"]
    # leaving the harness closed the client's end; agent.serve returned (bounded)
    assert outcome == ["cancelled"]
    stored = HistoryStore(path)
    bodies = [json.loads(b) for b in stored.updates(sid)]
    stored.close()
    assert bodies[0]["sessionUpdate"] == "user_message"
    chunks = [b for b in bodies if b["sessionUpdate"] == "agent_message_chunk"]
    assert len(chunks) >= len(seen)


async def test_a_disconnect_during_a_permission_wait_ends_serving_without_errors(
    caplog: pytest.LogCaptureFixture,
) -> None:
    agent = make_agent()

    @agent.prompt
    async def handle(turn: Turn) -> str:
        await turn.request_permission("ok?")
        return "end_turn"

    async def never(request: Any) -> Any:
        await anyio.sleep_forever()

    async with agent_harness(agent, initialize=True) as h:
        h.permission = never
        sid = await h.new_session()
        await h.prompt(sid, "go")
        await h.wait_for(lambda: h.permission_requests)
    assert not [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")]


# -- the store itself ---------------------------------------------------------------------


def test_sessions_are_listed_newest_first_and_deleted_ones_never(store_backend: Backend) -> None:
    store = store_backend.open()
    store.create_session("a", "/p", [])
    store.create_session("b", "/p", ["/x"])
    store.create_session("c", "/q", [])
    store.append("a", b'{"sessionUpdate":"agent_message","messageId":"m","content":[]}')
    store.flush()
    ids = [r.id for r in store.list_sessions()]
    assert ids[0] == "a"
    assert sorted(ids) == ["a", "b", "c"]
    store.delete_session("b")
    store.delete_session("b")
    store.delete_session("unknown")
    assert sorted(r.id for r in store.list_sessions()) == ["a", "c"]
    assert store.get_session("b") is None
    assert list(store.updates("b")) == []
    assert [r.id for r in store.list_sessions(cwd="/q")] == ["c"]
    store.close()


def test_sequence_numbers_continue_after_reopening_the_database(store_backend: Backend) -> None:
    first = store_backend.open()
    first.create_session("s", "/p", [])
    first.append("s", b'{"n":1}')
    first.append("s", b'{"n":2}')
    first.close()
    second = store_backend.open()
    second.append("s", b'{"n":3}')
    assert list(second.updates("s")) == [b'{"n":1}', b'{"n":2}', b'{"n":3}']
    second.close()


def test_titles_and_extra_roots_are_stored_with_the_session(store_backend: Backend) -> None:
    store = store_backend.open()
    store.create_session("s", "/p", [])
    store.set_title("s", "Hello")
    store.flush()
    record = store.get_session("s")
    assert record is not None
    assert record.title == "Hello"
    store.update_session("s", additional_directories=["/x"])
    store.set_title("s", None)
    store.flush()
    record = store.get_session("s")
    assert record is not None
    assert record.title is None
    assert record.additional_directories == ["/x"]
    store.update_session("s", title="Named", data={"k": 1})
    record = store.get_session("s")
    assert record is not None
    assert (record.title, record.data) == ("Named", {"k": 1})
    store.close()


def test_the_default_store_path_honours_acp2_data_dir_and_xdg(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ACP2_DATA_DIR", str(tmp_path / "data"))
    assert default_store_path("my agent/1") == tmp_path / "data" / "my_agent_1.sqlite3"
    monkeypatch.delenv("ACP2_DATA_DIR")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_store_path("a") == tmp_path / "xdg" / "acp2" / "a.sqlite3"


# -- two writers, failures, leases (issue 10, section 7) ----------------------------------


def test_two_stores_writing_one_session_in_turns_keep_every_update(
    store_backend: Backend,
) -> None:
    # Before: each store cached its next sequence number, so the second write of the
    # first store hit UNIQUE(session_id, seq) and its updates were lost.
    a, b = store_backend.open(), store_backend.open()
    a.create_session("s", "/p", [])
    for i in range(6):
        writer = a if i % 2 == 0 else b
        writer.append("s", b'{"n":%d}' % i)
        writer.flush()
    assert list(a.updates("s")) == [b'{"n":%d}' % i for i in range(6)]
    a.close()
    b.close()


def test_a_failed_flush_keeps_its_updates_and_fails_the_next_append_until_it_succeeds(
    store_backend: Backend,
) -> None:
    store = store_backend.open()
    store.create_session("s", "/p", [])
    store_backend.fail_inserts()
    store.append("s", b'{"n":1}')
    with pytest.raises(HistoryWriteError):
        store.flush()
    assert store.failure is not None
    with pytest.raises(HistoryWriteError):
        store.append("s", b'{"n":2}')  # the turn fails instead of going on unrecorded
    store_backend.heal()
    store.append("s", b'{"n":3}')  # retries the kept update first, then queues this one
    assert store.failure is None
    assert list(store.updates("s")) == [b'{"n":1}', b'{"n":3}']
    store.close()


def test_a_locked_database_is_retried_after_a_pause(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.sqlite3"
    store = HistoryStore(path)
    store.create_session("s", "/p", [])
    store._db.execute("PRAGMA busy_timeout=1")
    locker = sqlite3.connect(path, isolation_level=None)
    locker.execute("BEGIN IMMEDIATE")
    pauses: list[float] = []

    def pause(seconds: float) -> None:
        pauses.append(seconds)
        if len(pauses) == 2:
            locker.execute("COMMIT")  # the other writer finishes during the second pause

    monkeypatch.setattr("acp2.store.sqlite.time.sleep", pause)
    store.append("s", b'{"n":1}')
    store.flush()
    assert pauses == list(store_module.RETRY_BACKOFF[:2])
    assert list(store.updates("s")) == [b'{"n":1}']
    locker.close()
    store.close()


def test_a_lease_of_another_live_owner_is_refused_and_a_lapsed_one_taken_over(
    store_backend: Backend,
) -> None:
    first, second = store_backend.open(), store_backend.open()
    first.create_session("s", "/p", [])
    first.acquire("s")
    with pytest.raises(SessionInUse) as refused:
        second.acquire("s")
    assert refused.value.code == -32010
    assert refused.value.data == {"sessionId": "s", "pid": os.getpid(), "host": ANY}
    with pytest.raises(SessionInUse):
        second.delete_session("s")
    store_backend.expire_leases()  # the owner stopped renewing
    second.acquire("s")
    with pytest.raises(SessionInUse):
        first.acquire("s")
    second.close()
    first.close()


def test_a_lease_held_twice_ends_at_the_last_release_and_closing_releases_all(
    store_backend: Backend,
) -> None:
    store, other = store_backend.open(), store_backend.open()
    for sid in ("s", "t"):
        store.create_session(sid, "/p", [])
    store.acquire("s")
    store.acquire("s")  # two connections of one process
    store.acquire("t")
    store.release("s")
    with pytest.raises(SessionInUse):
        other.acquire("s")
    store.release("s")
    other.acquire("s")
    store.close()  # releases "t"
    other.acquire("t")
    other.close()


def test_the_heartbeat_pushes_the_expiry_ahead(store_backend: Backend) -> None:
    store: Any = store_backend.open(lease_ttl=1000.0)
    store.create_session("s", "/p", [])
    store.acquire("s")
    leases = store_backend.table("leases")
    store_backend.execute(f"UPDATE {leases} SET expires_at = 1")
    store.leases.renew(store._db)
    ((expires,),) = store_backend.execute(f"SELECT expires_at FROM {leases}")
    assert expires > time.time() + 900
    store.close()


#: The schema before the updates table had rowids: files made by older acp2 look like it.
_OLD_SCHEMA = """
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    cwd TEXT NOT NULL,
    additional_directories TEXT NOT NULL DEFAULT '[]',
    title TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    next_seq INTEGER NOT NULL DEFAULT 0,
    deleted INTEGER NOT NULL DEFAULT 0,
    data TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE updates (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    body BLOB NOT NULL,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
INSERT INTO sessions (id, cwd, created_at, updated_at) VALUES ('s', '/w', 't', 't');
INSERT INTO updates VALUES ('s', 0, CAST('{"n":0}' || char(10) || '{"n":1}' AS BLOB));
INSERT INTO updates VALUES ('s', 1, CAST('{"n":2}' AS BLOB));
"""


def _updates_ddl(path: Path) -> str:
    db = sqlite3.connect(path)
    try:
        row = db.execute("SELECT sql FROM sqlite_master WHERE name = 'updates'").fetchone()
    finally:
        db.close()
    return str(row[0])


def test_a_database_of_the_old_schema_is_migrated_to_rowids_and_still_replays(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.sqlite3"
    old = sqlite3.connect(path)
    old.executescript(_OLD_SCHEMA)
    old.close()
    store = HistoryStore(path)
    assert "WITHOUT ROWID" not in _updates_ddl(path).upper()
    assert [json.loads(b) for b in store.updates("s")] == [{"n": 0}, {"n": 1}, {"n": 2}]
    store.append("s", b'{"n":3}')
    store.append("s", b"x" * (2 * 1024 * 1024))  # a big row: written in place, by rowid
    store.close()
    again = HistoryStore(path)  # opens without a second migration
    bodies = list(again.updates("s"))
    assert [json.loads(b) for b in bodies[:4]] == [{"n": i} for i in range(4)]
    assert bodies[4] == b"x" * (2 * 1024 * 1024)
    assert again.get_session("s") is not None
    again.close()


def _store_a_big_row(store: SessionStore) -> None:
    store.create_session("s", "/w", [])
    big = bytes(range(256)).replace(b"\n", b" ") * 8192  # 2 MiB, every byte but \n
    frame = b"head" + big + b"}}"
    store.append("s", b'{"n":0}')
    store.append("s", memoryview(frame)[4:-2])  # a view into a frame, as the emitter does
    store.append("s", b'{"n":2}')
    store.flush()
    store.append("s", b'{"n":3}')
    store.flush()
    assert list(store.updates("s")) == [b'{"n":0}', big, b'{"n":2}', b'{"n":3}']
    store.close()


def test_a_big_row_is_stored_byte_for_byte_with_its_batch(store_backend: Backend) -> None:
    _store_a_big_row(store_backend.open())


def test_a_big_row_is_written_in_place_in_a_database_in_memory_too() -> None:
    _store_a_big_row(HistoryStore(":memory:"))


class _Frames:
    """A frame sink that keeps what it is given."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []
        self.congested = False

    def send_frame_nowait(self, frame: bytes) -> None:
        self.frames.append(bytes(frame))

    async def drain(self) -> None:
        """Nothing to wait for."""


def test_a_big_update_goes_out_and_into_history_as_the_bytes_of_a_small_one() -> None:
    store = HistoryStore()
    store.create_session("s", "/w", [])
    sink = _Frames()
    emitter = Emitter("s", sink, store)
    big = AgentMessageChunk(message_id="m", content=TextContent(text="é\n" * BIG_UPDATE))
    user = UserMessage(message_id="u", content=[TextContent(text="x" * BIG_UPDATE)])
    emitter.emit(big)
    emitter.send_frame(emitter.record_frame(user))
    head = _HEAD + b'"s","update":'
    assert sink.frames == [head + encode(big) + b"}}", head + encode(user) + b"}}"]
    assert list(store.updates("s")) == [encode(big), encode(user)]
