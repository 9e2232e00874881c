"""What both chat front-ends share for a session other clients use too (``--attach``, or
any chat with a remote agent): picking the session to attach to, the lines that say
what the chat may not do, and noticing work another client started or the session's end.

A remote session may have several clients (``acp2 chat --attach``): work can start
without this chat's prompt, and the session can end while the chat waits for input.
:class:`Watch` wakes the chat for both: :meth:`Watch.wake` is set on every
``state_update`` and when the session ends.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Final

import anyio

from acp2 import sanitize
from acp2.client import ClientConnection, ClientSession
from acp2.errors import Acp2Error
from acp2.schema import StateUpdate
from acp2.ui.choose import picked

__all__ = [
    "OBSERVER_CANNOT_CANCEL",
    "OBSERVER_READ_ONLY",
    "Watch",
    "attach_command",
    "ended_text",
    "info_lines",
    "pick_session",
]

#: What an observer is told when it types a prompt or an agent command.
OBSERVER_READ_ONLY: Final = "observer: read-only (attach with --role controller to prompt)"
#: The status line's hint during a turn an observer watches (no "ctrl-c to cancel").
OBSERVER_HINT: Final = "observer: watching, read-only"
#: What an observer is told when it tries to cancel.
OBSERVER_CANNOT_CANCEL: Final = "observer: read-only, it cannot cancel the work"

Ask = Callable[[str], Awaitable[str]]
Note = Callable[[str], None]


class Watch:
    """Follows ``session``: :attr:`wake` is set by every ``state_update`` and once the
    session ended (:attr:`ended` then holds why). Call :meth:`rearm` before each wait
    and :meth:`close` when done; :meth:`run` must run while the chat does.

    :meth:`unseen` says whether work started since the last :meth:`see`: a short turn
    of another client can start and end before the chat looks at the state."""

    def __init__(self, session: ClientSession) -> None:
        self.session = session
        self.ended: BaseException | None = None
        self.wake = anyio.Event()
        self._busy = session.state.busy
        self._started = self._seen = 0
        self._remove = session.add_listener(self._on_update)

    def _on_update(self, update: Any, raw: bytes) -> None:
        if type(update) is StateUpdate:
            busy = update.state != "idle"
            if busy and not self._busy:
                self._started += 1
            self._busy = busy
            self.wake.set()

    def unseen(self) -> bool:
        """True when a piece of work started since the last :meth:`see`."""
        return self._started > self._seen

    def see(self) -> None:
        """Count every piece of work started so far as shown."""
        self._seen = self._started

    def rearm(self) -> None:
        """A fresh :attr:`wake` for the next wait (unless the session ended)."""
        if self.wake.is_set() and self.ended is None:
            self.wake = anyio.Event()

    async def run(self) -> None:
        """Wait for the session's end, then record why and wake the chat."""
        self.ended = await self.session.wait_ended()
        self.wake.set()

    def close(self) -> None:
        """Stop listening to the session."""
        self._remove()


def ended_text(exc: BaseException) -> str:
    """``the session ended: <why>``, sanitized (the reason may quote the agent)."""
    return sanitize.prose(f"the session ended: {exc}" if str(exc) else "the session ended")


def attach_command(url: str, session_id: str) -> str:
    """The command that watches ``session_id`` of ``url`` from another terminal, quoted."""
    import shlex

    return shlex.join(["acp2", "chat", "--url", url, "--attach", session_id])


def info_lines(session: ClientSession, url: str | None) -> list[str]:
    """What ``/info`` shows: the session id, its folder, this chat's role and, for a remote
    agent that offers attaching, how a second terminal attaches (else why none can).
    Sanitized: the id and cwd are the agent's."""
    lines = [
        f"session {session.id}",
        f"folder  {session.cwd}",
        f"role    {session.role}",
    ]
    if url is not None and _offers_attach(session):
        lines.append(f"watch from another terminal: {attach_command(url, session.id)}")
        lines.append("  (add --role controller to prompt and answer from there)")
    elif url is not None:  # e.g. `acp2 serve -- AGENT`: one agent process per connection
        lines.append("no other terminal can watch: this agent does not offer attaching")
    return [sanitize.line(text) for text in lines]


def _offers_attach(session: ClientSession) -> bool:
    from acp2.schema.extensions import supports_attach

    return supports_attach(getattr(session.env.agent_capabilities, "session", None))


async def pick_session(client: ClientConnection, note: Note, ask: Ask) -> str | None:
    """List the agent's sessions, newest first, and ask which to attach to; the id
    picked, or None (nothing picked, or nothing listed). Only a live session can be
    attached to; ``session/list`` also lists stored ones, so a pick may be refused."""
    try:
        found = await client.list_sessions()
    except Acp2Error as exc:
        note(sanitize.prose(f"the agent cannot list its sessions ({exc}): give SESSION_ID"))
        return None
    if not found:
        note("the agent lists no sessions")
        return None
    found.sort(key=lambda s: str(s.updated_at or ""), reverse=True)
    for number, info in enumerate(found, 1):
        note(_listed(number, info))
    answer = (await ask(f"attach to which? [1-{len(found)}, enter: none] ")).strip()
    index = picked(answer, len(found))
    if index is not None:
        return str(found[index].session_id)
    if answer:
        note(sanitize.line(f"no session {answer!r}"))
    return None


def _listed(number: int, info: Any) -> str:
    """`` 1  <id>  <title>  <cwd>  <updated>``: all the agent's text, sanitized."""
    parts = [f"{number:>2}", str(info.session_id)]
    if isinstance(info.title, str) and info.title:
        parts.append(info.title)
    parts.append(str(info.cwd))
    if isinstance(info.updated_at, str):
        parts.append(info.updated_at)
    return sanitize.line("  ".join(parts))
