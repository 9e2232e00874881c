"""Probes of a v1 agent's permission requests (V1-PR-01, V1-PL-04:permission).

``--permission-prompt`` should make the agent call ``session/request_permission``; if it
never does, the rows are skipped with that reason. v1's request names the tool call it
is about (``toolCall``, with its ``toolCallId``) and the options. The checker answers with
a reject option (it never approves a real agent's action) and the held prompt must still
be answered, after its updates. In the second probe the checker cancels the turn while
the request is pending and answers it ``cancelled`` (v1 has the client do that); the held
prompt is then answered ``cancelled``.
"""

from __future__ import annotations

from typing import Any

from acp2.check.driver import ClientCore, permission_answer
from acp2.check.frames import Frame
from acp2.check.probes.base import Abort, Probe, ProbeSpec
from acp2.check.probes.turns import permission_request_for, send_prompt, text_block
from acp2.check.probes.v1_turns import V1Turn, judge_order, judge_v1_turn
from acp2.schema.methods import SESSION_CANCEL

__all__ = ["V1_PERMISSION_PROBES"]


async def _ask(p: Probe, link: ClientCore, keys: tuple[str, ...]) -> tuple[str, int, Any, Frame]:
    """Prompt with ``--permission-prompt``; wait for the permission request.
    Returns (session, frame mark, prompt id, request); raises :class:`Abort` after
    skipping ``keys`` if the agent never asks."""
    await p.handshake(link)
    link.manual_permissions = True
    sid = await p.new_session(link)
    text = [text_block(p.options.permission_prompt)]
    since, rid = await send_prompt(link, sid, text, "permission prompt")
    request = await link.wait_for(permission_request_for(sid), since=since)
    if request is None:
        for key in keys:
            why = f"the agent did not ask for permission within {p.timeout:g}s"
            p.skip(key, f"{why} (see --permission-prompt){link.exit_note()}")
        await link.notify(SESSION_CANCEL.name, {"sessionId": sid})
        await link.response(rid, since=since)
        raise Abort("no permission request")
    return sid, since, rid, request


def _judge_request(p: Probe, request: Frame) -> None:
    params: Any = request.value.get("params")
    params = params if isinstance(params, dict) else {}
    call, options = params.get("toolCall"), params.get("options")
    problems = []
    if not (isinstance(call, dict) and isinstance(call.get("toolCallId"), str)):
        problems.append("toolCall needs a string toolCallId")
    keys = ("optionId", "name", "kind")
    if not (
        isinstance(options, list)
        and options
        and all(
            isinstance(o, dict) and all(isinstance(o.get(k), str) for k in keys) for o in options
        )
    ):
        problems.append("options must be a non-empty list of {optionId, name, kind}")
    p.judge(
        "V1-PR-01",
        not problems,
        "; ".join(problems) or f"about {call['toolCallId']!r}, {len(options)} option(s)",
        [request],
    )


async def permission(p: Probe) -> None:
    """A permission request, answered with a reject option; the turn still ends."""
    async with p.link() as link:
        sid, since, rid, request = await _ask(p, link, ("V1-PR-01",))
        _judge_request(p, request)
        await link.reply(request, permission_answer(request))
        response = await link.response(rid, since=since)
        await link.settle(p.grace)
        judge_v1_turn(p, V1Turn(sid, since, rid, response, link.frames[since:]), "rejected")


async def permission_cancel(p: Probe) -> None:
    """``session/cancel`` while a permission request is pending: the checker answers it
    ``cancelled``; the held prompt is answered ``cancelled``."""
    key = "V1-PL-04:permission"
    async with p.link() as link:
        sid, since, rid, request = await _ask(p, link, (key,))
        await link.notify(SESSION_CANCEL.name, {"sessionId": sid})
        await link.reply(request, {"outcome": {"outcome": "cancelled"}})
        response = await link.response(rid, since=since)
        await link.settle(p.grace)
        turn = V1Turn(sid, since, rid, response, link.frames[since:], cancelled=True)
        if response is None:
            p.fail(key, f"no answer to the cancelled prompt within {p.timeout:g}s")
            return
        p.judge(
            key,
            turn.stop_reason == "cancelled",
            f"answered {turn.stop_reason or turn.error!r}",
            [response],
        )
        judge_order(p, turn, "cancelled during a permission request")


V1_PERMISSION_PROBES = (
    ProbeSpec(
        "permission",
        permission,
        ("V1-PR-01",),
        "v1: a permission request (--permission-prompt), answered with reject",
        timing=True,
    ),
    ProbeSpec(
        "permission-cancel",
        permission_cancel,
        ("V1-PL-04:permission",),
        "v1: session/cancel while a permission request is pending",
        timing=True,
    ),
)
