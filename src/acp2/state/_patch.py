"""Patch helpers shared by the reducer: the ``_meta`` key-patch and small normalisers."""

from __future__ import annotations

from typing import Any

from msgspec import UNSET, UnsetType

__all__ = ["patch_meta"]


def patch_meta(
    current: dict[str, Any] | None, patch: dict[str, Any] | UnsetType | None
) -> dict[str, Any] | None:
    """Return ``current`` patched by an upsert's top-level ``_meta`` (MU-07, D-26).

    Omitted keeps ``current``; ``null`` clears the whole object; an object patches by
    top-level key (a ``null`` value deletes that key, any other value replaces it, no deep
    merge, ``{}`` changes nothing). This Nov rule reads Aug senders correctly too, because
    a conservative sender removes keys with ``_meta: null`` followed by the full object.
    ``current`` is never mutated: a new dict is returned when anything changes.
    """
    if patch is UNSET:
        return current
    if patch is None:
        return None
    if not patch:
        return current
    merged = dict(current) if current else {}
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return merged
