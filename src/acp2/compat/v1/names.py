"""v1 wire method names needed where the v1 models are not (they take most of a second
to import): a remote server routes v1's ``session/load`` answer without decoding it."""

from __future__ import annotations

from typing import Final

__all__ = ["SESSION_LOAD_NAME"]

#: v1's ``session/load`` (the same name as ``acp2.compat.v1.methods.SESSION_LOAD``).
SESSION_LOAD_NAME: Final = "session/load"
