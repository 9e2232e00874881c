"""Finding registry entries by words."""

from __future__ import annotations

from acp2.registry.model import Entry

__all__ = ["search"]


def search(agents: list[Entry], words: str) -> list[Entry]:
    """The entries whose id, name or description contain every word of ``words``
    (case-insensitive), in index order; all of them when ``words`` is blank. An exact
    id match comes first."""
    terms = words.lower().split()
    found = [e for e in agents if all(t in _haystack(e) for t in terms)]
    exact = [e for e in found if e.id == words.strip().lower()]
    return exact + [e for e in found if e not in exact]


def _haystack(entry: Entry) -> str:
    return f"{entry.id}\n{entry.name}\n{entry.description}".lower()
