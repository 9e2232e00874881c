"""Session stores: history, the idempotency ledger and leases behind one interface.

:class:`SessionStore` is what the agent runtime calls. The SQLite implementation,
:class:`acp2.store.sqlite.HistoryStore` (also :class:`acp2.agent.HistoryStore`), is the
default (one machine); ``postgresql://`` URLs open
:class:`acp2.store.postgres.PostgresStore` (several nodes on one database; needs the
``postgres`` extra, imported only then). :func:`is_database_url` tells the two apart.
"""

from __future__ import annotations

from acp2.store.base import PromptEntry, SessionRecord, SessionStore

__all__ = ["DATABASE_SCHEMES", "PromptEntry", "SessionRecord", "SessionStore", "is_database_url"]

#: The URL schemes that select the PostgreSQL store.
DATABASE_SCHEMES = ("postgresql://", "postgres://")


def is_database_url(spec: object) -> bool:
    """True when ``spec`` is a string naming a PostgreSQL database (``postgresql://...``)."""
    return isinstance(spec, str) and spec.startswith(DATABASE_SCHEMES)
