"""Probes: malformed input and batches (TR-13, TR-01, TR-14, D-01).

Each kind of malformed input goes to its own agent process, so an agent that dies on
one fails that row alone. After each input a follow-up request shows whether the link
is still usable; every answer (a response object or an array) that arrived before its
answer, or shortly after, is the reply to the input. Notifications the agent sends on its
own meanwhile (``_auth/status_update`` ...) are not answers: they are named in the row's
reason and never counted.
"""

from __future__ import annotations

import json
from typing import Any

from acp2.check.driver import ClientCore
from acp2.check.frames import Frame, is_answer, is_notification, is_response, same_id
from acp2.check.probes.base import Abort, Probe, ProbeSpec
from acp2.schema.methods import SESSION_LIST

__all__ = ["MALFORMED_PROBES"]


def _null_errors(frames: list[Frame]) -> list[Frame]:
    return [
        f
        for f in frames
        if isinstance(f.value, dict)
        and is_response(f.value)
        and f.value.get("id") is None
        and isinstance(f.value.get("error"), dict)
    ]


def _code(frame: Frame) -> Any:
    return frame.value["error"].get("code")


async def _send_then_flush(
    link: ClientCore, label: str, data: bytes, grace: float
) -> tuple[Frame | None, list[Frame], list[Frame]]:
    """Write ``data``, then a request; return its answer, every other answer around it,
    and the notifications the agent sent meanwhile (which answer nothing)."""
    since = link.step(label)
    await link.send_raw(data)
    flush_id = f"alive-{label}"
    await link.ping(flush_id)
    answer = await link.response(flush_id, since=since)
    await link.settle(grace)
    window = [f for f in link.frames[since:] if f.ok and f is not answer]
    others = [
        f
        for f in window
        if is_answer(f.value)
        and not (isinstance(f.value, dict) and same_id(f.value.get("id"), flush_id))
    ]
    return answer, others, [f for f in window if is_notification(f.value)]


def noted(reason: str, notes: list[Frame]) -> str:
    """``reason`` plus a clause naming the notifications that were not counted."""
    if not notes:
        return reason
    methods = sorted({str(f.value.get("method")) for f in notes})
    return f"{reason} ({len(notes)} notification(s) not counted: {', '.join(methods)})"


async def _single_error(p: Probe, key: str, label: str, data: bytes, code: int) -> None:
    async with p.link() as link:
        await p.handshake(link)
        answer, others, notes = await _send_then_flush(link, f"malformed:{label}", data, 0.2)
        errors = _null_errors(others)
        if answer is None:
            sent = [x for x in link.sent if x.raw == data]
            p.fail(
                key,
                f"the agent stopped answering after {label}{link.exit_note()}",
                [*sent, *others],
            )
        elif len(errors) != 1 or _code(errors[0]) != code or len(others) != 1:
            why = f"expected exactly one {code} error with id null, got {len(others)} answer(s)"
            p.fail(key, noted(why, notes), others)
        else:
            p.ok(key, noted(f"one {code} error with id null; the link stayed usable", notes))


async def invalid_json(p: Probe) -> None:
    """A line that is not JSON: one -32700 with id null, and the link stays up."""
    await _single_error(p, "TR-13:json", "invalid JSON", b"{bad json\n", -32700)


async def invalid_request(p: Probe) -> None:
    """A JSON object that is not a request: one -32600 with id null."""
    line = b'{"jsonrpc":"2.0","method":1,"params":"bar"}\n'
    await _single_error(p, "TR-13:request", "a non-request object", line, -32600)


async def invalid_utf8(p: Probe) -> None:
    """A request on a line that is not UTF-8 must not break the link.

    The transports page puts the burden on the sender ("JSON-RPC messages MUST be UTF-8
    encoded"; the client MUST NOT write anything else) and says nothing of the receiver,
    and a JSON parser MAY accept non-JSON forms (RFC 8259 section 9). So rejecting the
    line (-32700) and decoding it leniently (U+FFFD for the bad bytes, as the TypeScript
    SDK's reader does) and answering both pass; the row fails when the agent stops
    answering. The reason says which of the two the agent did.
    """
    line = b'{"jsonrpc":"2.0","id":77,"method":"session/list","params":{"cwd":"/tmp/\xff"}}\n'
    async with p.link() as link:
        await p.handshake(link)
        # The id is ours even though the bytes are broken: a lenient agent may answer it,
        # which the reason reports; the id audit (TR-09) must not count it as unknown.
        link.called.append((77, SESSION_LIST.name))
        answer, others, _ = await _send_then_flush(link, "malformed:invalid UTF-8", line, 0.2)
        dispatched = [
            f
            for f in others
            if isinstance(f.value, dict) and same_id(f.value.get("id"), 77) and "result" in f.value
        ]
        if answer is None:
            p.fail("TR-01:utf8", f"the agent stopped answering{link.exit_note()}", others)
        else:
            p.ok("TR-01:utf8", _LENIENT if dispatched else "rejected; the link stayed usable")


