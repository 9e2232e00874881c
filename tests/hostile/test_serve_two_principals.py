"""Two users of one ``acp2 serve`` (issue 24, item 2): every session belongs to the
principal whose token created it. Another user's requests naming it -- attach, resume with
a replay, prompt, cancel, config, a forged permission answer, list, delete -- get the
answer an unknown session gets and change nothing, live or stored, also after a restart;
an observer needs the owner's grant (``Agent.observers``)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp2.client import PermissionRequest, allow_all, connect_url
from acp2.store.sqlite import HistoryStore
from helpers.stores import Backend
from helpers.timeouts import SCENARIO_TIMEOUT
from hostile.principal_helpers import RawPeer, raw_peer, served_agent

pytestmark = pytest.mark.anyio

ATTACH = "_acp2/session/attach"
SECRET = "hunter2-is-alices-secret"


def _error(answer: dict[str, Any], session_id: str) -> tuple[int, str]:
    """The code and message of an error answer, the session id made generic."""
    error = answer["error"]
    return error["code"], error["message"].replace(session_id, "<id>")


async def _trespass(bob: RawPeer, sid: str, cwd: str) -> list[dict[str, Any]]:
    """Every request bob can make about alice's session ``sid``, with its answer."""
    replay = {"sessionId": sid, "cwd": cwd, "replayFrom": {"type": "start"}}
    text = [{"type": "text", "text": "echo bob was here"}]
    return [
        await bob.call(ATTACH, {"sessionId": sid, "role": "controller"}),
        await bob.call(ATTACH, {"sessionId": sid, "role": "observer"}),
        await bob.call("session/resume", replay),
        await bob.call("session/prompt", {"sessionId": sid, "prompt": text}),
        await bob.call(
            "session/set_config_option",
            {"sessionId": sid, "configId": "mode", "type": "id", "value": "x"},
        ),
    ]


async def _unknown(bob: RawPeer, cwd: str) -> list[dict[str, Any]]:
    """What :func:`_trespass` gets for a session nobody has."""
    return await _trespass(bob, "sess_nobody", cwd)


async def test_another_user_cannot_attach_to_prompt_cancel_or_answer_in_a_live_session(
    tmp_path: Path,
) -> None:
    asked, release = anyio.Event(), anyio.Event()

    async def alice_decides(request: PermissionRequest) -> Any:
        asked.set()
        await release.wait()
        return allow_all(request)

    cwd = str(tmp_path)
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with (
            served_agent(tmp_path / "history.sqlite3") as served,
            connect_url(
                served.url, token="alice-token", cwd=cwd, permissions=alice_decides, rejoin=False
            ) as alice,
        ):
            mine = await alice.new_session()
            await (await mine.prompt(f"echo {SECRET}")).wait()
            work = await mine.prompt("permission")
            await asked.wait()
            async with raw_peer(served, "bob-token") as bob:
                answers = await _trespass(bob, mine.id, cwd)
                unknown = await _unknown(bob, cwd)
                await bob.send(
                    {
                        "jsonrpc": "2.0",
                        "method": "session/cancel",
                        "params": {"sessionId": mine.id},
                    }
                )
                for forged in range(8):  # answers to requests bob was never sent
                    outcome = {"outcome": "selected", "optionId": "allow_once"}
                    await bob.send({"jsonrpc": "2.0", "id": forged, "result": {"outcome": outcome}})
                listed = await bob.call("session/list", {})
            release.set()
            stop = await work.wait()
    assert [_error(a, mine.id) for a in answers] == [_error(a, "sess_nobody") for a in unknown]
    assert {answer["error"]["code"] for answer in answers} == {-32002}
    assert listed["result"]["sessions"] == []
    assert SECRET not in bob.texts()
    assert "session/request_permission" not in bob.texts()
    assert mine.id not in bob.texts()
    assert stop == "end_turn"  # bob's cancel did not reach her turn
    assert "allow_once" in work.text  # and her own answer is the one that counted


