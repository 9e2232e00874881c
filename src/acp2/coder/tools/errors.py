"""The one exception tools raise for failures the model should see and recover from."""

from __future__ import annotations

from acp2.errors import ToolError

__all__ = ["ToolError"]
