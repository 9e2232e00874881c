"""``acp2 agents``: list, search and show the agents of the ACP registry; and ``--agent ID``
of ``acp2 chat`` / ``acp2 run``, which turns an entry into the agent command.

Every text from the index (names, descriptions, packages, URLs) is the registry's, so it
passes :mod:`acp2.sanitize` before it reaches the terminal.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from typing import Any, Final

__all__ = ["add_agent_option", "add_parser", "agent_command", "main"]

#: Exit status when the registry cannot be read or the agent cannot be prepared.
EXIT_REGISTRY: Final = 3
_DESCRIPTION_WIDTH: Final = 60


def add_registry_options(parser: argparse.ArgumentParser) -> None:
    """``--registry URL`` and ``--refresh``: which index, and whether to skip the cache."""
    parser.add_argument(
        "--registry",
        metavar="URL",
        help="the registry index (default: $ACP2_REGISTRY_URL, else the ACP registry)",
    )
    parser.add_argument(
        "--refresh", action="store_true", help="fetch the index even if the cached copy is fresh"
    )


def add_agent_option(parser: argparse.ArgumentParser) -> None:
    """``--agent ID`` (plus the registry options) for ``acp2 chat`` and ``acp2 run``."""
    parser.add_argument(
        "--agent",
        metavar="ID",
        help="start the agent ID of the ACP registry (see acp2 agents) instead of AGENT_COMMAND",
    )
    add_registry_options(parser)


def add_parser(subparsers: Any) -> None:
    """Register ``acp2 agents`` on the ``acp2`` subcommand parser."""
    parser = subparsers.add_parser(
        "agents",
        help="list, search and show the agents of the ACP registry",
        description="List and search the agents of the ACP registry, or show one.",
        epilog="examples:\n  acp2 agents              (every agent)\n"
        "  acp2 agents code         (agents whose id, name or description say 'code')\n"
        "  acp2 agents show gemini  (one entry, and the command that starts it here)\n"
        "  acp2 chat --agent gemini (chat with it)\n\n"
        "The index is cached for an hour; when the network is down the cached copy is\n"
        "used and its age is shown. exit status: 0 found, 1 nothing matched, 3 no index",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_registry_options(parser)
    parser.add_argument(
        "--offline", action="store_true", help="use only the cached index, never the network"
    )
    parser.add_argument(
        "words", metavar="SEARCH", nargs="*", help="words to search for, or: show ID"
    )


def main(args: argparse.Namespace) -> int:
    """Run ``acp2 agents`` with parsed ``args``; return the exit status."""
    from acp2.errors import RegistryError

    words = list(args.words)
    try:
        loaded = _load(args, offline=args.offline)
        if words[:1] == ["show"]:
            if len(words) != 2:
                print("acp2 agents: error: usage: acp2 agents show ID", file=sys.stderr)
                return 2
            from acp2.cli.agents_show import show

            return show(loaded.index.find(words[1]))
        return _list(loaded.index.agents, " ".join(words))
    except RegistryError as exc:
        return _fail("acp2 agents", exc)


def _load(args: argparse.Namespace, *, offline: bool = False) -> Any:
    """Load the index for ``args``; the stale-cache note goes to stderr."""
    from acp2 import sanitize
    from acp2.registry.index import load_index

    loaded = load_index(args.registry, refresh=args.refresh, offline=offline)
    if loaded.note:
        print(f"acp2: {sanitize.prose(loaded.note)}", file=sys.stderr)
    return loaded


def _fail(prog: str, exc: Exception) -> int:
    from acp2 import sanitize

    print(f"{prog}: error: {sanitize.prose(str(exc))}", file=sys.stderr)
    return EXIT_REGISTRY


def _list(agents: list[Any], words: str) -> int:
    from acp2 import sanitize
    from acp2.registry.search import search

    found = search(agents, words)
    if not found:
        print(f"no agent matches {sanitize.line(words)!r}", file=sys.stderr)
        return 1
    rows = [_row(e) for e in found]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        print("  ".join([*cells, row[4]]).rstrip())
    return 0


def _row(entry: Any) -> list[str]:
    from acp2 import sanitize

    description = sanitize.line(entry.description)
    if len(description) > _DESCRIPTION_WIDTH:
        description = description[: _DESCRIPTION_WIDTH - 1] + "…"
    kinds = ",".join(entry.distribution.kinds())
    return [entry.id, sanitize.line(entry.name), sanitize.line(entry.version), kinds, description]


def agent_command(args: argparse.Namespace, command: list[str], prog: str) -> list[str]:
    """``command`` unchanged without ``--agent``; else the command that starts that
    registry agent, with the entry's environment added to ``os.environ`` (the agent
    inherits it). Prints the error and exits with :data:`EXIT_REGISTRY` (2 for usage)."""
    agent_id = getattr(args, "agent", None)
    if agent_id is None:
        return command
    if command or getattr(args, "url", None) is not None:
        print(f"{prog}: error: give --agent, AGENT_COMMAND or --url, not two", file=sys.stderr)
        raise SystemExit(2)
    from acp2.errors import RegistryError
    from acp2.registry.launch import resolve

    try:
        launch = resolve(_load(args).index.find(agent_id))
    except RegistryError as exc:
        raise SystemExit(_fail(prog, exc)) from None
    os.environ.update(launch.env)
    from acp2 import sanitize

    # Say what runs: the command comes from the registry, not from the user.
    print(f"{prog}: starting {sanitize.exact(shlex.join(launch.argv))}", file=sys.stderr)
    return launch.argv
