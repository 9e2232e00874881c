"""The requirement list: every protocol requirement acp2 cites, by id.

The ids (``TR-01``, ``PL-07``, ``D-09``, ...) name requirements throughout acp2's code,
tests and docs; the list itself lives in one data file shipped with the package,
``requirements.toml`` beside this module, which gives each id its level, its source pages
and a one-line text in our own words. ``docs/requirements.md`` is rendered from it by
``scripts/gen_requirements.py``; :data:`acp2.check.requirements.DIFFERENCES` takes its
texts from it.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any, Final

__all__ = ["DATA_FILE", "LEVELS", "Catalog", "Entry", "load"]

#: The data file's name inside the ``acp2.check`` package.
DATA_FILE: Final = "requirements.toml"
#: The words a level is made of (joined by `` / `` when a requirement has several parts).
LEVELS: Final = frozenset({"MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "MAY", "—"})


@dataclass(frozen=True)
class Entry:
    """One requirement: its ``id``, ``level`` (e.g. ``MUST / SHOULD``), the ``pages`` it
    comes from (``protocol/v2/prompt-lifecycle``, ``schema``, ...) and a one-line ``text``."""

    id: str
    level: str
    pages: tuple[str, ...]
    text: str

    @property
    def area(self) -> str:
        """The id's prefix: ``TR`` for ``TR-01``, ``D`` for ``D-09``."""
        return self.id.split("-", 1)[0]


@dataclass(frozen=True)
class Catalog:
    """The whole list: ``areas`` (prefix -> title) and ``entries`` (id -> Entry), both in
    the data file's order."""

    areas: dict[str, str]
    entries: dict[str, Entry]

    def text(self, requirement_id: str) -> str:
        """The one-line text of ``requirement_id``; ``KeyError`` for an unknown id."""
        return self.entries[requirement_id].text


@cache
def load() -> Catalog:
    """Read the packaged data file (once per process) and return the list.

    Raises ``ValueError`` when an entry lacks a field or has a field of the wrong type, so
    a broken data file fails loudly instead of printing an empty report line.
    """
    raw = tomllib.loads(files("acp2.check").joinpath(DATA_FILE).read_text(encoding="utf-8"))
    areas = {str(k): str(v) for k, v in raw["areas"].items()}
    entries = {str(k): _entry(str(k), v) for k, v in raw["ids"].items()}
    return Catalog(areas, entries)


def _entry(requirement_id: str, fields: Any) -> Entry:
    try:
        level, pages, text = fields["level"], fields["pages"], fields["text"]
    except (KeyError, TypeError) as exc:
        raise ValueError(f"{requirement_id}: needs level, pages and text") from exc
    if not (isinstance(level, str) and isinstance(text, str) and isinstance(pages, list)):
        raise ValueError(f"{requirement_id}: level and text are strings, pages a list")
    return Entry(requirement_id, level, tuple(str(p) for p in pages), text)
