"""Probe: cancelling one item of background work that does not exist (TC-13, TM-10;
RFD "v2 Background Work", Nov and the Preview only).

``tool_call/cancel`` and ``terminal/cancel`` name one tool call or terminal. The schema
asks ``-32602`` for an unknown, final or not cancellable item; an agent that implements no
background work may answer ``-32601`` instead (a client never sends either unless the
item advertises ``cancel``). Either way the request gets an error -- never a success, no
silence -- and the connection and the session go on: a ping is still answered.
"""

from __future__ import annotations

from acp2.check.driver import ClientCore
from acp2.check.frames import Frame
from acp2.check.probes.base import Probe, ProbeSpec
from acp2.schema.methods import TERMINAL_CANCEL, TOOL_CALL_CANCEL

__all__ = ["BACKGROUND_PROBES"]

#: (row, method, the id field) of each request the probe sends.
_CASES = (
    ("TC-13:unknown", TOOL_CALL_CANCEL.name, "toolCallId"),
    ("TM-10:unknown", TERMINAL_CANCEL.name, "terminalId"),
)


def _verdict(answer: Frame | None) -> tuple[bool, str]:
    """Whether ``answer`` is an error response, and the reason to print."""
    if answer is None:
        return False, "no answer"
    error = answer.value.get("error")
    if not isinstance(error, dict):
        return False, "answered with a success: it accepted to cancel what does not exist"
    code = error.get("code")
    if code == -32602:
        return True, "answered -32602"
    return True, f"answered {code!r} (the schema asks -32602; fine for an agent without it)"


async def background(p: Probe) -> None:
    """Cancel an unknown tool call and an unknown terminal; then ping (not under Aug,
    which has neither method: its rows do not apply there)."""
    if p.options.draft == "aug":
        return
    async with p.link() as link:
        await p.handshake(link)
        sid = await p.new_session(link)
        for key, method, field in _CASES:
            await _judge_cancel(p, link, key, method, {"sessionId": sid, field: "acp2check-none"})


async def _judge_cancel(
    p: Probe, link: ClientCore, key: str, method: str, params: dict[str, str]
) -> None:
    since = link.step(method)
    rid = await link.request(method, params)
    answer = await link.response(rid, since=since)
    await link.ping(f"after-{method}")
    alive = await link.response(f"after-{method}", since=since)
    passed, reason = _verdict(answer)
    if alive is None:
        passed, reason = False, f"{reason}; then no answer to a ping{link.exit_note()}"
    evidence = [f for f in (answer,) if f is not None] or link.frames[since:][-3:]
    p.judge(key, passed, f"{method} for an unknown id: {reason}", evidence)


BACKGROUND_PROBES = (
    ProbeSpec(
        "background",
        background,
        ("TC-13:unknown", "TM-10:unknown"),
        "tool_call/cancel and terminal/cancel for unknown ids",
    ),
)
