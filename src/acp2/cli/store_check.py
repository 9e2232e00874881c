"""The session store of ``acp2 agent`` / ``acp2 test-agent``: checked at start-up, and
what it could not keep reported at exit -- each as one line on stderr, never as an
"unexpected error" (see :mod:`acp2.store.failures`)."""

from __future__ import annotations

from typing import Any

__all__ = ["store_at_exit", "store_at_start"]


def store_at_start(agent: Any) -> str | None:
    """Open ``agent``'s history store now; None when it works, else the problem (a bad
    path, a corrupt or read-only file, an unreachable server, a missing driver)."""
    from acp2.errors import StoreUnusable
    from acp2.sanitize import line

    try:
        agent.history()
    except StoreUnusable as exc:
        return line(exc.message)
    except Exception as exc:  # the database server's or driver's words: sanitized
        return f"cannot open the session store: {line(str(exc))}"
    return None


def store_at_exit(agent: Any) -> str | None:
    """Flush ``agent``'s store a last time; None when nothing is lost, else how many
    updates could not be stored, where and why."""
    from acp2.sanitize import line
    from acp2.store.failures import flush_before_exit

    problem = flush_before_exit(agent.history())
    return line(problem) if problem else None
