"""Reading a numbered choice the user typed (``1`` .. ``count``)."""

from __future__ import annotations

__all__ = ["picked"]


def picked(answer: str, count: int) -> int | None:
    """The 0-based index of the choice ``answer`` names among ``count`` numbered ones
    (``"1"`` is the first), or None for anything else: ASCII digits only, since
    ``str.isdigit`` also takes characters ``int`` refuses (``²``)."""
    if not (answer.isascii() and answer.isdigit()):
        return None
    number = int(answer)
    return number - 1 if 1 <= number <= count else None
