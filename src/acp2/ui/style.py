"""Glyphs, colours and number formats shared by the rich and the plain renderers.

Every glyph is one terminal cell wide, so an 80-column layout stays put. Unknown tool
kinds, statuses and plan statuses (open enums) fall back to a neutral glyph.
"""

from __future__ import annotations

import re
from typing import Any, Final

from acp2.state import SessionState, UsageState

__all__ = [
    "KIND_ICONS",
    "PLAIN_PLAN_MARKS",
    "PLAN_MARKS",
    "STATUS_GLYPHS",
    "cost_text",
    "elapsed_text",
    "foreground_text",
    "kind_icon",
    "plan_mark",
    "status_glyph",
    "strip_ansi",
    "tokens_text",
    "usage_text",
]

#: Tool kind -> icon (ACP tool kinds; anything else is ``other``).
KIND_ICONS: Final[dict[str, str]] = {
    "read": "≡",
    "edit": "✎",
    "delete": "✗",
    "move": "⇄",
    "search": "⌕",
    "execute": "$",
    "think": "✻",
    "fetch": "⇣",
    "switch_mode": "⇆",
    "other": "•",
}

#: Tool call status -> (glyph, rich style).
STATUS_GLYPHS: Final[dict[str, tuple[str, str]]] = {
    "pending": ("○", "dim"),
    "in_progress": ("◐", "yellow"),
    "completed": ("✓", "green"),
    "failed": ("✗", "red"),
    "cancelled": ("⊘", "yellow"),
}

#: Plan entry status -> (glyph, rich style).
PLAN_MARKS: Final[dict[str, tuple[str, str]]] = {
    "pending": ("☐", ""),
    "in_progress": ("◐", "yellow"),
    "completed": ("☑", "green"),
    "cancelled": ("☒", "dim"),
}

#: Plan entry status -> ASCII checkbox for the plain transcript.
PLAIN_PLAN_MARKS: Final[dict[str, str]] = {
    "pending": "[ ]",
    "in_progress": "[~]",
    "completed": "[x]",
    "cancelled": "[-]",
}

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")


def kind_icon(kind: str) -> str:
    """The icon of a tool kind (``•`` for ``other`` and unknown kinds)."""
    return KIND_ICONS.get(kind, KIND_ICONS["other"])


def status_glyph(status: str) -> tuple[str, str]:
    """``(glyph, style)`` of a tool call status; unknown statuses count as running."""
    return STATUS_GLYPHS.get(status, STATUS_GLYPHS["in_progress"])


def plan_mark(status: str) -> tuple[str, str]:
    """``(glyph, style)`` of a plan entry status; unknown ones look pending."""
    return PLAN_MARKS.get(status, PLAN_MARKS["pending"])


def tokens_text(count: int) -> str:
    """A token count for people: ``950``, ``1.3k``, ``128k``, ``1.2M``."""
    if count < 1000:
        return str(count)
    if count < 1_000_000:
        value = count / 1000
        return f"{value:.1f}k".replace(".0k", "k") if value < 100 else f"{value:.0f}k"
    return f"{count / 1_000_000:.1f}M".replace(".0M", "M")


def cost_text(cost: Any) -> str | None:
    """``0.0123 USD`` for a ``Cost`` (``$0.0123`` for USD); None when there is none."""
    amount = getattr(cost, "amount", None)
    currency = getattr(cost, "currency", None)
    if not isinstance(amount, int | float) or not isinstance(currency, str):
        return None
    from acp2.sanitize import line  # the currency is the agent's text

    shown = f"{amount:.4f}".rstrip("0").rstrip(".") if amount else "0"
    return f"${shown}" if currency.upper() == "USD" else f"{shown} {line(currency)}"


def usage_text(usage: UsageState | None) -> str | None:
    """``ctx 1.3k/128k (1%) · $0.01``: context used of size and the cost; None if unknown."""
    if usage is None:
        return None
    percent = f" ({100 * usage.used / usage.size:.0f}%)" if usage.size else ""
    text = f"ctx {tokens_text(usage.used)}/{tokens_text(usage.size)}{percent}"
    cost = cost_text(usage.cost)
    return f"{text} · {cost}" if cost else text


def elapsed_text(seconds: float) -> str:
    """``4.2s`` under a minute, else ``3m07s``."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}m{rest:02d}s"


def foreground_text(state: SessionState) -> str:
    """The foreground state in words: ``running``, ``waiting for you``, ``idle``..."""
    if state.foreground == "requires_action":
        return "waiting for you"
    from acp2.sanitize import line  # kept verbatim from the agent: any string

    return line(state.foreground.replace("_", " "))


def strip_ansi(text: str) -> str:
    """``text`` without ANSI escape sequences (for the plain transcript)."""
    return _ANSI.sub("", text)
