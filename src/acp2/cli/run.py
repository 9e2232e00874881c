"""``acp2 run``: send one prompt to an agent and print its reply (scripting, CI).

::

    acp2 run [--json] [--permission allow|deny|ask] [--cwd DIR] [--resume SESSION_ID]
             [--cancel-after SECONDS] [--timeout SECONDS] PROMPT -- AGENT_COMMAND...

Text mode prints the agent's final reply. ``--json`` prints one JSON object per line:
every ``session/update`` of the session exactly as received (its ``update`` object),
then ``{"sessionId", "stopReason", "text"}``. Exit status: 0 when the work ended with
``end_turn``, 1 for any other stop reason, 2 for a usage error, 3 when the agent failed
(exited, broke the protocol, refused the request or timed out).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from acp2.client import PermissionPolicy

__all__ = ["EXIT_AGENT_FAILED", "EXIT_STOPPED", "EXIT_USAGE", "add_parser", "main", "run_command"]

EXIT_STOPPED = 1
EXIT_USAGE = 2
EXIT_AGENT_FAILED = 3


def _add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json", action="store_true", help="print every update, then a summary, as JSON lines"
    )
    parser.add_argument(
        "--permission",
        choices=("allow", "deny", "ask"),
        default=None,
        help="answer permission requests: allow, deny, or ask on the terminal "
        "(default: ask when stdin is a terminal, else deny)",
    )
    parser.add_argument("--cwd", metavar="DIR", help="session and agent working directory")
    parser.add_argument("--resume", metavar="SESSION_ID", help="prompt an existing session")
    parser.add_argument(
        "--cancel-after", metavar="SECONDS", type=float, help="cancel the work after SECONDS"
    )
    parser.add_argument(
        "--timeout", metavar="SECONDS", type=float, help="give up (exit 3) after SECONDS"
    )


def add_parser(subparsers: Any) -> None:
    """Register ``acp2 run`` on the ``acp2`` subcommand parser."""
    parser = subparsers.add_parser(
        "run",
        help="send one prompt to an agent and print the reply (scripting, CI)",
        description="Send one prompt to an ACP v2 agent and print its reply.",
        epilog="example: acp2 run 'echo hello' -- acp2 test-agent\n\n"
        "exit status: 0 end_turn, 1 other stop reason, 2 usage, 3 agent failure",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_options(parser)
    parser.add_argument("prompt", metavar="PROMPT", help="the prompt text")
    parser.add_argument(
        "agent_command",
        metavar="AGENT_COMMAND",
        nargs=argparse.REMAINDER,
        help="the agent to run, after '--'",
    )


def main(args: argparse.Namespace) -> int:
    """Entry point used by ``acp2``: run :func:`run_command` on anyio / asyncio."""
    import anyio

    return anyio.run(run_command, args)


def _split_command(args: argparse.Namespace) -> str | None:
    """Move options written between PROMPT and ``--`` into ``args``; return a usage error."""
    command = list(args.agent_command)
    # argparse may already have removed the separating "--": then the agent command starts
    # right away, and a later "--" belongs to the agent command itself (e.g. `uv run -- x`).
    if command and command[0].startswith("-") and "--" in command:
        cut = command.index("--")
        before, command = command[:cut], command[cut + 1 :]
        if before:
            extra = argparse.ArgumentParser(prog="acp2 run", add_help=False)
            _add_options(extra)
            try:
                extra.parse_args(before, namespace=args)
            except SystemExit:
                return f"unexpected arguments before '--': {' '.join(before)}"
    args.agent_command = command
    return None if command else "missing AGENT_COMMAND (write it after '--')"


async def run_command(args: argparse.Namespace) -> int:
    """Run ``acp2 run`` with parsed ``args``; return the exit status."""
    problem = _split_command(args)
    if problem is not None:
        print(f"acp2 run: error: {problem}", file=sys.stderr)
        return EXIT_USAGE
    import anyio

    from acp2.errors import Acp2Error

    try:
        with anyio.fail_after(args.timeout):
            session_id, stop, text, error = await _prompt_once(args)
    except TimeoutError as exc:
        detail = str(exc) or f"no answer within {args.timeout:g} s"
        print(f"acp2 run: error: {detail}", file=sys.stderr)
        return EXIT_AGENT_FAILED
    except (Acp2Error, OSError) as exc:
        print(f"acp2 run: error: {exc}", file=sys.stderr)
        return EXIT_AGENT_FAILED
    if args.json:
        summary = {"sessionId": session_id, "stopReason": stop, "text": text}
        _write_line(json.dumps(summary, ensure_ascii=False, separators=(",", ":")))
    elif text:
        _write_line(text)
    if stop == "end_turn":
        return 0
    reason = f"{stop}: {error}" if error else str(stop)
    print(f"acp2 run: the agent stopped: {reason}", file=sys.stderr)
    return EXIT_STOPPED


async def _prompt_once(args: argparse.Namespace) -> tuple[str, str | None, str, str | None]:
    """Connect, open or resume the session, prompt, wait (cancelling after
    ``--cancel-after``); return (session id, stop reason, reply text, error message)."""
    import anyio

    from acp2.client import connect

    listener = _print_update if args.json else None
    async with connect(
        args.agent_command, cwd=args.cwd, permissions=_policy(args.permission)
    ) as client:
        if args.resume:
            session = await client.resume(args.resume, on_update=listener)
        else:
            session = await client.new_session(on_update=listener)
        work = await session.prompt(args.prompt)
        with anyio.move_on_after(args.cancel_after):
            await work.wait()
        if not work.done:
            await session.cancel()
        stop = await work.wait()
        error = getattr(work.error, "message", None)
        return session.id, stop, work.text, error if isinstance(error, str) else None


def _policy(choice: str | None) -> PermissionPolicy:
    from acp2.client import allow_all, deny_all, interactive

    if choice is None:
        choice = "ask" if sys.stdin.isatty() else "deny"
    if choice == "allow":
        return allow_all
    return deny_all if choice == "deny" else interactive()


def _print_update(update: Any, raw: bytes) -> None:
    _write_line(raw.decode("utf-8"))


def _write_line(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()
