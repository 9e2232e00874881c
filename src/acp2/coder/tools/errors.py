"""The one exception tools raise for failures the model should see and recover from."""

from __future__ import annotations

__all__ = ["ToolError"]


class ToolError(Exception):
    """A tool failed in a way the model can read and act on (bad path, no match, ...).

    The message is shown to the model verbatim after ``Error:``.
    """
