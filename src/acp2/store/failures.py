"""A session store that cannot be used, said clearly: which store, why, what was lost.

A corrupt SQLite file, a read-only directory, a full disk or an unreachable database
server used to surface as ``unexpected error ... bug in acp2`` (or a bare ``Internal
error: DatabaseError``), and the updates still queued at exit were dropped with no count.
These helpers turn such failures into :class:`~acp2.errors.StoreUnusable` naming the
store (:func:`store_name`: a SQLite path, or a database URL without its credentials)
and count what a last flush could not write (:func:`flush_before_exit`).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from acp2.errors import HistoryWriteError, StoreUnusable

__all__ = ["flush_before_exit", "request_errors", "store_name", "unusable"]


def store_name(store: Any) -> str:
    """How messages name ``store``: its SQLite path, or its database URL less the user
    name and password, else its class name."""
    path = getattr(store, "path", None)
    if isinstance(path, str) and path:
        return path
    url = getattr(store, "url", None)
    if isinstance(url, str) and url:
        parts = urlsplit(url)
        port = f":{parts.port}" if parts.port else ""
        return f"{parts.scheme}://{parts.hostname or ''}{port}{parts.path}"
    return type(store).__name__


def request_errors(store: Any) -> tuple[type[BaseException], ...]:
    """The exceptions a request may meet when ``store`` fails: its backend's errors
    (``write_errors``) and :class:`~acp2.errors.HistoryWriteError`."""
    return (*getattr(store, "write_errors", ()), HistoryWriteError)


def unusable(store: Any, exc: BaseException) -> StoreUnusable:
    """The error a request answers when ``store`` failed with ``exc``."""
    return StoreUnusable(f"The session store {store_name(store)} cannot be used: {_reason(exc)}")


def flush_before_exit(store: Any) -> str | None:
    """Flush ``store`` one last time; None when everything queued is stored, else one
    sentence saying how many updates could not be written, where, and why."""
    try:
        store.flush()
    except HistoryWriteError as exc:
        count = store.queued_updates() if hasattr(store, "queued_updates") else 0
        reason = _reason(exc.__cause__ or exc)
        return (
            f"{count} session update(s) could not be written to the session store "
            f"{store_name(store)} and are lost: {reason}"
        )
    return None


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
