"""Probes: the permission flow, and cancel while a permission request is pending.

``--permission-prompt`` should make the agent call ``session/request_permission``; if it
never does, the rows are skipped with that reason. The checker answers with a reject
option (it never approves a real agent's action), and expects ``requires_action`` while
it waits, ``running`` or ``idle`` after (PL-09). In the second probe it cancels the turn
instead: Aug has the client answer ``cancelled`` (it does), Nov has the agent send
``$/cancel_request`` first (PL-16, D-15); either way the turn ends idle ``cancelled``.
"""

from __future__ import annotations

from typing import Any

from acp2.check.driver import ClientCore, permission_answer
from acp2.check.frames import Frame, same_id
from acp2.check.probes.base import Abort, Probe, ProbeSpec
from acp2.check.probes.cancel import judge_cancelled
from acp2.check.probes.turns import (
    is_state,
    permission_request_for,
    send_prompt,
    text_block,
    update_for,
    wait_state,
)
from acp2.schema.methods import CANCEL_REQUEST, SESSION_CANCEL

__all__ = ["PERMISSION_PROBES"]

ROWS = ("PR-02", "PL-09")
CANCEL_ROWS = ("PL-18:permission", "PL-16:nov")


async def _ask(p: Probe, link: ClientCore, keys: tuple[str, ...]) -> tuple[str, int, Frame]:
    """Prompt with ``--permission-prompt`` and wait for the permission request.

    Raises :class:`Abort` after skipping ``keys`` if the agent never asks.
    """
    await p.handshake(link)
    link.manual_permissions = True
    sid = await p.new_session(link)
    since, _ = await send_prompt(
        link, sid, [text_block(p.options.permission_prompt)], "permission prompt"
    )
    request = await link.wait_for(permission_request_for(sid), since=since)
    if request is None:
        for key in keys:
            p.skip(
                key,
                f"the agent did not ask for permission within {p.timeout:g}s "
                f"(see --permission-prompt){link.exit_note()}",
            )
        await link.notify(SESSION_CANCEL.name, {"sessionId": sid})
        await wait_state(link, sid, "idle", since=since)
        raise Abort("no permission request")
    return sid, since, request


def _judge_request(p: Probe, request: Frame) -> None:
    params: Any = request.value.get("params")
    options = params.get("options") if isinstance(params, dict) else None
    title = params.get("title") if isinstance(params, dict) else None
    shaped = (
        isinstance(options, list)
        and bool(options)
        and all(
            isinstance(o, dict)
            and all(isinstance(o.get(k), str) for k in ("optionId", "name", "kind"))
            for o in options
        )
    )
    ok = isinstance(title, str) and shaped
    p.judge(
        "PR-02",
        ok,
        f"title {title!r}, {len(options or [])} options"
        if ok
        else "needs a string title and options [{optionId, name, kind}, ...]",
        [request],
    )


async def permission(p: Probe) -> None:
    """Answer the permission request with a reject option; follow the states."""
    async with p.link() as link:
        sid, since, request = await _ask(p, link, ROWS)
        _judge_request(p, request)
        asked = await link.wait_for(
            lambda f: is_state(f, sid, "requires_action"), since=since, within=p.grace
        )
        answered = link.step("permission answered")
        await link.reply(request, permission_answer(request, "reject"))
        after = await link.wait_for(
            lambda f: is_state(f, sid, "running") or is_state(f, sid, "idle"), since=answered
        )
        idle = await wait_state(link, sid, "idle", since=answered)
        if asked is None:
            p.fail(
                "PL-09", "no requires_action while the permission request was pending", [request]
            )
        else:
            p.judge(
                "PL-09",
                after is not None,
                "requires_action, then running / idle"
                if after
                else "requires_action was never followed by running or idle",
                [asked],
            )
        update = update_for(idle, sid) if idle else None
        if update is None:
            p.fail("PL-07", f"no idle after the permission answer{link.exit_note()}")
        elif not isinstance(update.get("stopReason"), str):
            p.fail(
                "PL-07",
                "idle without a stopReason after the permission answer",
                [idle] if idle else [],
            )


async def permission_cancel(p: Probe) -> None:
    """Cancel the turn while its permission request is pending."""
    async with p.link() as link:
        sid, since, request = await _ask(p, link, CANCEL_ROWS)
        cut = link.step("session/cancel during permission")
        await link.notify(SESSION_CANCEL.name, {"sessionId": sid})
        rid = request.value.get("id")
        withdrawn = await link.wait_for(lambda f: _cancels(f, rid), since=cut, within=p.grace)
        p.judge(
            "PL-16:nov",
            withdrawn is not None,
            "$/cancel_request sent for the permission"
            if withdrawn
            else "no $/cancel_request for the pending permission request",
            [],
        )
        await link.reply(request, {"outcome": {"outcome": "cancelled"}})
        idle = await wait_state(link, sid, "idle", since=cut)
        await link.settle(p.grace)
        judge_cancelled(p, "PL-18:permission", sid, idle, link.frames[since:])


def _cancels(frame: Frame, rid: Any) -> bool:
    v = frame.value
    if not isinstance(v, dict) or v.get("method") != CANCEL_REQUEST.name or "id" in v:
        return False
    params = v.get("params")
    return isinstance(params, dict) and same_id(params.get("requestId"), rid)


PERMISSION_PROBES = (
    ProbeSpec(
        "permission", permission, ROWS, "a permission request (--permission-prompt)", timing=True
    ),
    ProbeSpec(
        "permission-cancel",
        permission_cancel,
        CANCEL_ROWS,
        "session/cancel while a permission request is pending",
        timing=True,
    ),
)