async def test_another_user_cannot_list_replay_or_delete_stored_sessions_even_after_a_restart(
    tmp_path: Path, store_backend: Backend
) -> None:
    store, cwd = store_backend.spec, str(tmp_path)
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with served_agent(store) as served:
            async with connect_url(served.url, token="alice-token", cwd=cwd, rejoin=False) as alice:
                mine = await alice.new_session()
                await (await mine.prompt(f"echo {SECRET}")).wait()
            async with raw_peer(served, "bob-token") as bob:  # alice has left
                answers = await _trespass(bob, mine.id, cwd)
                unknown = await _unknown(bob, cwd)
                deleted = await bob.call("session/delete", {"sessionId": mine.id})
                listed = await bob.call("session/list", {"cwd": cwd})
        async with served_agent(store) as served:  # a new process on the same file
            async with raw_peer(served, "bob-token") as bob_again:
                after_restart = await _trespass(bob_again, mine.id, cwd)
            async with connect_url(served.url, token="alice-token", cwd=cwd, rejoin=False) as alice:
                own = [info.session_id for info in await alice.list_sessions()]
                back = await alice.resume(mine.id, replay=True)
                texts = [m.text for m in back.state.messages.values()]
    expected = [_error(a, "sess_nobody") for a in unknown]
    assert [_error(a, mine.id) for a in answers] == expected
    assert [_error(a, mine.id) for a in after_restart] == expected
    assert deleted == {"jsonrpc": "2.0", "id": deleted["id"], "result": {}}  # as for an unknown id
    assert listed["result"]["sessions"] == []
    assert SECRET not in bob.texts() + bob_again.texts()
    assert own == [mine.id]
    assert SECRET in " ".join(texts)


async def test_an_observer_needs_the_owners_grant_and_may_only_watch(tmp_path: Path) -> None:
    cwd = str(tmp_path)
    grant = {"alice": ["carol"]}
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with (
            served_agent(tmp_path / "history.sqlite3", observers=grant) as served,
            connect_url(served.url, token="alice-token", cwd=cwd, rejoin=False) as alice,
        ):
            mine = await alice.new_session()
            await (await mine.prompt(f"echo {SECRET}")).wait()
            async with raw_peer(served, "bob-token") as bob:
                refused = await bob.call(ATTACH, {"sessionId": mine.id, "role": "observer"})
            async with raw_peer(served, "carol-token") as carol:
                as_controller = await carol.call(
                    ATTACH, {"sessionId": mine.id, "role": "controller"}
                )
                watching = await carol.call(ATTACH, {"sessionId": mine.id, "role": "observer"})
                text = [{"type": "text", "text": "echo carol was here"}]
                prompted = await carol.call(
                    "session/prompt", {"sessionId": mine.id, "prompt": text}
                )
                deleted = await carol.call("session/delete", {"sessionId": mine.id})
                listed = await carol.call("session/list", {})
            assert await (await mine.prompt("echo still mine")).wait() == "end_turn"
    assert _error(refused, mine.id)[0] == _error(as_controller, mine.id)[0] == -32002
    assert watching["result"]["role"] == "observer"
    assert SECRET in carol.texts()  # what alice let her see
    assert prompted["error"]["data"]["role"] == "observer"
    assert deleted["result"] == {}
    assert listed["result"]["sessions"] == []


def _old_store(path: Path, cwd: str) -> str:
    """A history file as acp2 wrote it before sessions had a principal, with one session."""
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, cwd TEXT NOT NULL,"
        " additional_directories TEXT NOT NULL DEFAULT '[]', title TEXT,"
        " created_at TEXT NOT NULL, updated_at TEXT NOT NULL,"
        " deleted INTEGER NOT NULL DEFAULT 0, data TEXT NOT NULL DEFAULT '{}');"
    )
    db.execute(
        "INSERT INTO sessions (id, cwd, created_at, updated_at) VALUES (?, ?, ?, ?)",
        ("sess_from_before", cwd, "2026-01-01T00:00:00.000Z", "2026-01-01T00:00:00.000Z"),
    )
    db.commit()
    db.close()
    path.chmod(0o600)
    return "sess_from_before"


async def test_a_session_stored_before_principals_belongs_to_the_local_user_only(
    tmp_path: Path,
) -> None:
    store, cwd = tmp_path / "history.sqlite3", str(tmp_path)
    sid = _old_store(store, cwd)
    HistoryStore(store).close()  # opened once by the new code: the column is added
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with served_agent(store) as served, raw_peer(served, "alice-token") as alice:
            with_token = await alice.call("session/resume", {"sessionId": sid, "cwd": cwd})
            listed = await alice.call("session/list", {})
        async with served_agent(store, tokens={}) as served, raw_peer(served, None) as local:
            resumed = await local.call("session/resume", {"sessionId": sid, "cwd": cwd})
            local_list = await local.call("session/list", {})
    assert with_token["error"]["code"] == -32002
    assert listed["result"]["sessions"] == []
    assert "result" in resumed, resumed
    assert [s["sessionId"] for s in local_list["result"]["sessions"]] == [sid]
