"""The write queue every backend shares: updates, titles and ledger entries wait in
memory until :meth:`QueuedStore.flush` commits them in one transaction.

A backend subclasses :class:`QueuedStore` and brings :meth:`QueuedStore.commit` (one
transaction: the rows, the ledger entries, ``updated_at`` and titles), the lookup of a
stored key and the error types that count as a failed write. A failed flush keeps its
work queued, logs an error and makes the next :meth:`QueuedStore.append` retry it first,
raising :class:`HistoryWriteError` (failing the turn) until a flush succeeds: updates are
never dropped silently.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

from acp2.store.base import (
    KEYS_PER_SESSION,
    Batches,
    Body,
    PromptEntry,
    SessionRecord,
    trim_interval,
)
from acp2.store.failures import write_failed

__all__ = ["Queued", "QueuedStore"]

log = logging.getLogger("acp2.agent")

#: What one flush commits: bodies by session, touched sessions, titles, ledger entries,
#: and the sessions opened since the last flush (the backend's rows for each, by id).
Queued = tuple[
    dict[str, list[Body]],
    dict[str, str],
    dict[str, str | None],
    dict[tuple[str, str], PromptEntry],
    dict[str, Any],
]


class QueuedStore:
    """The queue half of a :class:`~acp2.store.base.SessionStore` (see the module doc)."""

    #: The exceptions of the backend that mean "this write failed" (kept for a retry).
    write_errors: ClassVar[tuple[type[BaseException], ...]] = ()

    def __init__(self) -> None:
        #: Queued update bodies by session; a flush stores each session's batch as one row.
        self._pending: dict[str, list[Body]] = {}
        self._touched: dict[str, str] = {}
        self._titles: dict[str, str | None] = {}
        #: Keyed prompts queued with their user message (acp2.store.ledger).
        self._keys: dict[tuple[str, str], PromptEntry] = {}
        #: Sessions opened since the last flush (:meth:`open_session`), a backend's rows.
        self._opened: dict[str, Any] = {}
        #: How many prompt keys a session keeps (the newest).
        self.keys_per_session = KEYS_PER_SESSION
        #: Keys committed per session since its last retention cut (by this process).
        self._new_keys: dict[str, int] = {}
        self._lock = threading.Lock()
        #: The error of the last flush, while its updates wait for a retry.
        self.failure: BaseException | None = None
        #: Sessions this store created, with the keys queued for them since (None: none
        #: yet; one key as itself, a set from the second on: most sessions see one or a
        #: few prompts). No ledger row of such a session can predate this store, so a key
        #: it never queued is new without asking the backend (see :meth:`note_created`).
        self._fresh: dict[str, str | set[str] | None] = {}

    # -- what a backend brings ------------------------------------------------------

    def commit(self, work: Queued, trim: list[str]) -> None:
        """Commit ``work`` in one transaction, retrying what the backend may retry, and
        cut the ledger of the sessions in ``trim`` back to :attr:`keys_per_session`."""
        raise NotImplementedError

    def find_stored_prompt(self, session_id: str, key: str) -> PromptEntry | None:
        """The committed ledger entry of ``key`` in ``session_id``, or None."""
        raise NotImplementedError

    def row_batches(self, session_id: str, rows: int = 64) -> Batches:
        """The session's stored rows in batches (see :class:`~acp2.store.base.SessionStore`)."""
        raise NotImplementedError

    def create_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: Sequence[str],
        principal: str | None = None,
    ) -> SessionRecord:
        """Insert a new session (see :class:`~acp2.store.base.SessionStore`)."""
        raise NotImplementedError

    def acquire(self, session_id: str) -> None:
        """Hold ``session_id`` (see :class:`~acp2.store.base.SessionStore`)."""
        raise NotImplementedError

    def open_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: Sequence[str],
        principal: str | None = None,
    ) -> SessionRecord:
        """Create a session whose id nobody else can know yet (just made up, not sent)
        and hold it: :meth:`create_session` then :meth:`acquire`. A backend may queue
        both writes instead, for the next :meth:`flush` -- which must then succeed
        before the id is given to anyone (``session/new`` waits for it)."""
        record = self.create_session(session_id, cwd, additional_directories, principal)
        self.acquire(session_id)
        return record

    def discard_open(self, session_id: str) -> bool:
        """Forget a session :meth:`open_session` queued and no flush committed (its
        ``session/new`` failed): it is never written. True if it was still queued; False
        (nothing done) once it is stored, or for a backend that does not queue sessions."""
        return self._opened.pop(session_id, None) is not None

    # -- the queue --------------------------------------------------------------------

    def append(self, session_id: str, body: Body) -> None:
        """Queue one encoded ``update`` object for ``session_id`` (committed by flush).

        ``body`` must be compact JSON (no raw newline, as on the wire): a flush stores all
        the bodies queued for a session as one newline-joined row -- one row per write
        instead of one per update. While an earlier flush has failed, the queued updates
        are retried first and :class:`HistoryWriteError` is raised if that fails again
        (the caller's work fails instead of going on unrecorded). ``body`` may be a view
        into the frame that sends the update: it is kept until the flush.
        """
        if self.failure is not None:
            self._recover()
        batch = self._pending.get(session_id)
        if batch is None:
            batch = self._pending[session_id] = []
        batch.append(body)

    def remember_prompt(self, entry: PromptEntry) -> None:
        """Queue a keyed prompt's ledger entry; the next flush commits it in the same
        transaction as the user message appended with it (:mod:`acp2.store.ledger`)."""
        self._keys[(entry.session_id, entry.key)] = entry

    def find_prompt(self, session_id: str, key: str) -> PromptEntry | None:
        """The ledger entry of ``key`` in ``session_id`` (queued or stored), or None.

        For a session this store created and still holds, a key it never queued is
        answered None without a lookup (every acp2 prompt carries a new key)."""
        queued = self._keys.get((session_id, key))
        if queued is not None:
            return queued
        if session_id in self._fresh:
            known = self._fresh[session_id]
            if known is None or (key != known if isinstance(known, str) else key not in known):
                return None
        return self.find_stored_prompt(session_id, key)

    def note_created(self, session_id: str) -> None:
        """Record that this store created ``session_id`` (a backend calls it from
        ``create_session`` when only the lease holder writes a session's ledger, so no
        row of it can exist that this store did not queue)."""
        self._fresh[session_id] = None

    def forget_created(self, session_id: str) -> None:
        """Stop answering keys of ``session_id`` from memory (its lease ends, or it is
        deleted): another owner may write its ledger from now on."""
        self._fresh.pop(session_id, None)

    def _note_keys(self, keys: dict[tuple[str, str], PromptEntry]) -> None:
        """Add the keys about to be committed to their fresh sessions' sets; a session
        past :attr:`keys_per_session` keys goes back to backend lookups (bounded memory)."""
        fresh = self._fresh
        for session_id, key in keys:
            if session_id not in fresh:
                continue
            known = fresh[session_id]
            if known is None or known == key:
                fresh[session_id] = key
                continue
            if isinstance(known, str):
                known = fresh[session_id] = {known}
            known.add(key)
            if len(known) > self.keys_per_session:
                del fresh[session_id]

    def set_title(self, session_id: str, title: str | None) -> None:
        """Queue a new title (None clears it) for ``session_id``, committed by flush."""
        self._titles[session_id] = title
        self._touched[session_id] = ""

    def flush(self) -> None:
        """Commit every queued update in one transaction. Cheap when nothing is queued.

        On failure the updates stay queued, :attr:`failure` is set and
        :class:`HistoryWriteError` is raised.
        """
        if not self._pending and not self._titles and not self._keys and not self._opened:
            return
        with self._lock:
            work: Queued = (self._pending, self._touched, self._titles, self._keys, self._opened)
            self._pending, self._touched, self._titles, self._keys = {}, {}, {}, {}
            self._opened = {}
            if work[3] and self._fresh:
                self._note_keys(work[3])  # before the commit: a superset is always safe
            try:
                self.commit(work, self._due_for_trim(work[3]))
            except self.write_errors as exc:
                self._requeue(work)
                self.failure = exc
                count = sum(len(b) for b in work[0].values())
                log.error("history write failed, %d updates kept for a retry: %s", count, exc)
                raise write_failed(self, exc) from exc
            self.failure = None

    def queued_updates(self) -> int:
        """How many appended updates are not stored yet (after a failed flush: all of
        them, since the failure)."""
        return sum(len(bodies) for bodies in self._pending.values())

    def _due_for_trim(self, keys: dict[tuple[str, str], PromptEntry]) -> list[str]:
        """The sessions whose ledger is due for its retention cut (counting ``keys``)."""
        if not keys:
            return []
        due, every, counts = [], trim_interval(self.keys_per_session), self._new_keys
        for session_id, _ in keys:
            counts[session_id] = counts.get(session_id, 0) + 1
            if counts[session_id] >= every:
                counts[session_id] = 0
                due.append(session_id)
        return due

    def _requeue(self, work: Queued) -> None:
        pending, touched, titles, keys, opened = work
        self._opened = {**opened, **self._opened}
        for session_id, bodies in pending.items():
            self._pending[session_id] = bodies + self._pending.get(session_id, [])
        self._touched = {**touched, **self._touched}
        self._titles = {**titles, **self._titles}
        self._keys = {**keys, **self._keys}

    def _recover(self) -> None:
        """Retry the updates a failed flush kept; raises HistoryWriteError if it fails."""
        self.flush()
        if not self._pending:
            self.failure = None

    def updates(self, session_id: str) -> Iterator[bytes]:
        """Yield the stored update bodies of a session, oldest first."""
        for rows in self.row_batches(session_id):
            for body in rows:
                yield from body.split(b"\n")  # a row holds one flush's batch
