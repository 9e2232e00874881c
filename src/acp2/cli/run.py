"""``acp2 run``: send one prompt to an agent and print its reply (scripting, CI).

::

    acp2 run [--json] [--permission allow|deny|ask] [--cwd DIR]
             [--resume SESSION_ID | --continue]
             [--cancel-after SECONDS] [--timeout SECONDS] [--fs] [--terminal]
             PROMPT (-- AGENT_COMMAND... | --url URL [--token TOKEN] [--transport T])

``PROMPT`` ``-`` reads the prompt from stdin. Everything after the first ``--`` is the
agent command; the prompt must come before it.

Text mode prints the agent's reply: streamed as it arrives when stdout is a terminal,
else the final text once. The text is sanitized (:mod:`acp2.sanitize`): escape
sequences and control characters of the agent never reach the terminal. ``--json``
prints one JSON object per line: every ``session/update`` of the session as received
(its ``update`` object), every update of each child session the agent announces (Preview
subagents) as ``{"sessionId": child, "parentSessionId": parent, "update": {...}}``, each
permission request and its answer
(``{"permissionRequest": params, "n": 1}``, ``{"permissionResponse": result, "n": 1}``),
then ``{"sessionId", "stopReason", "text"}``; C1 controls and bidi controls inside JSON
strings are written as ``\\uXXXX`` escapes (the same JSON value). With ``--permission ask``
the request is shown on stderr as in ``acp2 chat`` and answered with one key (``y`` allow
once, ``a`` always allow, ``n`` reject, or a number; Ctrl-C declines it and cancels the
turn, which then ends with status 1). With ``--url``, each attempt to re-establish a
dropped link is said on stderr (``the link to URL dropped: reconnecting, attempt 2 in
0.1s``). Exit status: 0 when the work ended
with ``end_turn``, 1 for any other stop reason, 2 for a usage error, 3 when the agent
failed (exited, broke the protocol, refused the request or timed out).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from acp2.client import PermissionPolicy

__all__ = [
    "EXIT_AGENT_FAILED",
    "EXIT_STOPPED",
    "EXIT_USAGE",
    "add_parser",
    "add_serving_options",
    "add_transport_option",
    "main",
    "run_command",
]

EXIT_STOPPED = 1
EXIT_USAGE = 2
EXIT_AGENT_FAILED = 3


def _add_options(parser: argparse.ArgumentParser) -> None:
    from acp2.client.permissions import PERMISSION_MODES  # only once `acp2 run` was chosen

    parser.add_argument(
        "--json",
        action="store_true",
        help="print every update and permission request, then a summary, as JSON lines",
    )
    parser.add_argument(
        "--permission",
        choices=PERMISSION_MODES,
        default=None,
        help="answer permission requests: allow, deny, or ask on the terminal "
        "(default: ask when stdin is a terminal, else deny)",
    )
    parser.add_argument("--cwd", metavar="DIR", help="session and agent working directory")
    parser.add_argument("--resume", metavar="SESSION_ID", help="prompt an existing session")
    parser.add_argument(
        "--continue",
        dest="continue_",
        action="store_true",
        help="prompt this folder's newest session (the agent's session/list; its title is "
        "said on stderr)",
    )
    parser.add_argument(
        "--cancel-after", metavar="SECONDS", type=float, help="cancel the work after SECONDS"
    )
    parser.add_argument(
        "--timeout", metavar="SECONDS", type=float, help="give up (exit 3) after SECONDS"
    )
    add_serving_options(parser)
    add_remote_options(parser)
    from acp2.cli.agents_cmd import add_agent_option
    from acp2.cli.mcp_opts import add_mcp_options

    add_mcp_options(parser)
    add_agent_option(parser)
    add_transport_option(parser)


def add_remote_options(parser: argparse.ArgumentParser) -> None:
    """``--url`` and ``--token`` (``acp2 run``, ``acp2 chat``, ``acp2 check``): talk to a
    remote agent (``acp2 serve`` or any RFD server) instead of starting a command."""
    import os

    parser.add_argument(
        "--url",
        metavar="URL",
        help="a remote agent's endpoint (http(s):// or ws(s)://host:port/acp) instead of "
        "AGENT_COMMAND; --cwd is then a folder on the agent's machine",
    )
    parser.add_argument(
        "--token",
        metavar="TOKEN",
        default=os.environ.get("ACP2_TOKEN"),
        help="bearer token for --url (default: $ACP2_TOKEN, which keeps it out of ps)",
    )


def add_transport_option(parser: argparse.ArgumentParser) -> None:
    """``--transport auto|websocket|http`` (``acp2 run``, ``acp2 chat``): how ``--url`` is
    reached; auto tries a WebSocket and falls back to Streamable HTTP."""
    parser.add_argument(
        "--transport",
        choices=("auto", "websocket", "http"),
        default=None,
        help="with --url: websocket, http (Streamable HTTP), or auto (default: WebSocket, "
        "falling back to Streamable HTTP when the server refuses the upgrade)",
    )


def add_serving_options(parser: argparse.ArgumentParser) -> None:
    """``--fs`` and ``--terminal`` (``acp2 run`` and ``acp2 chat``): serve a v1 agent's
    ``fs/*`` / ``terminal/*`` requests; both default off (then answered ``-32601``)."""
    parser.add_argument(
        "--fs",
        action="store_true",
        help="serve a v1 agent's file requests, under the cwd; writes asked with the "
        "permission policy",
    )
    parser.add_argument(
        "--terminal",
        action="store_true",
        help="serve a v1 agent's terminal requests, under the cwd; commands asked with the "
        "permission policy",
    )


def add_parser(subparsers: Any) -> None:
    """Register ``acp2 run`` on the ``acp2`` subcommand parser."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "run",
        help="send one prompt to an agent and print the reply (scripting, CI)",
        description="Send one prompt to an ACP v2 agent and print its reply.",
        epilog="examples:\n  acp2 run 'echo hello' -- acp2 test-agent\n"
        "  acp2 run --url http://127.0.0.1:8765/acp 'echo hello'   (a remote agent)\n"
        "  echo 'fix the failing test' | acp2 run - -- acp2 agent   (prompt from stdin)\n\n"
        "On a terminal the reply streams as it arrives; a permission question shows\n"
        "what will run and takes one key: y allow once, a always allow, n reject.\n"
        "--json also prints each permission request and its answer.\n\n"
        "exit status: 0 end_turn, 1 other stop reason, 2 usage, 3 agent failure",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    # The agent command is split off at the first "--" before argparse sees the words, so
    # `acp2 run -- agent` is a missing prompt, never a prompt "agent".
    parser.__class__ = _RunParser
    _add_options(parser)
    parser.add_argument(
        "prompt", metavar="PROMPT", nargs="?", help="the prompt text ('-' reads it from stdin)"
    )
    parser.add_argument(
        "agent_command",
        metavar="AGENT_COMMAND",
        nargs=argparse.REMAINDER,
        help="the agent to run, after '--'",
    )


class _RunParser(argparse.ArgumentParser):
    """Parses only the words before the first ``--``; the rest is the agent command."""

    def parse_known_args(  # type: ignore[override]
        self, args: list[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        """Parse options and PROMPT before ``--``; everything after it is AGENT_COMMAND."""
        words = list(sys.argv[1:] if args is None else args)
        if "--" not in words:
            return super().parse_known_args(words, namespace)
        cut = words.index("--")
        parsed, extra = super().parse_known_args(words[:cut], namespace)
        parsed.before_separator = parsed.agent_command
        parsed.agent_command = ["--", *words[cut + 1 :]]
        return parsed, extra


def main(args: argparse.Namespace) -> int:
    """Entry point used by ``acp2``: run :func:`run_command` on anyio / asyncio."""
    import anyio

    return anyio.run(run_command, args)


class _BadOption(Exception):
    """An option between PROMPT and ``--`` that does not parse (reported once, exit 2)."""


class _QuietParser(argparse.ArgumentParser):
    """A parser that raises its error instead of printing the usage and exiting."""

    def error(self, message: str) -> NoReturn:
        """Raise :class:`_BadOption` with argparse's message."""
        raise _BadOption(message)


def _split_command(args: argparse.Namespace) -> str | None:
    """Check PROMPT, move options written between PROMPT and ``--`` into ``args``, and
    leave the agent command in ``args.agent_command``; return a usage error, or None."""
    if args.prompt is None:
        return "missing PROMPT (write it before '--'; '-' reads it from stdin)"
    command = list(args.agent_command)
    before = list(getattr(args, "before_separator", None) or [])
    if command[:1] == ["--"]:  # split off by _RunParser
        command = command[1:]
    elif command and command[0].startswith("-"):  # argparse kept options after PROMPT
        cut = command.index("--") if "--" in command else len(command)
        before, command = command[:cut], command[cut + 1 :]
    if before:
        extra = _QuietParser(prog="acp2 run", add_help=False)
        _add_options(extra)
        try:
            extra.parse_args(before, namespace=args)
        except _BadOption as exc:
            return f"{exc} (in the options before '--': {' '.join(before)})"
    from acp2.cli.agents_cmd import agent_command

    args.agent_command = command = agent_command(args, command, "acp2 run")
    if getattr(args, "url", None) is not None:
        return "give AGENT_COMMAND or --url, not both" if command else _values_problem(args)
    if not command:
        return "missing AGENT_COMMAND (write it after '--', or use --url)"
    return _values_problem(args)


def _values_problem(args: argparse.Namespace) -> str | None:
    """A flag given a value that cannot work, with the fix (see :mod:`acp2.cli.usage`)."""
    from acp2.cli.usage import cwd_problem, seconds_problem, transport_problem, url_problem

    if args.resume and args.continue_:
        return "give --resume SESSION_ID or --continue, not both"
    return (
        transport_problem(args.transport, args.url)
        or seconds_problem("--timeout", args.timeout)
        or seconds_problem("--cancel-after", args.cancel_after)
        or url_problem(args.url)
        or cwd_problem(args.cwd, remote=args.url is not None)
    )


async def run_command(args: argparse.Namespace) -> int:
    """Run ``acp2 run`` with parsed ``args``; return the exit status."""
    problem = _split_command(args)
    if problem is None:
        problem = _read_mcp(args)
    if problem is not None:
        print(f"acp2 run: error: {problem}", file=sys.stderr)
        return EXIT_USAGE
    import anyio

    from acp2 import sanitize
    from acp2.errors import Acp2Error, described
    from acp2.ui.logs import safe_stderr_logging

    safe_stderr_logging()  # warnings quote the agent: never raw on the terminal

    if args.prompt == "-":
        from acp2.ui.oneshot import stdin_prompt

        args.prompt = stdin_prompt()
    try:
        with anyio.fail_after(args.timeout):
            session_id, stop, text, error = await _prompt_once(args)
    except TimeoutError as exc:
        detail = str(exc) or f"no answer within {args.timeout:g} s"
        print(f"acp2 run: error: {sanitize.prose(detail)}", file=sys.stderr)
        return EXIT_AGENT_FAILED
    except (Acp2Error, OSError) as exc:
        print(f"acp2 run: error: {sanitize.prose(described(exc))}", file=sys.stderr)
        return EXIT_AGENT_FAILED
    if args.json:
        from acp2.ui.oneshot import json_line

        summary = {"sessionId": session_id, "stopReason": stop, "text": text}
        _write_line(json_line(json.dumps(summary, ensure_ascii=False, separators=(",", ":"))))
    elif text is not None and text:
        _write_line(sanitize.prose(text))
    if stop == "end_turn":
        return 0
    reason = sanitize.line(f"{stop}: {error}" if error else str(stop))
    print(f"acp2 run: the agent stopped: {reason}", file=sys.stderr)
    return EXIT_STOPPED


def _read_mcp(args: argparse.Namespace) -> str | None:
    """Read ``--mcp`` / ``--mcp-config`` into ``args.mcp_servers``; return a usage error."""
    from acp2 import sanitize
    from acp2.cli.mcp_opts import mcp_servers_of
    from acp2.errors import McpConfigError

    try:
        args.mcp_servers = mcp_servers_of(args)
    except McpConfigError as exc:
        return sanitize.line(str(exc))
    return None


async def _prompt_once(args: argparse.Namespace) -> tuple[str, str | None, str | None, str | None]:
    """Connect (the start-up bounded by ``--timeout`` when given, else the client's
    default), open or resume the session, prompt, wait (cancelling after
    ``--cancel-after``); return (session id, stop reason, reply text or None when it was
    streamed already, error message)."""
    import anyio

    from acp2.client.launch import DEFAULT_INITIALIZE_TIMEOUT
    from acp2.client.remote import connect_agent
    from acp2.ui.oneshot import Interrupt, ReplyStream

    interrupt = Interrupt()
    stream = None if args.json or not sys.stdout.isatty() else ReplyStream(lambda: None, sys.stdout)
    listener = None
    # --timeout bounds the whole run, start-up included: an agent slow to start (Gemini
    # CLI takes 10-40 s on a loaded machine) must not hit the shorter default first.
    startup = args.timeout or DEFAULT_INITIALIZE_TIMEOUT
    async with connect_agent(
        args.agent_command,
        url=args.url,
        token=args.token,
        cwd=args.cwd,
        permissions=_policy(args, stream, interrupt),
        files=args.fs,
        terminals=args.terminal,
        initialize_timeout=startup,
        transport=args.transport or "auto",
        reconnect=_reconnect_reporter(args.url),
    ) as client:
        from acp2.cli.mcp_opts import send_mcp_servers

        if args.json:
            listener = _JsonTree(client.sessions)

        send_mcp_servers(client, args.mcp_servers, "acp2 run")
        if args.resume or args.continue_:
            resume = args.resume or await _newest(client, args.cwd)
            session = await client.resume(resume, on_update=listener)
        else:
            session = await client.new_session(on_update=listener)
        if stream is not None:
            stream.state = lambda: session.state
            session.add_listener(stream)
        work = await session.prompt(args.prompt)
        with anyio.move_on_after(args.cancel_after) as interrupt.scope:
            if not interrupt.pressed:  # ctrl-c at a question asked before prompt() returned
                await work.wait()
        if not work.done:
            await session.cancel()
        stop = await work.wait()
        error = _error_text(work.error)
        if stream is not None:
            stream.end()
        text = None if stream is not None and not args.json else work.text
        return session.id, stop, text, error


def _error_text(error: Any) -> str | None:
    """The message of a turn's ``idle`` error, with the reason its ``data`` holds."""
    from acp2.errors import with_reason

    message = getattr(error, "message", None)
    return with_reason(message, getattr(error, "data", None)) if isinstance(message, str) else None


def _reconnect_reporter(url: str | None) -> Any:
    """For ``--url``: a reconnect pacing that says each attempt on stderr while a dropped
    link is re-established (the default pacing otherwise)."""
    if url is None:
        return None
    from acp2 import sanitize
    from acp2.transport.backoff import Backoff

    where = sanitize.line(url)

    def say(attempt: int, wait: float) -> None:
        print(
            f"acp2 run: the link to {where} dropped: reconnecting, attempt {attempt + 1} "
            f"in {wait:.1f}s",
            file=sys.stderr,
            flush=True,
        )

    return Backoff(on_wait=say)


def _policy(args: argparse.Namespace, stream: Any, interrupt: Any) -> PermissionPolicy:
    from acp2.client import allow_all, deny_all
    from acp2.client.settings import remembering
    from acp2.ui.oneshot import PermissionLog, RunAsker

    choice = args.permission
    if choice is None:
        choice = "ask" if sys.stdin.isatty() else "deny"
    policy: PermissionPolicy = allow_all if choice == "allow" else deny_all
    if choice == "ask":
        before = stream.break_line if stream else None
        policy = RunAsker(sys.stdin, sys.stderr, before=before, interrupt=interrupt)
    policy = remembering(policy, _note, allow=choice != "deny")  # the saved rules first
    return PermissionLog(policy, _write_line) if args.json else policy


async def _newest(client: Any, cwd: str | None) -> str:
    """The id of the newest session the agent lists for ``cwd`` (said on stderr);
    raises ResourceNotFound when it lists none."""
    from acp2.errors import ResourceNotFound
    from acp2.sanitize import line
    from acp2.ui.session_list import first_prompts, folder_of, newest_first, title_of

    listed = newest_first(await client.list_sessions(cwd=folder_of(cwd)))
    if not listed:
        raise ResourceNotFound("no session to resume: the agent lists none for this folder")
    info = listed[0]
    _note(f"resuming {title_of(info, first_prompts())} ({line(str(info.session_id))})")
    return str(info.session_id)


def _note(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


class _JsonTree:
    """The ``--json`` listener of one session: prints each update, and follows every
    child session the session announces (Preview subagents) with a listener of its own,
    whose lines say which child and whose child it is:
    ``{"sessionId": child, "parentSessionId": parent, "update": {...}}``.

    ``sessions`` is the client's registry (the child object is there once announced)."""

    def __init__(self, sessions: Any, session_id: str | None = None, parent: str = "") -> None:
        self.sessions = sessions
        self.head = b""
        if session_id is not None:
            # json.dumps escapes what the agent put in the ids; json_line the rest.
            ids = json.dumps({"sessionId": session_id, "parentSessionId": parent})
            self.head = ids[:-1].encode() + b',"update":'
        self.session_id = session_id
        self.followed: set[str] = set()

    def __call__(self, update: Any, raw: bytes) -> None:
        from acp2.schema import SubagentUpdate
        from acp2.ui.oneshot import json_line

        _write_line(json_line(self.head + raw + b"}" if self.head else raw))
        if type(update) is SubagentUpdate and update.session_id not in self.followed:
            child = self.sessions.get(update.session_id)
            if child is not None and getattr(child, "parent", None) is not None:
                self.followed.add(update.session_id)
                child.add_listener(_JsonTree(self.sessions, child.id, child.parent.id))


def _write_line(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()
