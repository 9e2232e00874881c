"""Unwrapping exception groups: the one helper every task-group boundary uses.

Task groups wrap what their tasks raised in ``BaseExceptionGroup``; at acp2's public
boundaries (leaving a ``Connection``, starting an agent, the command line) callers should
see the exception their code or the peer caused, not a wrapper around it.
"""

from __future__ import annotations

__all__ = ["leaves"]


def leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions inside ``exc`` that are not groups, depth first (``[exc]`` when it is
    not a group). One leaf means the group only wrapped it: raise that one instead."""
    if not isinstance(exc, BaseExceptionGroup):
        return [exc]
    out: list[BaseException] = []
    for item in exc.exceptions:
        out.extend(leaves(item))
    return out
