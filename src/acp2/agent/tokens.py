"""The token counts a piece of work reports on its idle (Preview ``usage``, unstable).

:meth:`acp2.agent.Turn.tokens` adds one exchange's counts to the work's running sum; the
runtime sends the sum as ``usage`` on the ``idle`` that ends the work. The key is an extra
one on ``state_update``, which every vendored draft allows, so every client accepts it
(``rfds/end-turn-token-usage``; docs.rs ``v2::Usage``).
"""

from __future__ import annotations

from typing import Any

from acp2.schema import Usage

__all__ = ["add_tokens", "token_counts"]

_NAMES = ("input_tokens", "output_tokens", "thought", "cached_read", "cached_write")


def token_counts(*counts: Any) -> tuple[int | None, ...]:
    """``counts`` checked: each an int >= 0 (the optional ones may be None). Raises
    ``TypeError`` / ``ValueError`` naming the first bad one."""
    for index, (name, value) in enumerate(zip(_NAMES, counts, strict=True)):
        if value is None and index >= 2:
            continue
        if type(value) is not int:
            raise TypeError(f"tokens() {name} must be an int, not {type(value).__name__}")
        if value < 0:
            raise ValueError(f"tokens() {name} must not be negative: {value}")
    return counts


def add_tokens(usage: Usage | None, *counts: int | None) -> Usage:
    """``usage`` (None: nothing yet) plus one report's ``(input, output, thought,
    cached_read, cached_write)``; an optional count stays unreported until some report
    gives it."""
    given, out, thought, read, write = counts
    assert given is not None
    assert out is not None
    if usage is None:
        usage = Usage(total_tokens=0, input_tokens=0, output_tokens=0)
    usage.input_tokens += given
    usage.output_tokens += out
    usage.total_tokens += given + out
    usage.thought_tokens = _plus(usage.thought_tokens, thought)
    usage.cached_read_tokens = _plus(usage.cached_read_tokens, read)
    usage.cached_write_tokens = _plus(usage.cached_write_tokens, write)
    return usage


def _plus(total: Any, count: int | None) -> Any:
    if count is None:
        return total
    return count + (total if type(total) is int else 0)
