"""Probe: the Preview's unstable session surface, where the agent advertises it.

* ``session.fork`` (SS-27): a session with one turn is forked; the answer must name a new
  session, and resuming the fork from the start must replay the source's user message.
* ``session.title`` (SS-28): ``session/set_title`` must answer the stored title.
* ``providers`` (IN-19): ``providers/list`` must answer well-formed providers whose
  ``current`` routing holds no headers.
* SS-29, judged for every agent with sessions: ``replay_complete`` at most once per
  session id (the parent's and each child's the replay re-announces) for a resume from
  the start, and never for a resume without ``replayFrom``. The probe starts no subagent
  itself: children appear when the agent spawned some during the probe's turn.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from acp2.check.driver import ClientCore
from acp2.check.frames import Frame, session_update
from acp2.check.probes.base import Abort, Probe, ProbeSpec, has_capability
from acp2.check.probes.turns import run_turn, text_block, update_for
from acp2.schema.methods import (
    PROVIDERS_LIST,
    SESSION_CLOSE,
    SESSION_FORK,
    SESSION_RESUME,
    SESSION_SET_TITLE,
)

__all__ = ["PREVIEW_PROBES"]

ROWS = ("SS-27", "SS-28", "IN-19", "SS-29")
#: The title the probe sets.
TITLE = "acp2 check title"
_CURRENT_KEYS = frozenset({"apiType", "baseUrl", "_meta"})


def _result(frame: Frame | None) -> Any:
    value = frame.value.get("result") if frame else None
    return value if isinstance(value, dict) else None


def _evidence(frame: Frame | None) -> list[Frame]:
    return [frame] if frame else []


async def preview(p: Probe) -> None:
    """Run the unstable checks the agent's capabilities call for."""
    async with p.link() as link:
        caps = await p.handshake(link)
        await _providers(p, link, caps)
        p.require_session(caps, ("SS-27", "SS-28", "SS-29"))
        sid = await p.new_session(link)
        turn = await run_turn(p, link, sid, [text_block(p.options.prompt)], label="history")
        if turn.idle is None:
            raise Abort("the prompt turn the fork needs did not end")
        await _title(p, link, caps, sid)
        await _replay_markers(p, link, sid)
        await _fork(p, link, caps, sid)


async def _providers(p: Probe, link: ClientCore, caps: dict[str, Any]) -> None:
    if not has_capability(caps, "providers"):
        p.skip("IN-19", "providers is not advertised")
        return
    link.step(PROVIDERS_LIST.name)
    frame = await link.call(PROVIDERS_LIST.name, {})
    result = _result(frame)
    providers = result.get("providers") if result else None
    problem = _providers_problem(providers)
    p.judge(
        "IN-19",
        problem is None,
        f"{len(providers or [])} provider(s), well-formed" if problem is None else problem,
        _evidence(frame),
    )


def _providers_problem(providers: Any) -> str | None:
    if not isinstance(providers, list):
        return "providers/list: no providers array in the result"
    for entry in providers:
        if not isinstance(entry, dict) or not isinstance(entry.get("providerId"), str):
            return "a provider without a string providerId"
        supported = entry.get("supported")
        if not isinstance(supported, list) or not all(isinstance(s, str) for s in supported):
            return f"provider {entry['providerId']!r}: supported must be an array of strings"
        current = entry.get("current")
        if current is not None and not _routing_ok(current):
            return f"provider {entry['providerId']!r}: current must be {{apiType, baseUrl}} only"
    return None


def _routing_ok(current: Any) -> bool:
    return (
        isinstance(current, dict)
        and isinstance(current.get("apiType"), str)
        and isinstance(current.get("baseUrl"), str)
        and set(current) <= _CURRENT_KEYS  # never headers: they may hold a key
    )


async def _title(p: Probe, link: ClientCore, caps: dict[str, Any], sid: str) -> None:
    if not has_capability(caps, "session.title"):
        p.skip("SS-28", "session.title is not advertised")
        return
    link.step(SESSION_SET_TITLE.name)
    frame = await link.call(SESSION_SET_TITLE.name, {"sessionId": sid, "title": TITLE})
    stored = (_result(frame) or {}).get("title")
    p.judge(
        "SS-28",
        isinstance(stored, str) and bool(stored.strip()),
        f"stored title {stored!r}" if isinstance(stored, str) else "no title in the answer",
        _evidence(frame),
    )


async def _resume(p: Probe, link: ClientCore, sid: str, replay: bool) -> tuple[Frame, Counter[str]]:
    """Close and resume ``sid``; the response and the ``replay_complete`` markers before
    it, counted per session id (the parent's and each replayed child's)."""
    await link.call(SESSION_CLOSE.name, {"sessionId": sid})
    params: dict[str, Any] = {"sessionId": sid, "cwd": p.cwd, "mcpServers": []}
    if replay:
        params["replayFrom"] = {"type": "start"}
    since = link.step(SESSION_RESUME.name + (" from start" if replay else ""))
    frame = await link.call(SESSION_RESUME.name, params)
    if frame is None or _result(frame) is None:
        raise Abort("session/resume failed")
    await link.settle(p.grace)
    markers = Counter[str]()
    for f in link.frames[since:]:
        update = session_update(f.value)
        if update is not None and update.get("sessionUpdate") == "replay_complete":
            markers[str(f.value["params"].get("sessionId"))] += 1
    return frame, markers


async def _replay_markers(p: Probe, link: ClientCore, sid: str) -> None:
    replayed, with_replay = await _resume(p, link, sid, replay=True)
    plain, without = await _resume(p, link, sid, replay=False)
    children = {k: n for k, n in with_replay.items() if k != sid and n > 1}
    ok = with_replay[sid] <= 1 and not children and without.total() == 0
    reason = (
        f"replay_complete x{with_replay[sid]} for a replaying resume, "
        f"x{without.total()} without replayFrom"
    )
    if with_replay.total() > with_replay[sid]:
        shown = ", ".join(f"{k} x{n}" for k, n in with_replay.items() if k != sid)
        reason += f"; per replayed child: {shown}"
    p.judge("SS-29", ok, reason, [replayed, plain])


async def _fork(p: Probe, link: ClientCore, caps: dict[str, Any], sid: str) -> None:
    if not has_capability(caps, "session.fork"):
        p.skip("SS-27", "session.fork is not advertised")
        return
    link.step(SESSION_FORK.name)
    frame = await link.call(SESSION_FORK.name, {"sessionId": sid, "cwd": p.cwd})
    fork = (_result(frame) or {}).get("sessionId")
    if not isinstance(fork, str) or fork == sid:
        why = "the fork has the source's id" if fork == sid else "no new sessionId in the answer"
        p.fail("SS-27", why, _evidence(frame))
        return
    since = len(link.frames)
    resumed, _ = await _resume(p, link, fork, replay=True)
    users = [
        f
        for f in link.frames[since : resumed.index]
        if (u := update_for(f, fork)) and str(u.get("sessionUpdate")).startswith("user_message")
    ]
    p.judge(
        "SS-27",
        bool(users),
        f"forked into {fork}; its replay starts with the source's history"
        if users
        else f"forked into {fork}, but its replay has no user message",
        [*_evidence(frame), resumed],
    )


PREVIEW_PROBES = (
    ProbeSpec(
        "preview",
        preview,
        ROWS,
        "the Preview's unstable surface: fork, title, providers, replay_complete",
    ),
)
