"""``acp2 test-agent``: the deterministic test agent, served on stdio."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_parser", "main"]


def add_parser(subparsers: Any) -> None:
    """Register ``acp2 test-agent``."""
    from acp2.testing.scenarios import SCENARIO_HELP

    parser = subparsers.add_parser(
        "test-agent",
        help="a deterministic agent for testing clients, on stdio",
        description="Serve a deterministic ACP v2 agent on stdin/stdout, for testing clients.",
        epilog=SCENARIO_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--store",
        metavar="PATH|URL",
        help="session history: a SQLite file or a postgresql:// URL (default: in memory,"
        " lost on exit)",
    )


def main(args: argparse.Namespace) -> int:
    """Serve the test agent until stdin closes (0); 2 when ``--store`` cannot be used,
    1 when updates could not be stored by the end (each said in one line on stderr)."""
    import sys

    from acp2.cli.store_check import store_at_exit, store_at_start
    from acp2.testing.scenarios import build_test_agent

    agent = build_test_agent(args.store)
    # In memory nothing can fail: skip the check, the runtime's import waits for later.
    problem = store_at_start(agent) if args.store else None
    if problem:
        print(f"acp2 test-agent: {problem}", file=sys.stderr)
        return 2
    agent.run()
    lost = store_at_exit(agent) if args.store else None
    if lost:
        print(f"acp2 test-agent: {lost}", file=sys.stderr)
    return 1 if lost else 0
