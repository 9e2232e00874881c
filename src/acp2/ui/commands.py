"""The chat's own slash commands, and how a typed line is told apart from a prompt.

Pure (no IO): :func:`parse_line` decides what a line is, :func:`completions` lists what
``/`` offers, :func:`help_rows` what ``/help`` shows.

Names: a built-in wins over an agent command of the same name. The agent's is then
reached as ``//name`` (``//name args`` is sent to the agent as ``/name args``) and is
listed that way, marked ``(agent)``. A ``/word`` that is neither a built-in nor an agent
command is refused locally (``unknown``) instead of being sent as a prompt, unless it
looks like a path (``/usr/bin/env is missing``); ``//word`` always goes to the agent.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "BUILTINS",
    "NO_RESUME",
    "V1_NO_RESUME",
    "Builtin",
    "Completion",
    "Parsed",
    "agent_commands",
    "completions",
    "first_line",
    "forgets_sessions",
    "help_detail",
    "help_rows",
    "no_resume_reason",
    "parse_line",
    "resume_command",
]


@dataclass(frozen=True)
class Builtin:
    """A built-in command: ``name`` (no ``/``), its argument ``hint`` and ``description``;
    ``needs`` names a config option category (``model`` / ``mode``) it requires."""

    name: str
    description: str
    hint: str | None = None
    needs: str | None = None


#: The chat's own commands, in the order ``/help`` lists them.
BUILTINS: Final[tuple[Builtin, ...]] = (
    Builtin("help", "list the commands and keys"),
    Builtin("clear", "start a new session (this one can be resumed)"),
    Builtin("sessions", "list this folder's sessions (title, age) and pick one to resume"),
    Builtin("resume", "resume a session by id; without one, pick from the list", hint="[ID]"),
    Builtin("cancel", "cancel the running work"),
    Builtin("bg", "list the work running in the background"),
    Builtin("cancel-bg", "cancel one background item (numbered by /bg)", hint="N"),
    Builtin(
        "permissions", "saved permission rules: list, remove N, trust", hint="[remove N|trust]"
    ),
    Builtin("subagents", "list the subagents (child sessions) of this session"),
    Builtin("subagent", "expand one subagent's transcript (numbered by /subagents)", hint="N"),
    Builtin("cancel-subagent", "cancel one subagent's work (numbered by /subagents)", hint="N"),
    Builtin("model", "show or choose the model", hint="[MODEL]", needs="model"),
    Builtin("mode", "show or choose the mode", hint="[MODE]", needs="mode"),
    Builtin("cost", "context tokens used and the session's cost"),
    Builtin("info", "this session's id, folder and role; how to watch it from elsewhere"),
    Builtin("fork", "go on in a copy of this session (this one stays as it is)"),
    Builtin("title", "show the session's title, or set it", hint="[NEW]"),
    Builtin("steer", "while the agent works: tell it more, read at its next step", hint="TEXT"),
    Builtin("quit", "leave the chat (prints how to resume)"),
)

_BY_NAME: Final = {command.name: command for command in BUILTINS}


@dataclass(frozen=True)
class Parsed:
    """What a typed line is. ``kind``: ``prompt`` (send ``text`` to the agent),
    ``builtin`` (run ``name`` with ``arg``), ``unknown`` (``/name`` is no command)."""

    kind: str
    text: str = ""
    name: str = ""
    arg: str = ""


@dataclass(frozen=True)
class Completion:
    """One ``/`` completion: the ``text`` inserted, how it is ``shown``, its ``meta``."""

    text: str
    shown: str
    meta: str


def agent_commands(commands: Iterable[Any]) -> list[tuple[str, str, str | None]]:
    """``(name, description, hint)`` of each well-formed agent command."""
    out: list[tuple[str, str, str | None]] = []
    for command in commands:
        name = getattr(command, "name", None)
        if not isinstance(name, str) or not name or any(c.isspace() for c in name):
            continue
        description = getattr(command, "description", "")
        hint = getattr(getattr(command, "input", None), "hint", None)
        out.append((name, description if isinstance(description, str) else "", _str_or_none(hint)))
    return out


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def parse_line(text: str, agent_names: Sequence[str]) -> Parsed:
    """Classify one typed line (already stripped)."""
    if text.startswith("//"):
        return Parsed("prompt", text=text[1:])
    if not text.startswith("/") or text == "/":
        return Parsed("prompt", text=text)
    word, _, arg = text[1:].partition(" ")
    if "\n" in word:
        word, _, rest = word.partition("\n")
        arg = f"{rest}\n{arg}".strip() if arg else rest
    if word in _BY_NAME:
        return Parsed("builtin", name=word, arg=arg.strip())
    if word in agent_names or "/" in word:  # an agent command, or a path: a prompt
        return Parsed("prompt", text=text)
    return Parsed("unknown", name=word)


def available(builtin: Builtin, categories: Iterable[str]) -> bool:
    """Whether ``builtin`` applies (``/model`` needs a ``model`` config option...)."""
    return builtin.needs is None or builtin.needs in set(categories)


def completions(typed: str, commands: Iterable[Any], categories: Iterable[str]) -> list[Completion]:
    """The completions of ``typed`` (``/``, ``/he``, ``//de``...): built-ins first, then
    the agent's commands (one whose name a built-in takes as ``//name``)."""
    cats = set(categories)
    out = [
        Completion(f"/{b.name}" + (" " if b.hint else ""), f"/{b.name}", b.description)
        for b in BUILTINS
        if available(b, cats)
    ]
    for name, description, hint in agent_commands(commands):
        shadowed = name in _BY_NAME
        shown = f"//{name}" if shadowed else f"/{name}"
        meta = f"{description} [{hint}]" if hint else description
        text = shown + (" " if hint is not None else "")
        out.append(Completion(text, shown, f"(agent) {meta}" if shadowed else meta))
    return [c for c in out if c.shown.startswith(typed)]


def help_rows(commands: Iterable[Any], categories: Iterable[str]) -> list[tuple[str, str]]:
    """``(usage, description)`` rows of ``/help``: built-ins, then the agent's commands."""
    cats = set(categories)
    rows = [
        (f"/{b.name}" + (f" {b.hint}" if b.hint else ""), b.description)
        for b in BUILTINS
        if available(b, cats)
    ]
    for name, description, hint in agent_commands(commands):
        slash = "//" if name in _BY_NAME else "/"
        usage = f"{slash}{name}" + (f" {hint}" if hint else "")
        rows.append((usage, f"(agent) {first_line(description)}"))
    return rows


def first_line(text: str, limit: int = 72) -> str:
    """The first line of ``text`` cut to ``limit`` characters (``…`` when cut): an
    agent's command description in ``/help``, which may be pages long (skills)."""
    lines = text.strip().splitlines()
    line = lines[0].strip() if lines else ""
    more = len(lines) > 1 or len(line) > limit
    return (line[: limit - 1] + "…") if len(line) > limit else line + (" …" if more else "")


def help_detail(name: str, commands: Iterable[Any]) -> list[str] | None:
    """``/help NAME``: the usage and whole description of the built-in or agent command
    ``NAME`` (``/`` or ``//`` prefixes allowed), None when there is none."""
    bare = name.lstrip("/")
    agent = {n: (d, h) for n, d, h in agent_commands(commands)}
    builtin = _BY_NAME.get(bare) if not name.startswith("//") else None
    if builtin is not None:
        usage = f"/{bare}" + (f" {builtin.hint}" if builtin.hint else "")
        return [usage, builtin.description]
    if bare not in agent:
        return None
    description, hint = agent[bare]
    slash = "//" if bare in _BY_NAME else "/"
    return [f"{slash}{bare}" + (f" {hint}" if hint else "") + "  (agent)", description]


def resume_command(session_id: str, agent_command: Sequence[str], *, cwd: str | None = None) -> str:
    """The shell command that resumes ``session_id`` (``--cwd`` when given), quoted."""
    import shlex

    args = ["acp2", "chat", "--resume", session_id]
    if cwd is not None:
        args += ["--cwd", cwd]
    return shlex.join([*args, "--", *agent_command])


#: Said on leaving instead of a resume command that would fail with "Unknown session".
NO_RESUME: Final = (
    "no resume command: this agent keeps its sessions in memory only, so this one ended "
    "with it (an acp2 agent keeps them with --store FILE)"
)


#: Said on leaving instead of a resume command a bridged v1 agent cannot serve.
V1_NO_RESUME: Final = (
    "no resume command: this ACP v1 agent advertises neither loadSession nor "
    "sessionCapabilities.resume, so this session cannot be resumed"
)


def no_resume_reason(session: Any) -> str | None:
    """Why a resume command for ``session`` (a ``ClientSession``) would fail: its agent
    keeps sessions in memory only (:data:`NO_RESUME`), or is a v1 agent that cannot
    resume (:data:`V1_NO_RESUME`); None when it may work."""
    from acp2.compat.v1.handshake import refused_by_bridge
    from acp2.schema.methods import SESSION_RESUME

    if forgets_sessions(session):
        return NO_RESUME
    capabilities = getattr(session.env.agent_capabilities, "session", None)
    return V1_NO_RESUME if refused_by_bridge(capabilities, SESSION_RESUME.name) else None


def forgets_sessions(session: Any) -> bool:
    """True when the agent of ``session`` (a ``ClientSession``) said its sessions end
    with its process (:func:`acp2.schema.extensions.keeps_sessions_in_memory`)."""
    from acp2.schema.extensions import keeps_sessions_in_memory

    capabilities = getattr(session.env.agent_capabilities, "session", None)
    return keeps_sessions_in_memory(capabilities)
