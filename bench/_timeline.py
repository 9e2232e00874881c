"""Stage timestamps of the prompt path, recorded by wrapping acp2's functions in place.

Bench-only instrumentation (nothing in ``src/`` knows about it): :func:`install_agent`
and :func:`install_client` wrap the functions each stage of a prompt goes through, in
the agent or the client process, so that every call appends ``(stage, ns)`` to
:data:`EVENTS`. Timestamps are ``time.perf_counter_ns()``, i.e. ``CLOCK_MONOTONIC`` on
Linux: one clock for both processes, so the agent's stages line up with the client's.
Each wrapper costs ~0.3-0.5 µs, which the timeline includes (a few µs per prompt).

Agent stages: ``a.read`` (the stdin fd became readable and was read), ``a.handler``
(``on_prompt`` entered), ``a.lookup`` / ``a.lookup_done`` (``SessionManager.live``),
``a.key`` / ``a.key_done`` (the idempotency key SELECT), ``a.insert`` /
``a.insert_done`` (the user message recorded for history), ``a.response`` (the handler
returned its response), ``a.turn`` (the turn task started), ``a.flush`` /
``a.flush_done`` (the history commit), ``a.write`` (a write to stdout, with what it held).
Client stages: ``c.read`` (stdout of the agent readable and read), ``c.decoded`` (a
``session/update`` decoded, before the session reduces it), ``c.reduced`` (reduced),
``c.idle`` (the Work saw its ``idle``).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

#: (stage, ns) in call order; drained by whoever reports them.
EVENTS: list[tuple[str, int]] = []
_now = time.perf_counter_ns


def _around(owner: Any, name: str, before: str, after: str | None = None) -> None:
    """Wrap ``owner.name`` (a plain function or method) to record ``before`` on entry
    and ``after`` on return."""
    original: Callable[..., Any] = getattr(owner, name)
    record = EVENTS.append

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        record((before, _now()))
        result = original(*args, **kwargs)
        if after is not None:
            record((after, _now()))
        return result

    setattr(owner, name, wrapper)


def _around_async(owner: Any, name: str, before: str, after: str | None = None) -> None:
    """As :func:`_around` for a coroutine function (``after``: when it returns)."""
    original: Callable[..., Any] = getattr(owner, name)
    record = EVENTS.append

    @functools.wraps(original)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        record((before, _now()))
        result = await original(*args, **kwargs)
        if after is not None:
            record((after, _now()))
        return result

    setattr(owner, name, wrapper)


def _writes(prefix: str) -> None:
    """Record every non-blocking write of the fd writer, tagged with what it carries."""
    from acp2.transport import _fdio

    original = _fdio.FdWriter.write_nowait
    record = EVENTS.append

    def write_nowait(self: Any, data: bytes | memoryview) -> int:
        t = _now()
        taken = original(self, data)
        chunk = bytes(data[:taken])
        for tag, marker in _MARKERS:
            if marker in chunk:
                record((f"{prefix}.write.{tag}", t))
        return taken

    _fdio.FdWriter.write_nowait = write_nowait  # type: ignore[method-assign]


_MARKERS = (
    ("response", b'"result":{"messageId"'),
    ("user_message", b'"sessionUpdate":"user_message"'),
    ("running", b'"state":"running"'),
    ("idle", b'"state":"idle"'),
    ("prompt", b'"method":"session/prompt"'),
)


def install_agent() -> None:
    """Wrap the agent-side stages (call before the agent starts serving)."""
    from acp2.agent import connection, dedupe, emitter, sessions
    from acp2.store import sqlite as store
    from acp2.transport import _fdio

    _around(_fdio.FdReader, "_on_readable", "a.read")
    _around_async(connection.AgentConnection, "on_prompt", "a.handler", "a.response")
    _around(sessions.SessionManager, "live", "a.lookup", "a.lookup_done")
    _around(dedupe.KeyedPrompt, "earlier", "a.key", "a.key_done")
    _around(emitter.Emitter, "record_frame", "a.insert", "a.insert_done")
    _around(store.HistoryStore, "flush", "a.flush", "a.flush_done")
    _around_async(connection, "run_turn", "a.turn")
    _writes("a")


def install_client() -> None:
    """Wrap the client-side stages (call before connecting)."""
    from acp2.client import core, session, work
    from acp2.transport import _fdio

    _around(_fdio.FdReader, "_on_readable", "c.read")
    _around(core.ClientCore, "_on_update", "c.decoded")
    _around(session, "reduce", "c.reduce", "c.reduced")
    _around(work.Work, "_finish", "c.idle")
    _writes("c")


def drain() -> list[tuple[str, int]]:
    """Return the recorded events and forget them."""
    taken = list(EVENTS)
    EVENTS.clear()
    return taken
