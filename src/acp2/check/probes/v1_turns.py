"""Probes of a v1 agent's turns: prompt/response pairing and cancel (V1-PL-*, V1-SS-01).

In v1 the ``session/prompt`` request *is* the turn: it stays open while the agent works
and is answered, with a ``stopReason``, when the turn ends; every update of the turn comes
before that answer (V1-PL-01, V1-PL-02). After ``session/cancel`` the held prompt is
answered ``cancelled``, never with an error (V1-PL-04, V1-PL-05), and the session takes
the next prompt (V1-PL-06).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from acp2.check.driver import ClientCore
from acp2.check.frames import Frame, same_id
from acp2.check.probes.base import Probe, ProbeSpec
from acp2.check.probes.turns import Answered, send_prompt, text_block, update_for
from acp2.check.versions import V1_STOP_REASONS
from acp2.schema.methods import SESSION_CANCEL

__all__ = ["V1_TURN_PROBES", "V1Turn", "run_v1_turn"]


@dataclass
class V1Turn(Answered):
    """One v1 prompt: its request id, its answer, the updates before it and after it."""

    session_id: str
    since: int
    id: Any
    response: Frame | None
    frames: list[Frame]
    #: True when the checker sent ``session/cancel`` before the answer came.
    cancelled: bool = False

    @property
    def stop_reason(self) -> Any:
        """The result's ``stopReason``, or None."""
        return self.result.get("stopReason") if self.result else None

    def updates(self) -> list[Frame]:
        """The ``session/update`` frames of this session during the turn, in order."""
        return [f for f in self.frames if update_for(f, self.session_id) is not None]

    def late(self) -> list[Frame]:
        """The updates of this session that came after the prompt's answer."""
        answered = self.response.index if self.response else None
        return [f for f in self.updates() if answered is not None and f.index > answered]


async def run_v1_turn(
    p: Probe, link: ClientCore, session_id: str, text: str, *, label: str, cancel: bool = False
) -> V1Turn:
    """Prompt with ``text`` and wait (bounded) for the answer, then listen ``grace``
    seconds more. With ``cancel``, ``session/cancel`` follows the turn's first update (or
    the timeout, for an agent that streams nothing before it ends)."""
    since, rid = await send_prompt(link, session_id, [text_block(text)], label)
    cancelled = False
    if cancel:
        first = await link.wait_for(
            lambda f: update_for(f, session_id) is not None or _answers(f, rid), since=since
        )
        if first is None or not _answers(first, rid):
            link.step(f"{label}: {SESSION_CANCEL.name}")
            await link.notify(SESSION_CANCEL.name, {"sessionId": session_id})
            cancelled = True
    response = await link.response(rid, since=since)
    await link.settle(p.grace)
    return V1Turn(session_id, since, rid, response, link.frames[since:], cancelled)


def _answers(frame: Frame, rid: Any) -> bool:
    value = frame.value
    return isinstance(value, dict) and "method" not in value and same_id(value.get("id"), rid)


def judge_v1_turn(p: Probe, turn: V1Turn, label: str) -> None:
    """The turn was answered with a known stopReason, after all of its updates."""
    if turn.result is None:
        why = "no answer" if turn.response is None else f"answered {turn.error or 'no object'}"
        p.fail("V1-PL-01", f"{label}: {why}", [turn.response] if turn.response else [])
        return
    reason = turn.stop_reason
    frames = [turn.response] if turn.response else []
    p.judge(
        "V1-PL-01", isinstance(reason, str), f"{label}: answered with stopReason {reason!r}", frames
    )
    if isinstance(reason, str):
        known = reason in V1_STOP_REASONS
        p.judge("V1-PL-03", known, f"{label}: stopReason {reason!r}", frames)
    judge_order(p, turn, label)


def judge_order(p: Probe, turn: V1Turn, label: str) -> None:
    """V1-PL-02: no update of the session after the prompt's answer."""
    late = turn.late()
    n = len(turn.updates()) - len(late)
    p.judge(
        "V1-PL-02",
        not late,
        f"{label}: {n} update(s), all before the answer"
        if not late
        else f"{label}: {len(late)} update(s) after the prompt was answered",
        [*([turn.response] if turn.response else []), *late[:3]],
    )


async def prompt(p: Probe) -> None:
    """Two turns with ``--prompt`` in one session."""
    async with p.link() as link:
        await p.handshake(link)
        sid = await p.new_session(link)
        p.ok("V1-SS-01", f"session/new answered {sid!r}")
        for n in (1, 2):
            turn = await run_v1_turn(p, link, sid, p.options.prompt, label=f"turn {n}")
            judge_v1_turn(p, turn, f"turn {n}")
            if turn.result is None:
                break


async def cancel(p: Probe) -> None:
    """``--cancel-prompt``, cancelled after its first update; then ``--prompt``."""
    async with p.link() as link:
        await p.handshake(link)
        sid = await p.new_session(link)
        turn = await run_v1_turn(
            p, link, sid, p.options.cancel_prompt, label="cancelled turn", cancel=True
        )
        _judge_cancelled(p, turn)
        if turn.response is None:
            return
        after = await run_v1_turn(p, link, sid, p.options.prompt, label="after the cancel")
        p.judge(
            "V1-PL-06",
            isinstance(after.stop_reason, str),
            f"the next prompt was answered {after.stop_reason or after.error or 'nothing'}",
            [after.response] if after.response else [],
        )


def _judge_cancelled(p: Probe, turn: V1Turn) -> None:
    frames = [turn.response] if turn.response else []
    if not turn.cancelled:
        why = (
            f"the turn ended ({turn.stop_reason or turn.error!r}) before its first update, "
            "so there was nothing to cancel; give a --cancel-prompt that runs longer"
        )
        for key in ("V1-PL-04", "V1-PL-05"):
            p.skip(key, why)
        return
    if turn.response is None:
        why = f"no answer to the cancelled prompt within {p.timeout:g}s"
        for key in ("V1-PL-04", "V1-PL-05"):
            p.fail(key, why)
        return
    p.judge(
        "V1-PL-05",
        turn.error is None,
        "answered with a result" if turn.error is None else f"answered with error {turn.error}",
        frames,
    )
    p.judge(
        "V1-PL-04",
        turn.stop_reason == "cancelled",
        f"answered with stopReason {turn.stop_reason!r}",
        frames,
    )
    judge_order(p, turn, "cancelled turn")


V1_TURN_PROBES = (
    ProbeSpec(
        "prompt",
        prompt,
        ("V1-SS-01", "V1-PL-01", "V1-PL-02", "V1-PL-03"),
        "v1: two prompt turns, each answered when it ends",
        timing=True,
    ),
    ProbeSpec(
        "cancel",
        cancel,
        ("V1-PL-04", "V1-PL-05", "V1-PL-06"),
        "v1: session/cancel answers the held prompt `cancelled`; the next prompt works",
        timing=True,
    ),
)
