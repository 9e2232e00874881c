"""Driving one prompt turn and reading its updates (shared by the lifecycle probes)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from acp2.check.driver import ClientCore
from acp2.check.frames import MESSAGE_KINDS, Frame, is_request, session_update
from acp2.check.probes.base import Probe
from acp2.schema.common import ForegroundState
from acp2.schema.methods import SESSION_CANCEL, SESSION_PROMPT, SESSION_REQUEST_PERMISSION

__all__ = [
    "Answered",
    "Turn",
    "is_state",
    "run_turn",
    "text_block",
    "update_for",
    "wait_state",
]


def text_block(text: str) -> dict[str, Any]:
    """A ``text`` content block."""
    return {"type": "text", "text": text}


def update_for(frame: Frame, session_id: str) -> dict[str, Any] | None:
    """The update of a ``session/update`` for ``session_id``, else None."""
    update = session_update(frame.value)
    if update is None or frame.value["params"].get("sessionId") != session_id:
        return None
    return update


def is_state(frame: Frame, session_id: str, state: ForegroundState) -> bool:
    """True for a ``state_update`` of ``session_id`` reporting ``state``."""
    update = update_for(frame, session_id)
    return bool(
        update and update.get("sessionUpdate") == "state_update" and update.get("state") == state
    )


async def wait_state(
    link: ClientCore, session_id: str, state: ForegroundState, *, since: int
) -> Frame | None:
    """The first ``state`` update of the session from frame ``since`` on (bounded)."""
    return await link.wait_for(lambda f: is_state(f, session_id, state), since=since)


def permission_request_for(session_id: str) -> Callable[[Frame], bool]:
    """A predicate for the agent's ``session/request_permission`` in ``session_id``."""

    def match(frame: Frame) -> bool:
        v = frame.value
        if not is_request(v) or v.get("method") != SESSION_REQUEST_PERMISSION.name:
            return False
        params = v.get("params")
        return isinstance(params, dict) and params.get("sessionId") == session_id

    return match


class Answered:
    """``result`` / ``error`` of a prompt's answer frame (``self.response``, or None), for
    the v2 :class:`Turn` and the v1 turn alike."""

    response: Frame | None

    @property
    def result(self) -> dict[str, Any] | None:
        """The prompt result object, or None (no answer, an error, or not an object)."""
        value = self.response.value.get("result") if self.response else None
        return value if isinstance(value, dict) else None

    @property
    def error(self) -> Any:
        """The prompt's error object, or None."""
        return self.response.value.get("error") if self.response else None


@dataclass
class Turn(Answered):
    """What one prompt produced: our request id, its response, the idle, every frame."""

    session_id: str
    since: int
    id: Any
    response: Frame | None
    idle: Frame | None
    frames: list[Frame]

    def updates(self) -> list[tuple[Frame, dict[str, Any]]]:
        """Every ``session/update`` of this session during the turn, in order."""
        out = []
        for frame in self.frames:
            update = update_for(frame, self.session_id)
            if update is not None:
                out.append((frame, update))
        return out

    def idles(self) -> list[Frame]:
        """Every idle ``state_update`` of the turn."""
        return [f for f in self.frames if is_state(f, self.session_id, "idle")]

    def messages(self, kinds: frozenset[str] = MESSAGE_KINDS) -> list[tuple[Frame, dict[str, Any]]]:
        """The message updates and chunks of the turn whose kind is in ``kinds``."""
        return [(f, u) for f, u in self.updates() if u.get("sessionUpdate") in kinds]

    def stop_reason(self) -> Any:
        """The ``stopReason`` of the first idle, or None."""
        update = update_for(self.idle, self.session_id) if self.idle else None
        return update.get("stopReason") if update else None


async def send_prompt(
    link: ClientCore, session_id: str, blocks: list[dict[str, Any]], label: str
) -> tuple[int, Any]:
    """Send ``session/prompt``; return (frame mark, request id)."""
    since = link.step(label)
    rid = await link.request(SESSION_PROMPT.name, {"sessionId": session_id, "prompt": blocks})
    return since, rid


async def run_turn(
    p: Probe,
    link: ClientCore,
    session_id: str,
    blocks: list[dict[str, Any]],
    *,
    label: str = "prompt",
    cancel: bool = False,
) -> Turn:
    """Prompt, wait for the response and the idle (each bounded), then listen for
    ``grace`` seconds more. With ``cancel``, ``session/cancel`` follows the response."""
    since, rid = await send_prompt(link, session_id, blocks, label)
    response = await link.response(rid, since=since)
    idle = None
    rejected = response is not None and "result" not in response.value
    if not rejected:
        if cancel and response is not None:
            await link.notify(SESSION_CANCEL.name, {"sessionId": session_id})
        idle = await wait_state(link, session_id, "idle", since=since)
    await link.settle(p.grace if idle or rejected else 0)
    return Turn(session_id, since, rid, response, idle, link.frames[since:])
