"""Probe: ``session/cancel`` during a running turn (PL-18, PL-19, PL-20, PL-22).

The turn is started with ``--cancel-prompt``; once the prompt is accepted and running,
the checker cancels. The turn must end with exactly one idle ``cancelled``, never an
error, and nothing for the turn may follow that idle. The session then takes a new prompt.
"""

from __future__ import annotations

from acp2.check.driver import ClientCore
from acp2.check.frames import Frame, is_response
from acp2.check.probes.base import Abort, Probe, ProbeSpec
from acp2.check.probes.prompt import judge_turn
from acp2.check.probes.turns import (
    is_state,
    run_turn,
    send_prompt,
    text_block,
    update_for,
    wait_state,
)
from acp2.schema.methods import SESSION_CANCEL

__all__ = ["CANCEL_PROBES", "judge_cancelled"]

ROWS = ("PL-18", "PL-19", "PL-20", "PL-22")
#: Updates that belong to foreground work and must not follow its idle ``cancelled``.
_TURN_KINDS = frozenset(
    {
        "agent_message",
        "agent_message_chunk",
        "agent_thought",
        "agent_thought_chunk",
        "tool_call_update",
        "tool_call_content_chunk",
        "plan_update",
    }
)


async def start_running(p: Probe, link: ClientCore, sid: str, text: str) -> int:
    """Prompt with ``text`` and wait for its acceptance and ``running``; the frame mark.

    Raises :class:`Abort` (after a PL-03 finding) if the prompt is not accepted.
    """
    since, rid = await send_prompt(link, sid, [text_block(text)], "prompt to cancel")
    response = await link.response(rid, since=since)
    if response is None or "result" not in response.value:
        why = "no response" if response is None else f"error {response.value.get('error')}"
        p.fail(
            "PL-03",
            f"the prompt to cancel: {why} while the work runs{link.exit_note()}",
            [response] if response else [],
        )
        raise Abort("the prompt to cancel was not accepted")
    await wait_state(link, sid, "running", since=since)
    return since


def judge_cancelled(p: Probe, key: str, sid: str, idle: Frame | None, frames: list[Frame]) -> None:
    """Judge an idle that must say ``cancelled`` (``key``) and PL-19 (never an error)."""
    update = update_for(idle, sid) if idle else None
    reason = update.get("stopReason") if update else None
    errors = [f for f in frames if is_response(f.value) and "error" in f.value]
    p.judge(
        key,
        reason == "cancelled",
        f"idle with stopReason {reason!r}"
        if idle
        else f"no idle within {p.timeout:g}s of session/cancel (last frames shown)",
        [idle] if idle else frames[-3:],
    )
    as_error = errors + ([idle] if idle and reason == "error" else [])
    p.judge(
        "PL-19",
        not as_error,
        "the cancel was not reported as an error"
        if not as_error
        else "the cancel was reported as an error",
        as_error,
    )


async def cancel(p: Probe) -> None:
    """Cancel a running turn; then prompt again."""
    async with p.link() as link:
        await p.handshake(link)
        sid = await p.new_session(link)
        since = await start_running(p, link, sid, p.options.cancel_prompt)
        await link.settle(0.2)
        early = [f for f in link.frames[since:] if is_state(f, sid, "idle")]
        if early:
            for key in ("PL-18", "PL-19", "PL-20"):
                p.skip(key, "the turn ended before the cancel; use a longer --cancel-prompt")
        else:
            cut = link.step(SESSION_CANCEL.name)
            await link.notify(SESSION_CANCEL.name, {"sessionId": sid})
            idle = await wait_state(link, sid, "idle", since=cut)
            await link.settle(p.grace)
            judge_cancelled(p, "PL-18", sid, idle, link.frames[since:])
            if idle is not None:
                _judge_after(p, sid, link.frames[idle.index + 1 :])
        turn = await run_turn(p, link, sid, [text_block(p.options.prompt)], label="after cancel")
        ok = turn.result is not None and turn.idle is not None
        p.judge(
            "PL-22",
            ok,
            "a new prompt ran to idle after the cancel"
            if ok
            else "the session did not run a new prompt after the cancel",
            [f for f in (turn.response, turn.idle) if f],
        )
        if turn.idle is not None:
            judge_turn(p, turn, "after cancel")


def _judge_after(p: Probe, sid: str, frames: list[Frame]) -> None:
    late = [
        f
        for f in frames
        if (u := update_for(f, sid)) is not None
        and (u.get("sessionUpdate") in _TURN_KINDS or is_state(f, sid, "running"))
    ]
    p.judge(
        "PL-20",
        not late,
        "nothing for the turn after its idle"
        if not late
        else "updates for the cancelled turn arrived after its idle",
        late,
    )


CANCEL_PROBES = (
    ProbeSpec(
        "cancel",
        cancel,
        ROWS,
        "session/cancel during a running turn (--cancel-prompt)",
        timing=True,
    ),
)
