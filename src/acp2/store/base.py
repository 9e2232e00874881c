"""What the agent runtime asks of a session store, and the values it hands over.

The runtime never names a backend: it calls a :class:`SessionStore` (the SQLite
:class:`acp2.store.sqlite.HistoryStore` by default, :class:`acp2.store.postgres.PostgresStore`
for ``postgresql://`` URLs). Every implementation keeps the same promises:

* :meth:`SessionStore.append` only queues; :meth:`SessionStore.flush` commits every queued
  update in one transaction and is called right before the bytes go out on the wire, so a
  client never sees an update that a crash could lose;
* a row's sequence number is computed by the database inside its insert, never cached;
* a keyed prompt's ledger entry is committed in the same transaction as its user message;
* a session is served by one owner at a time, through a lease with an expiry that a
  heartbeat pushes ahead (:mod:`acp2.store.leasing`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import Enum
from typing import Any, Final, Literal, Protocol

__all__ = [
    "ANYONE",
    "KEYS_PER_SESSION",
    "NOT_RECORDED",
    "Batches",
    "Body",
    "Owner",
    "PromptEntry",
    "SessionRecord",
    "SessionStore",
    "StoreSpec",
    "now_text",
    "session_changes",
    "trim_interval",
]

#: Batches of stored rows, as :meth:`SessionStore.row_batches` yields them.
Batches = Generator[list[bytes], None, None]

#: One queued update body: bytes, or a view into the frame that carries it on the wire.
Body = bytes | memoryview

#: Update kinds (their ``sessionUpdate`` bytes) that are not part of a session's stored
#: history, so never replayed: what the agent's emitter leaves out of the store and what
#: ``acp2 serve`` must not count among a stream's recorded updates.
NOT_RECORDED: Final = frozenset({b"state_update", b"notice"})

#: How many prompt keys each session keeps (the newest); older ones are forgotten.
KEYS_PER_SESSION: Final = 1000


class _Anyone(Enum):
    ANYONE = "anyone"


#: ``list_sessions(principal=ANYONE)``: every principal's sessions (the default, for
#: tools that read the whole store); the agent runtime always names one.
ANYONE: Final = _Anyone.ANYONE

#: Whose sessions ``list_sessions`` returns: one principal (None: the local user's, the
#: rows made before sessions had a principal), or :data:`ANYONE`.
Owner = str | None | Literal[_Anyone.ANYONE]


def trim_interval(keep: int) -> int:
    """After how many new keys of a session the store cuts it back to ``keep`` keys: a
    tenth of ``keep``, so a session holds at most ``keep + keep // 10`` keys."""
    return max(1, keep // 10)


def now_text() -> str:
    """The current UTC time as stored in ``created_at`` / ``updated_at`` (ISO 8601, ms, Z):
    strings of this form sort in time order."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def session_changes(
    *,
    title: str | None,
    clear_title: bool,
    additional_directories: Sequence[str] | None,
    data: dict[str, Any] | None,
) -> tuple[list[str], list[Any]]:
    """The columns an ``update_session`` call sets and their values, in order:
    ``updated_at`` always, then each field given (our column names, never a caller's)."""
    columns: list[str] = ["updated_at"]
    values: list[Any] = [now_text()]
    if title is not None or clear_title:
        columns.append("title")
        values.append(title)
    if additional_directories is not None:
        columns.append("additional_directories")
        values.append(json.dumps(list(additional_directories)))
    if data is not None:
        columns.append("data")
        values.append(json.dumps(data))
    return columns, values


@dataclass
class SessionRecord:
    """One stored session: what ``session/list`` reports and ``session/resume`` restores.

    ``principal`` is who created it (the server's principal of that connection, as
    text); None for the local user (stdio, a tokenless server) and for every row stored
    before sessions had one."""

    id: str
    cwd: str
    additional_directories: list[str]
    title: str | None
    created_at: str
    updated_at: str
    data: dict[str, Any] = field(default_factory=dict)
    principal: str | None = None


@dataclass(frozen=True, slots=True)
class PromptEntry:
    """One keyed prompt as the ledger keeps it: which session and key, the prompt's
    digest, the ``messageId`` it was inserted with and the encoded ``PromptResponse`` it
    was answered with (sent again, as is, to a retry)."""

    session_id: str
    key: str
    digest: str
    message_id: str
    response: bytes


class SessionStore(Protocol):
    """The store interface the agent runtime uses (see the module doc for the promises)."""

    def close(self) -> None:
        """Flush what is pending, release this store's leases, close the database."""

    def acquire(self, session_id: str) -> None:
        """Hold ``session_id`` for this owner; :class:`acp2.errors.SessionInUse` if another
        live owner has it."""

    def release(self, session_id: str) -> None:
        """Drop one hold on ``session_id``; the lease ends with the last."""

    def create_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: Sequence[str],
        principal: str | None = None,
    ) -> SessionRecord:
        """Insert a new session owned by ``principal`` and return its record."""

    def get_session(self, session_id: str) -> SessionRecord | None:
        """Return the record of a live (not deleted) session, or None."""

    def update_session(
        self,
        session_id: str,
        *,
        title: str | None = None,
        clear_title: bool = False,
        additional_directories: Sequence[str] | None = None,
        data: dict[str, Any] | None = None,
    ) -> None:
        """Change a session's title, extra roots or author data, and bump ``updated_at``."""

    def delete_session(self, session_id: str) -> None:
        """Mark a session deleted and drop its history and keys (unknown ids are ignored);
        :class:`acp2.errors.SessionInUse` while another live owner serves it."""

    def list_sessions(
        self,
        *,
        cwd: str | None = None,
        after: tuple[str, str] | None = None,
        limit: int = 50,
        principal: Owner = ANYONE,
    ) -> list[SessionRecord]:
        """Live sessions, most recently updated first, after the ``(updated_at, id)``
        cursor key ``after`` if given; only ``principal``'s unless :data:`ANYONE`."""

    def append(self, session_id: str, body: Body) -> None:
        """Queue one compact-JSON ``update`` body (committed by :meth:`flush`); raises
        :class:`acp2.errors.HistoryWriteError` while an earlier flush's retry fails."""

    def remember_prompt(self, entry: PromptEntry) -> None:
        """Queue a keyed prompt's ledger entry, committed with the next flush."""

    def find_prompt(self, session_id: str, key: str) -> PromptEntry | None:
        """The ledger entry of ``key`` in ``session_id`` (queued or stored), or None."""

    def set_title(self, session_id: str, title: str | None) -> None:
        """Queue a new title (None clears it), committed by :meth:`flush`."""

    def flush(self) -> None:
        """Commit everything queued in one transaction (cheap when nothing is); on failure
        keep it queued and raise :class:`acp2.errors.HistoryWriteError`."""

    def updates(self, session_id: str) -> Iterator[bytes]:
        """The stored update bodies of a session, oldest first."""

    def row_batches(self, session_id: str, rows: int = 64) -> Batches:
        """The session's stored rows (each one flush's bodies, newline-joined) in batches
        of ``rows``, oldest first, up to the last row stored when called; no statement
        stays open between batches."""

    @property
    def on_disk(self) -> bool:
        """True when :meth:`row_batches` reads through a connection of its own, so its
        batches may be fetched in a worker thread."""


#: What ``Agent(store=...)`` accepts: a store, a SQLite path, a ``postgresql://`` URL, or
#: None for the default SQLite file (``acp2.agent.runtime.open_store``).
StoreSpec = SessionStore | str | os.PathLike[str] | None
