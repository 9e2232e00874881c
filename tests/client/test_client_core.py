"""The :class:`ClientCore` feeds sessions through :class:`SessionFeed` (SS-25): updates
routed by session id, early ones buffered, forgotten ids dropped, and the raw bytes cut
out only for listeners. Driven the way the reader calls it, without an event loop."""

from __future__ import annotations

import asyncio
import gc
import json
from typing import Any

import msgspec

from acp2.client.core import ClientCore, _RawUpdateNotification, _UpdateNotification
from acp2.client.session import ClientSession
from acp2.client.work import Work


def _note(session_id: str, update: dict[str, Any]) -> tuple[_UpdateNotification, bytes]:
    body = json.dumps({"sessionId": session_id, "update": update}).encode()
    return msgspec.json.decode(body, type=_UpdateNotification), body


def _chunk(session_id: str, text: str) -> tuple[_UpdateNotification, bytes]:
    content = {"type": "text", "text": text}
    update = {"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": content}
    return _note(session_id, update)


def _session(link: ClientCore[ClientSession], session_id: str = "s") -> ClientSession:
    return ClientSession(None, link, session_id, "/tmp")  # type: ignore[arg-type]


def _link() -> ClientCore[ClientSession]:
    return ClientCore(None, None)  # type: ignore[arg-type]


def test_updates_before_the_session_is_attached_are_fed_to_it_on_attach() -> None:
    link = _link()
    assert link._on_update(*_chunk("s", "early ")) is None
    session = _session(link)
    seen: list[bytes] = []
    session.add_listener(lambda update, raw: seen.append(raw))
    link.attach(session)
    link._on_update(*_chunk("s", "late"))
    assert session.state.messages[("agent", "m")].text == "early late"
    assert [json.loads(raw)["content"]["text"] for raw in seen] == ["early ", "late"]


def test_a_detached_session_id_is_forgotten_not_buffered() -> None:
    link = _link()
    session = _session(link)
    link.attach(session)
    link.detach(session)
    link._on_update(*_chunk("s", "after"))
    again = _session(link)
    link.attach(again)
    assert again.state.messages == {}


def test_a_listener_gets_the_exact_bytes_of_the_update() -> None:
    link = _link()
    session = _session(link)
    seen: list[bytes] = []
    session.add_listener(lambda update, raw: seen.append(raw))
    link.attach(session)
    body = b'{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk",'
    body += b'"messageId":"m","content":{"type":"text","text":"x"}}}'
    link._on_update(msgspec.json.decode(body, type=_UpdateNotification), body)
    assert seen == [body[body.index(b'{"sessionUpdate"') : -1]]


def test_an_idle_while_a_prompt_waits_is_taken_at_once_like_every_update() -> None:
    link = _link()
    session = _session(link)
    link.attach(session)
    loop = asyncio.new_event_loop()
    try:
        work = Work(session, session._wait_change)
        session._works.append(work)
        session._asking.append((work, loop.create_future()))  # as while prompt() awaits
        chunk = link._on_update(*_chunk("s", "now"))
        idle = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
        assert chunk is None
        assert link._on_update(*_note("s", idle)) is None  # the reader need not yield
    finally:
        loop.close()
    assert session.state.messages[("agent", "m")].text == "now"
    assert session.state.foreground == "idle"
    assert not work.accepted  # its answer is not read yet: the idle is earlier work's


def _object_chunk(text: str) -> Any:
    from acp2.schema import AgentMessageChunk, TextContent

    return AgentMessageChunk(message_id="m", content=TextContent(text=text))


def test_an_update_fed_as_an_object_is_routed_buffered_and_encoded_for_listeners() -> None:
    link = _link()
    assert link.feed("s", _object_chunk("early ")) is None  # buffered: no session yet
    session = _session(link)
    seen: list[bytes] = []
    session.add_listener(lambda update, raw: seen.append(raw))
    link.attach(session)
    assert link.feed("s", _object_chunk("late")) is None
    assert session.state.messages[("agent", "m")].text == "early late"
    assert [json.loads(raw)["content"]["text"] for raw in seen] == ["early ", "late"]
    link.detach(session)
    link.feed("s", _object_chunk("after"))  # a forgotten id: dropped
    again = _session(link)
    link.attach(again)
    assert again.state.messages == {}


def test_the_per_update_notification_is_not_tracked_by_the_cycle_collector() -> None:
    # One per update, dropped once routed: a struct type the collector tracks makes the
    # decoder decide, for every update, whether to track it (issue 25).
    assert _UpdateNotification.__struct_config__.gc is False
    assert _RawUpdateNotification.__struct_config__.gc is False
    note, raw = _chunk("s", "hi")
    assert not gc.is_tracked(note)
    assert not gc.is_tracked(msgspec.json.decode(raw, type=_RawUpdateNotification))
