"""The limit flags of ``acp2 serve``: connection caps and timeouts (docs/remote.md).

Each flag sets the :class:`~acp2.serve.config.ServeConfig` field of the same meaning;
its default is the field's, printed in ``--help``.
"""

from __future__ import annotations

import argparse
from typing import Any

from acp2.serve.config import ServeConfig

__all__ = ["add_limit_flags", "limit_settings"]

_DEFAULTS = ServeConfig()

#: flag, config field, type, help (the default is appended).
_FLAGS: tuple[tuple[str, str, type, str], ...] = (
    ("--max-connections", "max_connections", int, "live connections at once (503 / 1013 over)"),
    (
        "--max-per-principal",
        "max_connections_per_principal",
        int,
        "live connections of one principal (all clients are one without --token)",
    ),
    ("--max-agents", "max_agents", int, "agent subprocesses at once (-- AGENT mode)"),
    ("--max-sockets", "max_sockets", int, "open sockets before uvicorn answers 503 itself"),
    ("--max-header-size", "max_header_size", int, "largest request head in bytes"),
    ("--max-held-bytes", "max_held_bytes", int, "bytes held for one slow client"),
    ("--header-timeout", "header_timeout", float, "seconds to send a whole request head"),
    ("--body-timeout", "body_timeout", float, "seconds to send a whole request body"),
    ("--keep-alive", "keep_alive", float, "seconds an idle keep-alive socket stays"),
    ("--stall-timeout", "stall_timeout", float, "seconds a client may take nothing"),
)


def add_limit_flags(parser: argparse.ArgumentParser) -> None:
    """Add the ``limits`` flag group to ``parser`` (see the module docstring)."""
    group = parser.add_argument_group("limits")
    for flag, name, kind, text in _FLAGS:
        default = getattr(_DEFAULTS, name)
        group.add_argument(
            flag,
            dest=f"limit_{name}",
            type=kind,
            default=default,
            metavar="SECONDS" if kind is float else "N",
            help=f"{text} ({default})",
        )


def limit_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The ``ServeConfig`` keyword arguments the limit flags in ``args`` give; raises
    ``ValueError`` for a value that is not positive."""
    settings = {name: getattr(args, f"limit_{name}") for _, name, _, _ in _FLAGS}
    bad = [flag for flag, name, _, _ in _FLAGS if not settings[name] > 0]
    if bad:
        raise ValueError(f"{', '.join(bad)} must be positive")
    return settings
