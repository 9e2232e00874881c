"""``acp2 demo``: the whole prompt lifecycle in a few seconds, with nothing to set up.

::

    acp2 demo [--here | --dir DIR] [--permission allow|deny|ask] [--pace SECONDS] [--plain]

Copies a tiny Python project with a failing test into a fresh directory (``--dir`` to
choose it, ``--here`` to use the current directory instead), starts the built-in coding
agent with its offline scripted model there, and opens ``acp2 chat`` on it. Ask it to
"fix the failing test": it plans, reads, edits (asking permission, showing the diff),
runs the tests in a terminal and reports usage. Without a terminal it reads prompts line
by line and prints the transcript (permission default: allow), so it can be scripted::

    echo "fix the failing test" | acp2 demo
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from typing import Any

__all__ = ["SUGGESTED_PROMPT", "add_parser", "agent_command", "main", "prepare_directory"]

#: What the scripted model is made for; pre-filled at the first interactive prompt.
SUGGESTED_PROMPT = "fix the failing test"


def add_parser(subparsers: Any) -> None:
    """Register ``acp2 demo`` on the ``acp2`` subcommand parser."""
    from acp2.cli.chat import add_common_options

    parser = subparsers.add_parser(
        "demo",
        help="see the whole prompt lifecycle: chat with the built-in agent",
        description="Chat with the built-in coding agent (offline scripted model) in a\n"
        "fresh copy of a small sample project with a failing test.",
        epilog=f'try: {SUGGESTED_PROMPT!r}\nscripted: echo "{SUGGESTED_PROMPT}" | acp2 demo',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--here", action="store_true", help="work in the current directory (no sample copy)"
    )
    where.add_argument(
        "--dir", metavar="DIR", help="copy the sample project into DIR (new or empty)"
    )
    parser.add_argument(
        "--pace",
        type=float,
        default=None,
        metavar="SECONDS",
        help="delay between the scripted model's words (default: the agent's, 0.02)",
    )
    add_common_options(parser, permission_default="allow")


def agent_command(pace: float | None = None) -> list[str]:
    """The built-in agent with the scripted model, run by this Python."""
    command = [sys.executable, "-m", "acp2", "agent", "--model", "scripted"]
    return command if pace is None else [*command, "--pace", str(pace)]


def prepare_directory(args: argparse.Namespace) -> str:
    """The directory to work in: the current one with ``--here``, else a new copy of the
    sample project (in ``--dir`` or a fresh temporary directory). Raises OSError /
    FileExistsError when the copy cannot be made."""
    if args.here:
        return os.getcwd()
    from acp2.coder.sample import copy_sample_project

    target = args.dir or tempfile.mkdtemp(prefix="acp2-demo-")
    return str(copy_sample_project(target))


def main(args: argparse.Namespace) -> int:
    """Run ``acp2 demo``; return the chat's exit status (2 if the directory is unusable)."""
    import anyio

    from acp2.ui.app import ChatOptions, run_chat

    try:
        where = prepare_directory(args)
    except OSError as exc:
        print(f"acp2 demo: error: {exc}", file=sys.stderr)
        return 2
    intro = [
        "acp2 demo: the built-in coding agent with an offline scripted model",
        f"working in {where}" if args.here else f"sample project copied to {where}",
    ]
    options = ChatOptions(
        agent_command=agent_command(args.pace),
        cwd=where,
        permission=args.permission,
        interactive=False if args.plain else None,
        transcript_permission="allow",
        first_prompt=SUGGESTED_PROMPT,
        expand_thoughts=args.thoughts,
        intro=intro,
    )
    status = anyio.run(run_chat, options)
    if not args.here:
        print(f"the project is in {where} (python3 -m unittest runs its tests)")
    return status
