"""``acp2 chat``: chat with any ACP v2 agent in the terminal.

::

    acp2 chat [--resume [SESSION_ID]] [--cwd DIR] [--permission allow|deny|ask] [--plain]
              [--thoughts] [--fs] [--terminal]
              (-- AGENT_COMMAND... | --url URL [--token T] [--transport auto|websocket|http])
    acp2 chat --url URL [--token T] --attach [SESSION_ID] [--role observer|controller]

On a terminal: streamed markdown, tool calls with live status, diffs, terminal output,
plans, usage; the agent's forms are asked field by field (checked as typed, defaults
prefilled) and its links shown in full before you agree to open them; a session refused for
want of a login offers the agent's login methods. ``/`` completes the chat's own commands
(``/help``, ``/clear``, ``/sessions``, ``/resume ID``, ``/cancel``, ``/model``, ``/mode``,
``/cost``, ``/info``, ``/permissions``, ``/quit``) and the agent's; a built-in wins over an
agent command of the same name, which stays reachable as ``//name``. ``@path`` attaches a
file of the session folder; ``!command`` runs a command in your shell here, shows its output
(sanitized) and sends it with the next prompt, never as a prompt. Lines typed while the
agent works are queued and sent in order once it is idle. Esc-Enter inserts a newline; Esc
alone or Ctrl-C cancels the running work, and Ctrl-C pressed twice on an empty line quits,
as does Ctrl-D; leaving prints the ``acp2 chat --resume`` command that comes back. Without a
terminal (or with ``--plain``) it reads one prompt per input line and prints a plain
transcript; then the exit status is 0 when every turn ended with ``end_turn``, 1 otherwise,
3 when the agent failed.

``--resume`` without an id lists this folder's sessions (title, age, folder; newest
first) and resumes the one picked; without a terminal it resumes the newest. An "always"
answer to a permission question can be saved as a rule for the project or for every
folder (``/permissions`` lists them; docs/chat.md).

``--attach SESSION_ID`` joins a live session of a remote agent another client is serving
(a second terminal): as an ``observer`` (default: the history, then every update live;
prompts are refused) or a ``controller`` (may prompt, cancel and answer permission
requests). ``--attach`` without an id lists the agent's sessions and asks which. It needs
``--url``: an agent ``acp2 chat`` starts itself has that chat as its only client. The
chat shows its session id in its header and with ``/info``.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from acp2.client.permissions import PermissionMode

__all__ = ["add_common_options", "add_parser", "main"]


def add_common_options(
    parser: argparse.ArgumentParser, *, permission_default: PermissionMode
) -> None:
    """The options ``acp2 chat`` and ``acp2 demo`` share."""
    from acp2.client.permissions import PERMISSION_MODES  # here: `acp2 --help` stays light

    parser.add_argument(
        "--permission",
        choices=PERMISSION_MODES,
        default=None,
        help="answer permission requests: allow, deny, or ask (default: ask on a "
        f"terminal, else {permission_default}; in transcript mode 'ask' reads the "
        "choice from the next input line)",
    )
    parser.add_argument(
        "--plain",
        action="store_true",
        help="print a plain transcript, reading prompts line by line, even on a terminal",
    )
    parser.add_argument(
        "--thoughts", action="store_true", help="show the agent's thoughts in full (ctrl-t)"
    )


def add_parser(subparsers: Any) -> None:
    """Register ``acp2 chat`` on the ``acp2`` subcommand parser."""
    parser = subparsers.add_parser(
        "chat",
        help="chat with any ACP v2 agent in the terminal",
        description="Chat with an ACP v2 agent: start it, open a session, send prompts.",
        epilog="examples:\n  acp2 chat -- acp2 test-agent\n  acp2 chat -- acp2 agent\n"
        "  acp2 chat --url http://127.0.0.1:8765/acp   (a remote agent, e.g. acp2 serve)\n"
        "  echo 'echo hi' | acp2 chat -- acp2 test-agent\n"
        "  acp2 chat --url http://127.0.0.1:8765/acp --attach SESSION_ID   (watch a session\n"
        "      from a second terminal; /info in the first chat shows the id)\n\n"
        "commands: /help lists them; //name runs an agent command a built-in shadows\n"
        "keys: enter sends (queued while the agent works), esc-enter adds a line,\n"
        "@path attaches a file, !command runs a command here (its output goes with the\n"
        "next prompt), esc or ctrl-c cancels the work (ctrl-c twice on an empty\n"
        "line: quit), ctrl-d quits, ctrl-t / ctrl-o expand thoughts / tool output,\n"
        "up/down browse this folder's history",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--resume",
        metavar="SESSION_ID",
        nargs="?",
        const="",
        help="resume (and replay) a session; leaving a chat prints this command (without "
        "an id: list this folder's sessions, newest first, and pick one; not on a "
        "terminal: the newest)",
    )
    parser.add_argument("--cwd", metavar="DIR", help="session and agent working directory")
    parser.add_argument(
        "--attach",
        metavar="SESSION_ID",
        nargs="?",
        const="",
        help="with --url: join a live session another client is serving (without an id: "
        "list the agent's sessions and pick one)",
    )
    parser.add_argument(
        "--role",
        choices=("observer", "controller"),
        default=None,
        help="with --attach: observer (default) only watches; controller may also prompt, "
        "cancel and answer permission requests",
    )
    add_common_options(parser, permission_default="deny")
    from acp2.cli.run import add_remote_options, add_serving_options, add_transport_option

    add_serving_options(parser)
    add_remote_options(parser)
    from acp2.cli.agents_cmd import add_agent_option
    from acp2.cli.mcp_opts import add_mcp_options

    add_mcp_options(parser)
    add_agent_option(parser)
    add_transport_option(parser)
    parser.add_argument(
        "agent_command",
        metavar="AGENT_COMMAND",
        nargs=argparse.REMAINDER,
        help="the agent to run, after '--'",
    )


def main(args: argparse.Namespace) -> int:
    """Run ``acp2 chat`` with parsed ``args``; return the exit status."""
    import anyio

    from acp2.ui.app import ChatOptions, run_chat

    command = list(args.agent_command)
    if command[:1] == ["--"]:
        command = command[1:]
    from acp2.cli.agents_cmd import agent_command

    command = agent_command(args, command, "acp2 chat")
    problem = _usage_problem(args, command)
    servers: list[object] = []
    if problem is None:
        from acp2 import sanitize
        from acp2.cli.mcp_opts import mcp_servers_of
        from acp2.errors import McpConfigError

        try:
            servers = mcp_servers_of(args)
        except McpConfigError as exc:
            problem = sanitize.line(str(exc))
    if problem is not None:
        print(f"acp2 chat: error: {problem}", file=sys.stderr)
        return 2
    options = ChatOptions(
        agent_command=command,
        cwd=args.cwd,
        resume=args.resume,
        permission=args.permission,
        interactive=False if args.plain else None,
        expand_thoughts=args.thoughts,
        files=args.fs,
        terminals=args.terminal,
        url=args.url,
        token=args.token,
        transport=args.transport or "auto",
        attach=args.attach,
        role=args.role or "observer",
        mcp_servers=servers,
    )
    return anyio.run(run_chat, options)


def _usage_problem(args: argparse.Namespace, command: list[str]) -> str | None:
    """What is wrong with the combination of options, or None."""
    if args.url is not None and command:
        return "give AGENT_COMMAND or --url, not both"
    if args.attach is not None and args.url is None:
        # A chat that starts its agent is that agent's only client: nothing to attach to.
        return "--attach needs --url (an agent acp2 chat starts has no other clients)"
    if args.url is None and not command:
        return "missing AGENT_COMMAND (write it after '--', or use --url)"
    if args.attach is not None and args.resume is not None:
        return "give --resume or --attach, not both"
    if args.role is not None and args.attach is None:
        return "--role needs --attach"
    from acp2.cli.usage import cwd_problem, transport_problem, url_problem

    return (
        transport_problem(args.transport, args.url)
        or url_problem(args.url)
        or cwd_problem(args.cwd, remote=args.url is not None)
    )
