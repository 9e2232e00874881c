"""Probe: the prompt lifecycle of two turns in one session (PL-03..PL-24, MU-02).

Per turn: a result (not an error) before the idle; a ``user_message`` acknowledgement
with a ``messageId`` (Nov: the result's ``messageId``); ``running``; exactly one idle
with a valid stop reason. Across turns: distinct message ids.
"""

from __future__ import annotations

from acp2.check.frames import Frame
from acp2.check.probes.base import Probe, ProbeSpec
from acp2.check.probes.turns import Turn, is_state, run_turn, text_block
from acp2.schema.common import STOP_REASONS

__all__ = ["PROMPT_PROBES", "judge_turn"]

ROWS = (
    "PL-03",
    "PL-03:nov",
    "D-09:aug",
    "PL-04",
    "PL-04:nov",
    "PL-06",
    "PL-07",
    "PL-10",
    "PL-24",
    "MU-02",
    "MU-02:aug",
    "D-25:nov",
)
_USER = frozenset({"user_message", "user_message_chunk"})
_KINDS = {
    "user": _USER,
    "agent": frozenset({"agent_message", "agent_message_chunk"}),
    "thought": frozenset({"agent_thought", "agent_thought_chunk"}),
}


def _before(frame: Frame | None, turn: Turn) -> bool:
    return frame is not None and (turn.idle is None or frame.index < turn.idle.index)


def judge_turn(p: Probe, turn: Turn, label: str) -> None:
    """Judge one turn's response, acknowledgement, states and stop reason."""
    resp = [turn.response] if turn.response else []
    if turn.result is None:
        why = "no response" if turn.response is None else f"answered {turn.error or 'no object'}"
        p.fail("PL-03", f"{label}: {why}", resp)
    else:
        p.judge(
            "PL-03",
            _before(turn.response, turn),
            f"{label}: answered on acceptance"
            if _before(turn.response, turn)
            else f"{label}: answered only after the turn's idle (it must not wait for the work)",
            resp + ([turn.idle] if turn.idle else []),
        )
        has_id = isinstance(turn.result.get("messageId"), str)
        said = "the result carries messageId" if has_id else "the result has no messageId"
        p.judge("PL-03:nov", has_id, said, resp)
        p.judge("D-09:aug", has_id, said, resp)
    _judge_ack(p, turn, label)
    running = [f for f in turn.frames if is_state(f, turn.session_id, "running")]
    p.judge(
        "PL-06",
        bool(running) and _before(running[0], turn),
        f"{label}: running reported" if running else f"{label}: no running state_update",
        [],
    )
    _judge_idle(p, turn, label)


def _judge_ack(p: Probe, turn: Turn, label: str) -> None:
    acks = [(f, u) for f, u in turn.messages(_USER) if _before(f, turn)]
    named = [(f, u) for f, u in acks if isinstance(u.get("messageId"), str)]
    if not named:
        p.fail(
            "PL-04",
            f"{label}: no user_message with a messageId before the idle",
            [f for f, _ in acks],
        )
        return
    p.ok("PL-04", f"{label}: user_message {named[0][1]['messageId']}")
    want = turn.result.get("messageId") if turn.result else None
    got = named[0][1]["messageId"]
    p.judge(
        "PL-04:nov",
        want == got,
        f"{label}: user_message id {got!r}, result id {want!r}",
        [named[0][0]] + ([turn.response] if turn.response else []),
    )


def _judge_idle(p: Probe, turn: Turn, label: str) -> None:
    if turn.idle is None:
        if turn.result is not None:
            p.fail(
                "PL-07",
                f"{label}: no idle state_update within {p.timeout:g}s "
                "(the last frames of the turn are shown)",
                turn.frames[-3:],
            )
        return
    reason = turn.stop_reason()
    p.judge(
        "PL-07",
        isinstance(reason, str),
        f"{label}: idle with stopReason {reason!r}"
        if isinstance(reason, str)
        else f"{label}: idle without a stopReason",
        [turn.idle],
    )
    if isinstance(reason, str):
        # The schema's stop reasons (Nov's ``error`` included); ``_x`` values are custom.
        valid = reason in STOP_REASONS or reason.startswith("_")
        p.judge("PL-10", valid, f"{label}: stopReason {reason!r}", [turn.idle])
    else:
        p.skip("PL-10", f"{label}: no stopReason to judge (see PL-07)")
    idles = turn.idles()
    p.judge("PL-24", len(idles) == 1, f"{label}: {len(idles)} idle update(s)", idles)


def _ids(turn: Turn, kinds: frozenset[str]) -> dict[str, Frame]:
    return {
        u["messageId"]: f for f, u in turn.messages(kinds) if isinstance(u.get("messageId"), str)
    }


def judge_ids(p: Probe, turns: list[Turn]) -> None:
    """Distinct messages have distinct ids (MU-02), within and across kinds (D-25)."""
    per_kind = {name: [_ids(t, kinds) for t in turns] for name, kinds in _KINDS.items()}
    user, agent = per_kind["user"], per_kind["agent"]
    if len(turns) < 2 or not all(user):
        p.skip("MU-02", "needs two turns, each acknowledged with a user message id")
    else:
        clash = [m[1][i] for m in (user, agent) for i in m[0].keys() & m[1].keys()]
        p.judge(
            "MU-02",
            not clash,
            "message ids differ across the two turns"
            if not clash
            else "two different messages share an id",
            clash,
        )
    merged = {k: {i: f for m in maps for i, f in m.items()} for k, maps in per_kind.items()}
    if sum(1 for ids in merged.values() if ids) < 2:
        for key in ("MU-02:aug", "D-25:nov"):
            p.skip(key, "fewer than two kinds of message ids to compare")
        return
    shared = _shared_ids(merged)
    for key in ("MU-02:aug", "D-25:nov"):
        p.judge(
            key,
            not shared,
            "user, agent and thought ids never coincide"
            if not shared
            else "a user/agent/thought id is reused across kinds",
            shared,
        )


def _shared_ids(merged: dict[str, dict[str, Frame]]) -> list[Frame]:
    out: list[Frame] = []
    names = list(merged)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            out += [merged[b][mid] for mid in merged[a].keys() & merged[b].keys()]
    return out


async def prompt(p: Probe) -> None:
    """Two turns with ``--prompt`` in one session."""
    async with p.link() as link:
        await p.handshake(link)
        sid = await p.new_session(link)
        turns: list[Turn] = []
        for n in (1, 2):
            turn = await run_turn(p, link, sid, [text_block(p.options.prompt)], label=f"turn {n}")
            judge_turn(p, turn, f"turn {n}")
            turns.append(turn)
            if turn.idle is None:
                break
        judge_ids(p, turns)


PROMPT_PROBES = (
    ProbeSpec(
        "prompt",
        prompt,
        ROWS,
        "two prompt turns: receipt, user_message, running, idle",
        timing=True,
    ),
)
