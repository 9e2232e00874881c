"""Probe: JSON-RPC hygiene on well-formed input (TR-08, TR-09, TR-11, TR-22, EX-04).

Ids are echoed with their JSON type (``1`` and ``"1"`` sent together), unknown and
removed methods get ``-32601``, ``_`` extension requests are answered, and
notifications -- unknown ones, ``_`` ones, ``session/cancel`` for an unknown session,
``$/cancel_request`` for an unknown id -- are never answered. The same probe judges a v1
agent (its findings land on the v1 rows); ``session/load`` is a v1 method there, so a
second unknown method takes its place.
"""

from __future__ import annotations

from typing import Any

from acp2.check.driver import ClientCore
from acp2.check.frames import Frame, is_response, same_id
from acp2.check.probes.base import Probe, ProbeSpec
from acp2.compat.v1.methods import SESSION_LOAD as V1_SESSION_LOAD
from acp2.schema.methods import CANCEL_REQUEST, SESSION_CANCEL

__all__ = ["JSONRPC_PROBES"]

_EXT = "_acp2check/unknown"
#: v1's ``session/load``, which v2 removed (so a v2 agent answers ``-32601``).
_V1_LOAD = V1_SESSION_LOAD.name
#: The second unknown method sent to a v1 agent (for which session/load exists).
_V1_UNKNOWN = "foo/baz"


def _code(frame: Frame | None) -> Any:
    error = frame.value.get("error") if frame else None
    return error.get("code") if isinstance(error, dict) else None


async def _flush(link: ClientCore, since: int, label: str) -> tuple[Frame | None, list[Frame]]:
    """Send a request after notifications; return its response and every other response
    that arrived meanwhile (or within the grace period after it)."""
    flush_id = f"flush-{label}"
    await link.ping(flush_id)
    answer = await link.response(flush_id, since=since)
    await link.settle(0.2)
    others = [
        f
        for f in link.frames[since:]
        if f.ok and is_response(f.value) and not same_id(f.value.get("id"), flush_id)
    ]
    return answer, others


async def jsonrpc(p: Probe) -> None:
    """Run the id, method and notification checks on one agent."""
    async with p.link() as link:
        await p.handshake(link)
        await _ids_and_methods(p, link)
        await _notifications(p, link)
        await _cancel_request(p, link)


async def _ids_and_methods(p: Probe, link: ClientCore) -> None:
    since = link.step("ids and methods")
    load = {"sessionId": "sess_acp2check", "cwd": p.cwd, "mcpServers": []}
    removed = (_V1_LOAD, load) if link.version == 2 else (_V1_UNKNOWN, None)
    sent = [
        (1001, _EXT, None),
        ("1001", _EXT, None),
        (1002, "foo/bar", None),
        ("load", *removed),
    ]
    for rid, method, params in sent:
        await link.request(method, params, id=rid)
    answers = {repr(rid): await link.response(rid, since=since) for rid, _, _ in sent}
    await link.settle(p.grace)
    _judge_ids(p, link, since, sent, answers)
    ext = [answers[repr(1001)], answers[repr("1001")]]
    p.judge(
        "EX-04",
        all(_code(f) == -32601 for f in ext),
        "unknown `_` requests got codes " + ", ".join(repr(_code(f)) for f in ext),
        [f for f in ext if f is not None],
    )
    unknown = [answers[repr(1002)], answers[repr("load")]]
    p.judge(
        "TR-11",
        all(_code(f) == -32601 for f in unknown),
        f"foo/bar got {_code(unknown[0])!r}, {removed[0]} got {_code(unknown[1])!r}",
        [f for f in unknown if f is not None],
    )


def _judge_ids(
    p: Probe,
    link: ClientCore,
    since: int,
    sent: list[tuple[Any, str, Any]],
    answers: dict[str, Frame | None],
) -> None:
    missing = [repr(rid) for rid, _, _ in sent if answers[repr(rid)] is None]
    if missing:
        p.fail("TR-09", f"no response to ids {', '.join(missing)}{link.exit_note()}")
        return
    twice = []
    for rid, _, _ in sent:
        copies = [
            f
            for f in link.frames[since:]
            if f.ok and is_response(f.value) and same_id(f.value.get("id"), rid)
        ]
        if len(copies) > 1:
            twice.extend(copies)
    p.judge(
        "TR-09",
        not twice,
        'ids 1001, "1001", 1002 and "load" each answered once with their own type'
        if not twice
        else "a request was answered more than once",
        twice,
    )


async def _notifications(p: Probe, link: ClientCore) -> None:
    since = link.step("notifications")
    await link.notify("foo/bar", {"x": 1})
    await link.notify("_acp2check/note", {"x": 1})
    await link.notify(SESSION_CANCEL.name, {"sessionId": "sess_unknown_acp2check"})
    answer, others = await _flush(link, since, "notifications")
    if answer is None:
        p.fail(
            "TR-08",
            f"no answer to the request sent after the notifications{link.exit_note()}",
            others,
        )
        return
    p.judge(
        "TR-08",
        not others,
        "foo/bar, _acp2check/note and session/cancel went unanswered"
        if not others
        else "the agent answered a notification",
        others,
    )


async def _cancel_request(p: Probe, link: ClientCore) -> None:
    since = link.step(CANCEL_REQUEST.name)
    await link.notify(CANCEL_REQUEST.name, {"requestId": 987654})
    answer, others = await _flush(link, since, "cancel")
    if answer is None:
        p.fail("TR-22", f"no answer to the request sent after it{link.exit_note()}", others)
        return
    p.judge(
        "TR-22",
        not others,
        "no reply to $/cancel_request for an unknown id"
        if not others
        else "$/cancel_request for an unknown id was answered",
        others,
    )


JSONRPC_PROBES = (
    ProbeSpec(
        "jsonrpc",
        jsonrpc,
        ("TR-09", "TR-08", "TR-11", "EX-04", "TR-22"),
        "ids and their types, unknown methods, extension requests, notifications",
    ),
)
