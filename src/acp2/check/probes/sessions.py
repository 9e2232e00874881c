"""Probe: the session baseline an advertised ``capabilities.session`` commits to (IN-09).

new (twice, distinct ids), list, one prompt turn (to have history), close, resume
without replay (no history first), resume from the start (history first), delete when
advertised. Nov adds a ``state_update`` snapshot before every resume response (D-14).
"""

from __future__ import annotations

from typing import Any

from acp2.check.driver import ClientCore
from acp2.check.frames import Frame
from acp2.check.probes.base import Abort, Probe, ProbeSpec, has_capability
from acp2.check.probes.turns import run_turn, text_block, update_for
from acp2.schema.methods import SESSION_CLOSE, SESSION_DELETE, SESSION_LIST, SESSION_RESUME

__all__ = ["SESSION_PROBES"]

ROWS = ("SS-03", "SS-18", "SS-10", "SS-11", "SS-12", "SS-16:nov", "SS-22", "SS-23", "SS-23:again")
_HISTORY_KINDS = frozenset(
    {
        "user_message",
        "user_message_chunk",
        "agent_message",
        "agent_message_chunk",
        "agent_thought",
        "agent_thought_chunk",
        "tool_call_update",
        "tool_call_content_chunk",
    }
)


def _result(frame: Frame | None) -> Any:
    value = frame.value.get("result") if frame else None
    return value if isinstance(value, dict) else None


def _why(frame: Frame | None, link: ClientCore) -> str:
    if frame is None:
        return f"no answer{link.exit_note()}"
    return f"error {frame.value.get('error')!r}"


async def sessions(p: Probe) -> None:
    """Run the baseline against one agent process."""
    async with p.link() as link:
        caps = await p.handshake(link)
        p.require_session(caps, ROWS)
        first = await p.new_session(link)
        second = await p.new_session(link)
        p.judge("SS-03", first != second, f"two sessions: {first} and {second}")
        await _list(p, link, {first, second})
        turn = await run_turn(p, link, first, [text_block(p.options.prompt)], label="history")
        if turn.idle is None:
            raise Abort("the prompt turn needed for resume did not end")
        await _close(p, link, first)
        await _resume(p, link, first, replay=False)
        await _close(p, link, first)
        await _resume(p, link, first, replay=True)
        await _close(p, link, first)
        await _delete(p, link, caps, second)


async def _list(p: Probe, link: ClientCore, ids: set[str]) -> None:
    link.step(SESSION_LIST.name)
    frame = await link.call(SESSION_LIST.name, {})
    result = _result(frame)
    listed = result.get("sessions") if result else None
    if not isinstance(listed, list):
        p.fail("SS-18", f"session/list: {_why(frame, link)}", [frame] if frame else [])
        return
    bad = [
        s
        for s in listed
        if not (
            isinstance(s, dict)
            and isinstance(s.get("sessionId"), str)
            and isinstance(s.get("cwd"), str)
        )
    ]
    seen = ids & {s.get("sessionId") for s in listed if isinstance(s, dict)}
    p.judge(
        "SS-18",
        not bad,
        f"{len(listed)} sessions listed ({len(seen)} of the 2 new ones)"
        if not bad
        else "entries without sessionId / cwd",
        [frame] if frame else [],
    )


async def _close(p: Probe, link: ClientCore, sid: str) -> None:
    link.step(SESSION_CLOSE.name)
    frame = await link.call(SESSION_CLOSE.name, {"sessionId": sid})
    p.judge(
        "SS-22",
        _result(frame) is not None,
        "session/close answered {}"
        if _result(frame) is not None
        else f"session/close: {_why(frame, link)}",
        [frame] if frame else [],
    )


async def _resume(p: Probe, link: ClientCore, sid: str, *, replay: bool) -> None:
    params: dict[str, Any] = {"sessionId": sid, "cwd": p.cwd, "mcpServers": []}
    if replay:
        params["replayFrom"] = {"type": "start"}
    since = link.step(SESSION_RESUME.name + (" from start" if replay else ""))
    frame = await link.call(SESSION_RESUME.name, params)
    label = "resume from start" if replay else "resume"
    if frame is None or _result(frame) is None:
        p.fail(
            "SS-12" if replay else "SS-10",
            f"{label}: {_why(frame, link)}",
            [frame] if frame else [],
        )
        raise Abort(f"{label} failed")
    before = [(f, u) for f in link.frames[since : frame.index] if (u := update_for(f, sid))]
    history = [(f, u) for f, u in before if u.get("sessionUpdate") in _HISTORY_KINDS]
    states = [f for f, u in before if u.get("sessionUpdate") == "state_update"]
    p.judge(
        "SS-16:nov",
        bool(states),
        f"{label}: state_update before the response"
        if states
        else f"{label}: no state_update before the response",
        [frame],
    )
    if replay:
        _judge_replay(p, frame, history)
    else:
        p.ok("SS-10", "resume without replayFrom answered")
        p.judge(
            "SS-11",
            not history,
            "no history before the response"
            if not history
            else "history was sent although replayFrom was omitted",
            [f for f, _ in history],
        )


def _judge_replay(p: Probe, frame: Frame, history: list[tuple[Frame, dict[str, Any]]]) -> None:
    users = [u for _, u in history if str(u.get("sessionUpdate")).startswith("user_message")]
    unnamed = [
        f
        for f, u in history
        if str(u.get("sessionUpdate")).endswith(
            ("message", "message_chunk", "thought", "thought_chunk")
        )
        and not isinstance(u.get("messageId"), str)
    ]
    if not users:
        p.fail("SS-12", "no user message was replayed before the response", [frame])
    elif unnamed:
        p.fail("SS-12", "replayed messages without messageId (SS-13)", unnamed)
    else:
        p.ok("SS-12", f"{len(history)} history updates replayed before the response")


async def _delete(p: Probe, link: ClientCore, caps: dict[str, Any], sid: str) -> None:
    if not has_capability(caps, "session.delete"):
        p.skip("SS-23", "session.delete is not advertised")
        p.skip("SS-23:again", "session.delete is not advertised")
        return
    link.step(SESSION_DELETE.name)
    frame = await link.call(SESSION_DELETE.name, {"sessionId": sid})
    if frame is None or _result(frame) is None:
        p.fail("SS-23", f"session/delete: {_why(frame, link)}", [frame] if frame else [])
        return
    listing = _result(await link.call(SESSION_LIST.name, {}))
    listed = listing.get("sessions") if listing else None
    ids = (
        {s.get("sessionId") for s in listed if isinstance(s, dict)}
        if isinstance(listed, list)
        else set()
    )
    p.judge(
        "SS-23",
        sid not in ids,
        "deleted, and gone from session/list"
        if sid not in ids
        else "the deleted session is still listed",
        [frame],
    )
    again = await link.call(SESSION_DELETE.name, {"sessionId": sid})
    p.judge(
        "SS-23:again",
        _result(again) is not None,
        "a second delete succeeded"
        if _result(again) is not None
        else f"second delete: {_why(again, link)}",
        [again] if again else [],
    )


SESSION_PROBES = (
    ProbeSpec(
        "sessions",
        sessions,
        ROWS,
        "new, list, close, resume (with and without replay), delete",
        timing=True,
    ),
)
