"""Connect to an agent and chat with it: :func:`run_chat`, shared by ``acp2 chat`` and
``acp2 demo``.

The interactive front-end is used when stdin and stdout are both terminals, the plain
transcript otherwise (or when asked). Exit status: the front-end's (0 on a normal end;
in transcript mode 1 when a turn did not end with ``end_turn``), 3 when the agent could
not be started, broke the protocol, refused the session or went away.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from acp2 import sanitize
from acp2.client import ClientConnection, ClientSession, PermissionPolicy
from acp2.client.elicitation import ElicitationPolicy
from acp2.client.permissions import PermissionMode
from acp2.schema.extensions import AttachRole

if TYPE_CHECKING:
    from acp2.transport.remote import Profile
    from acp2.ui.login import Ask, LoginOutcome

__all__ = ["EXIT_AGENT_FAILED", "ChatOptions", "run_chat"]

EXIT_AGENT_FAILED = 3


@dataclass
class ChatOptions:
    """What to run and how.

    ``permission``: ``allow`` / ``deny`` / ``ask``; None means ask when the input is a
    terminal (also in the plain transcript) and ``transcript_permission`` otherwise.
    ``interactive``: None decides from the streams. ``intro``: lines printed before
    connecting. ``first_prompt`` pre-fills the first interactive input line.
    ``resume_hint``: print how to resume on leaving.
    ``files`` / ``terminals``: serve a v1 agent's ``fs/*`` / ``terminal/*`` requests
    (:func:`acp2.client.connect`). ``url`` (with ``token``): chat with the remote agent
    there (:func:`acp2.client.connect_url`, over ``transport``) instead of starting
    ``agent_command``.
    ``resume``: a session id; ``""`` lists this folder's sessions and asks which (on a
    terminal) or takes the newest (otherwise).
    ``attach`` (with ``url``): join that live session as ``role`` instead of opening one
    (``""``: list the agent's sessions and ask which, :mod:`acp2.ui.watching`).
    ``mcp_servers``: MCP servers for the agent's sessions (those it cannot take are left
    out with a note, :meth:`acp2.client.ClientConnection.use_mcp_servers`).
    """

    agent_command: Sequence[str]
    cwd: str | None = None
    resume: str | None = None
    permission: PermissionMode | None = None
    interactive: bool | None = None
    transcript_permission: PermissionMode = "deny"
    first_prompt: str | None = None
    expand_thoughts: bool = False
    intro: list[str] = field(default_factory=list)
    resume_hint: bool = True
    files: bool = False
    terminals: bool = False
    url: str | None = None
    token: str | None = None
    transport: Profile = "auto"
    attach: str | None = None
    role: AttachRole = "observer"
    mcp_servers: list[Any] = field(default_factory=list)


class Frontend(Protocol):
    """What :func:`run_chat` needs from a chat loop."""

    def policy(self) -> PermissionPolicy:
        """The permission policy to connect with."""
        ...

    def elicitation_policy(self) -> ElicitationPolicy:
        """The elicitation policy to connect with (forms and links, EL-05)."""
        ...

    def note(self, text: str) -> None:
        """Show an informational line."""
        ...

    def error(self, message: str) -> None:
        """Show an error that ends the chat."""
        ...

    def starting(self, text: str) -> None:
        """Show that the agent is being started or reached (the interactive chat; the
        plain transcript keeps to the conversation)."""
        ...

    async def run(
        self,
        session: ClientSession,
        *,
        replayed: bool = False,
        attached: bool = False,
        client: ClientConnection | None = None,
    ) -> int:
        """Chat in ``session`` until the input ends; return the exit status. ``replayed``:
        its history was replayed (resumed, or ``attached`` with ``--attach``). ``client``:
        the connection the session is on (a session holds none), for commands that open
        or list sessions."""
        ...


def is_interactive(stdin: TextIO, stdout: TextIO) -> bool:
    """True when both streams are terminals."""
    try:
        return stdin.isatty() and stdout.isatty()
    except (AttributeError, ValueError):
        return False


def make_frontend(options: ChatOptions, stdin: TextIO, stdout: TextIO) -> Frontend:
    """The interactive chat or the transcript chat, as ``options`` and the streams say."""
    interactive = options.interactive
    if interactive is None:
        interactive = is_interactive(stdin, stdout)
    if interactive:
        try:
            from rich.console import Console

            from acp2.ui.interactive import InteractiveChat
        except ImportError as exc:  # the `cli` extra is not installed: plain text still works
            print(
                f"acp2: {exc.name} is missing (the 'cli' extra: pip install -e '.[cli]' in the "
                "acp2 checkout); plain mode",
                file=sys.stderr,
            )
        else:
            return InteractiveChat(
                Console(file=stdout),
                permission=options.permission or "ask",
                first_prompt=options.first_prompt,
                expand_thoughts=options.expand_thoughts,
                stdin=stdin,
                agent_command=options.agent_command if options.resume_hint else (),
                url=options.url,
            )
    from acp2.ui.lines import LineReader
    from acp2.ui.transcript import TranscriptChat

    return TranscriptChat(
        stdout,
        LineReader(stdin),
        permission=_transcript_permission(options, stdin),
        url=options.url,
    )


def _transcript_permission(options: ChatOptions, stdin: TextIO) -> PermissionMode:
    """The transcript chat's permission mode: the one asked for; else ``ask`` when a person
    types the input (``--plain`` on a terminal, or no ``cli`` extra), since ``--help``
    promises asking on a terminal; else ``transcript_permission`` (piped input)."""
    if options.permission is not None:
        return options.permission
    try:
        typed = stdin.isatty()
    except (AttributeError, ValueError):
        typed = False
    return "ask" if typed else options.transcript_permission


def agent_line(client: ClientConnection) -> str:
    """``connected to acp2 coding agent 0.1.0``."""
    from acp2.sanitize import line

    info = client.agent_info
    title = info.title if isinstance(info.title, str) and info.title else info.name
    return line(f"connected to {title} {info.version}")


async def run_chat(
    options: ChatOptions, *, stdin: TextIO | None = None, stdout: TextIO | None = None
) -> int:
    """Start the agent, open (or resume, replaying it) a session and chat; return the
    exit status. Errors of the agent are shown by the front-end, never raised.

    On a terminal, a session refused with ``-32000`` offers the agent's auth methods
    (:mod:`acp2.ui.login`); after a terminal login the agent is started again, once
    (not for a remote agent, ``url``: its login runs on its own machine)."""
    from acp2.errors import Acp2Error
    from acp2.ui.logs import safe_stderr_logging

    safe_stderr_logging()  # warnings quote the agent: never raw on the terminal
    stdin, stdout = stdin or sys.stdin, stdout or sys.stdout
    frontend = make_frontend(options, stdin, stdout)
    for line in options.intro:
        frontend.note(line)
    asks = _login_asker(options, stdin, stdout)
    picking: Ask | None = None
    if options.attach == "":
        options.attach = None  # asked once connected, see _open_session
        picking = _line_asker(stdin, stdout)
    elif options.resume == "" and _on_terminal(options, stdin, stdout):
        picking = _line_asker(stdin, stdout)  # the list is shown once connected
    try:
        for attempt in range(2):
            status = await _connect_and_chat(
                options, frontend, asks, last=attempt == 1, picking=picking
            )
            if status is not None:
                return status
        return EXIT_AGENT_FAILED  # not reached: the last attempt never asks to reconnect
    except (Acp2Error, OSError, TimeoutError) as exc:
        from acp2.errors import described
        from acp2.sanitize import prose

        frontend.error(prose(described(exc)) or type(exc).__name__)
        _hint_after_failure(frontend)
        return EXIT_AGENT_FAILED


def _hint_after_failure(frontend: Frontend) -> None:
    """After the agent failed during a chat, say how to come back to the session (the
    interactive chat's resume hint; it says when no resume can work)."""
    hint = getattr(frontend, "print_resume_hint", None)
    if callable(hint):
        hint()


async def _connect_and_chat(
    options: ChatOptions,
    frontend: Frontend,
    asks: Ask | None,
    *,
    last: bool,
    picking: Ask | None = None,
) -> int | None:
    """One connection: the chat's exit status, or None to start the agent again (a
    terminal login succeeded). With ``picking``, the session to attach to is asked first
    (none picked: status 0)."""
    from acp2.client.remote import connect_agent
    from acp2.client.terminal_login import terminal_login_capabilities
    from acp2.errors import AuthRequired

    frontend.starting(_starting_text(options))
    link_status = getattr(frontend, "link_status", None)  # the interactive chat's
    async with connect_agent(
        options.agent_command,
        url=options.url,
        token=options.token,
        transport=options.transport,
        reconnect=_reconnect(options, link_status),
        cwd=options.cwd,
        permissions=_with_rules(frontend),
        files=options.files,
        terminals=options.terminals,
        capabilities=terminal_login_capabilities() if asks is not None else None,
        elicitation=frontend.elicitation_policy(),
    ) as client:
        if link_status is not None:
            link_status.transport = lambda: client.remote
        frontend.note(agent_line(client))
        _offer_mcp_servers(client, options, frontend)
        if not await _pick_first(client, options, frontend, picking):
            frontend.note("no session picked")
            return 0
        while True:
            try:
                session = await _open_session(client, options)
            except AuthRequired:
                if asks is None:
                    _say_how_to_log_in(client, options, frontend)
                    raise
                outcome = await _log_in(client, options, frontend, asks)
                if outcome == "retry":
                    asks = None  # logged in here: a second refusal is the agent's error
                    continue
                if outcome == "reconnect" and not last:
                    return None
                raise
            attached = bool(options.attach)
            replayed = bool(options.resume) or attached
            return await frontend.run(session, replayed=replayed, attached=attached, client=client)


def _with_rules(frontend: Frontend) -> PermissionPolicy:
    """The front end's permission policy behind the saved rules (:mod:`acp2.client.settings`);
    a front end told to deny everything uses only the deny rules."""
    from acp2.client.settings import remembering

    mode = getattr(frontend, "permission_mode", "ask")
    return remembering(frontend.policy(), frontend.note, allow=mode != "deny")


async def _pick_first(
    client: ClientConnection, options: ChatOptions, frontend: Frontend, picking: Ask | None
) -> bool:
    """``--resume`` / ``--attach`` without an id: find the session; False when none."""
    if options.resume == "":
        options.resume = await _resume_which(client, options, frontend, picking)
        return options.resume is not None
    if picking is not None:
        from acp2.ui.watching import pick_session

        options.attach = await pick_session(client, frontend.note, picking)
        return options.attach is not None
    return True


async def _resume_which(
    client: ClientConnection, options: ChatOptions, frontend: Frontend, picking: Ask | None
) -> str | None:
    """``--resume`` without an id: on a terminal (``picking``), the session picked from
    this folder's list; else the newest of them (None when there is none)."""
    from acp2.errors import Acp2Error, LocalProtocolError
    from acp2.ui.session_list import choose_session, folder_of, newest_first

    cwd = None if options.url is not None else folder_of(options.cwd)
    try:
        found = await client.list_sessions(cwd=cwd)
    except Acp2Error as exc:  # e.g. an agent without session/list: say what works
        said = f"the agent cannot list its sessions ({exc}): give --resume SESSION_ID"
        raise LocalProtocolError(said) from exc
    if picking is not None:
        return await choose_session(found, lambda text: frontend.note(text.plain), picking)
    newest = newest_first(found)
    return str(newest[0].session_id) if newest else None


def _on_terminal(options: ChatOptions, stdin: TextIO, stdout: TextIO) -> bool:
    return options.interactive is not False and is_interactive(stdin, stdout)


def _reconnect(options: ChatOptions, link_status: Any) -> Any:
    """The reconnect policy of a chat over ``--url`` whose screen says "reconnecting" while
    it waits (the interactive chat's ``link_status``); None for the default."""
    if options.url is None or link_status is None:
        return None
    from acp2.transport.backoff import Backoff

    return Backoff(on_wait=link_status.waiting)


def _offer_mcp_servers(client: Any, options: ChatOptions, frontend: Frontend) -> None:
    """Pass ``--mcp`` / ``--mcp-config`` servers to the agent; say why any are left out."""
    if options.mcp_servers:
        for warning in client.use_mcp_servers(options.mcp_servers):
            frontend.note(sanitize.line(warning))


def _starting_text(options: ChatOptions) -> str:
    """``starting acp2 agent…`` / ``connecting to URL…``: said while ``initialize`` is
    pending, so a slow start is not a silent one."""
    from acp2.sanitize import line

    if options.url is not None:
        return line(f"connecting to {options.url}…")
    import shlex

    return line(f"starting {shlex.join(options.agent_command)}…")


def _say_how_to_log_in(client: ClientConnection, options: ChatOptions, frontend: Frontend) -> None:
    from acp2.errors import Acp2Error
    from acp2.ui.login import describe_methods, usable

    methods = usable(client.auth_methods)
    if not methods:
        return
    frontend.note("the agent needs a login; run acp2 chat on a terminal to log in with:")
    try:
        lines = describe_methods(methods, options.agent_command)
    except Acp2Error:  # a terminal method whose arguments were refused
        return
    for text in lines:
        frontend.note(text)


async def _open_session(client: ClientConnection, options: ChatOptions) -> ClientSession:
    if options.attach:
        return await client.attach(options.attach, role=options.role)
    if options.resume:
        return await client.resume(options.resume, replay=True)
    return await client.new_session()


async def _log_in(
    client: ClientConnection, options: ChatOptions, frontend: Frontend, asks: Ask
) -> LoginOutcome:
    from acp2.ui.login import offer_login

    return await offer_login(
        client, options.agent_command, ask=asks, note=frontend.note, cwd=options.cwd
    )


def _login_asker(options: ChatOptions, stdin: TextIO, stdout: TextIO) -> Ask | None:
    """How to ask which login to use: a line read from the terminal, before the chat's
    own input starts; None when the chat is not on a terminal (no login offered)."""
    interactive = options.interactive
    if interactive is None:
        interactive = is_interactive(stdin, stdout)
    if not interactive or options.url is not None:
        return None
    return _line_asker(stdin, stdout)


def _line_asker(stdin: TextIO, stdout: TextIO) -> Ask:
    """Ask a question on ``stdout`` and read the answer, a line of ``stdin`` (before the
    chat's own input starts)."""

    async def ask(question: str) -> str:
        import anyio

        def read() -> str:
            stdout.write(question)
            stdout.flush()
            return stdin.readline()

        return await anyio.to_thread.run_sync(read, abandon_on_cancel=True)

    return ask