#: The reason of a lenient agent's TR-01:utf8 PASS.
_LENIENT = (
    "decoded leniently (U+FFFD) and answered, which a JSON parser may do (RFC 8259 "
    "section 9); the link stayed usable"
)


def _message(method: str, id: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if id is not None:
        message["id"] = id
    return message


async def batches(p: Probe) -> None:
    """``[]``, a batch of notifications, and a mixed batch, judged per draft."""
    async with p.link() as link:
        await p.handshake(link)
        answer, others, notes = await _send_then_flush(link, "batch:empty", b"[]\n", p.grace)
        if answer is None:
            p.fail("TR-14:empty", f"the agent stopped answering after []{link.exit_note()}", others)
            raise Abort("the agent stopped answering after a batch")
        single = len(others) == 1 and bool(_null_errors(others)) and _code(others[0]) == -32600
        p.judge(
            "TR-14:empty",
            single,
            noted(
                "one -32600 object"
                if single
                else f"expected one -32600 error object, got {len(others)} answer(s)",
                notes,
            ),
            others,
        )
        batch = [_message("_acp2check/n1"), _message("_acp2check/n2")]
        data = json.dumps(batch).encode() + b"\n"
        answer, others, notes = await _send_then_flush(link, "batch:notifications", data, p.grace)
        p.judge(
            "TR-14:notifications",
            answer is not None and not others,
            noted("no reply" if not others else "a batch of notifications was answered", notes),
            others,
        )
        _judge_nov(p, others, "notifications")
        await _mixed(p, link)


async def _mixed(p: Probe, link: ClientCore) -> None:
    entries = [
        _message("_acp2check/b1", "b1"),
        _message("_acp2check/n"),
        5,
        {**_message(SESSION_LIST.name, "b2"), "params": {}},
    ]
    link.expect("b1", "_acp2check/b1")
    link.expect("b2", SESSION_LIST.name)
    data = json.dumps(entries).encode() + b"\n"
    answer, others, _ = await _send_then_flush(link, "batch:mixed", data, p.grace)
    arrays = [f for f in others if isinstance(f.value, list)]
    ok = len(others) == 1 and len(arrays) == 1 and _batch_entries_ok(arrays[0].value)
    p.judge(
        "TR-14:mixed",
        answer is not None and ok,
        "one array: b1, b2 and -32600 for the entry 5"
        if ok
        else "expected one array with 3 entries (b1, b2, -32600 id null)",
        others,
    )
    _judge_nov(p, others, "mixed")


def _batch_entries_ok(entries: list[Any]) -> bool:
    ids = sorted(repr(e.get("id")) for e in entries if isinstance(e, dict))
    return len(entries) == 3 and ids == sorted([repr("b1"), repr("b2"), repr(None)])


def _judge_nov(p: Probe, others: list[Frame], label: str) -> None:
    single = len(others) == 1 and bool(_null_errors(others)) and _code(others[0]) == -32600
    p.judge(
        "D-01:nov",
        single,
        f"{label} batch: one -32600 (Nov has no batches)"
        if single
        else f"{label} batch: Nov expects one -32600 with id null and nothing processed",
        others,
    )


MALFORMED_PROBES = (
    ProbeSpec("invalid-json", invalid_json, ("TR-13:json",), "a line that is not JSON"),
    ProbeSpec(
        "invalid-request",
        invalid_request,
        ("TR-13:request",),
        "a JSON object that is not a request",
    ),
    ProbeSpec("invalid-utf8", invalid_utf8, ("TR-01:utf8",), "a request with invalid UTF-8"),
    ProbeSpec(
        "batches",
        batches,
        ("TR-14:empty", "TR-14:notifications", "TR-14:mixed", "D-01:nov"),
        "empty, notification-only and mixed batches",
    ),
)
