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
    """Serve the test agent until stdin closes."""
    from acp2.testing.scenarios import build_test_agent

    build_test_agent(args.store).run()
    return 0
