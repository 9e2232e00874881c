"""A session store that cannot be used, said clearly: which store, why, what was lost.

A corrupt SQLite file, a read-only directory, a full disk or an unreachable database
server used to surface as ``unexpected error ... bug in acp2`` (or a bare ``Internal
error: DatabaseError``), and the updates still queued at exit were dropped with no count.
These helpers turn such failures into :class:`~acp2.errors.StoreUnusable` naming the
store (:func:`store_name`: a SQLite path, or a database URL without its credentials)
and count what a last flush could not write (:func:`flush_before_exit`).

The mapping happens at the store boundary: every public method of a backend that
touches its database is wrapped by :func:`store_boundary` (and the batches of a replay
by :func:`boundary_batches`), so a caller only ever sees acp2's errors -- never a
``sqlite3.Error`` or a ``psycopg.Error`` -- and the agent's per-request wrapper has
nothing left to catch (issue 25).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Generator, Iterator
from typing import Any, Concatenate, ParamSpec, TypeVar
from urllib.parse import urlsplit

from acp2.errors import HistoryWriteError, StoreUnusable

__all__ = [
    "boundary_batches",
    "flush_before_exit",
    "store_boundary",
    "store_name",
    "unusable",
    "write_failed",
]

P = ParamSpec("P")
R = TypeVar("R")
S = TypeVar("S")
T = TypeVar("T")


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


def unusable(store: Any, exc: BaseException) -> StoreUnusable:
    """The error a request answers when ``store`` failed with ``exc``."""
    return StoreUnusable(f"The session store {store_name(store)} cannot be used: {_reason(exc)}")


def write_failed(store: Any, exc: BaseException) -> HistoryWriteError:
    """The error of a flush of ``store`` that failed with ``exc`` (its work stays queued):
    a :class:`~acp2.errors.StoreUnusable` too, so a request that meets it is answered
    with it as it is."""
    return HistoryWriteError(
        f"The session store {store_name(store)} cannot be used:"
        f" could not write the session history: {_reason(exc)}"
    )


def store_boundary(method: Callable[Concatenate[S, P], R]) -> Callable[Concatenate[S, P], R]:
    """Wrap a backend's public method: an error of its database (the store's
    ``write_errors``) leaves it as :class:`~acp2.errors.StoreUnusable` naming the store;
    acp2's own errors (e.g. ``SessionInUse``) pass unchanged."""

    @functools.wraps(method)
    def run(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(self, *args, **kwargs)
        except getattr(self, "write_errors", ()) as exc:
            raise unusable(self, exc) from exc

    return run


def boundary_batches(store: Any, batches: Iterator[T]) -> Generator[T, None, None]:
    """Yield from ``batches`` (read lazily from ``store``'s database), mapping its
    database errors as :func:`store_boundary` does."""
    try:
        yield from batches
    except getattr(store, "write_errors", ()) as exc:
        raise unusable(store, exc) from exc


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
