"""Lasting permission rules: what a permission request is about, and whether a rule
answers it without asking (the files that hold rules are :mod:`acp2.client.settings`).

A rule is a string a person can read and write:

* ``KIND`` -- every request about a tool call of that kind (``read``, ``edit``,
  ``delete``, ``move``, ``search``, ``execute``, ``think``, ``fetch``, ``other``, or
  ``*`` for any kind);
* ``execute(COMMAND)`` -- running exactly ``COMMAND``; ``execute(PREFIX *)`` -- any
  command that is ``PREFIX`` or starts with ``PREFIX`` and a space;
* ``KIND(GLOB)`` -- a tool call of that kind whose every location matches ``GLOB``
  (``*`` within one folder, ``**`` across folders; relative globs are relative to the
  session's folder and never match a path outside it).

Safety: a command that holds shell control characters (``; & | ` $ < > ( )``, a
newline) never matches a command rule, so ``execute(git status *)`` cannot approve
``git status; rm -rf ~``. A request that runs a command is matched as ``execute``
whatever its tool kind. A request with no tool call and no command matches nothing.
Rules are a convenience for honest agents: an agent that does not ask is not stopped.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from acp2.errors import InvalidSettings

if TYPE_CHECKING:
    from acp2.client.permissions import PermissionRequest

__all__ = ["KINDS", "READ_KINDS", "Facts", "Rule", "facts_of", "parse_rule", "rule_for"]

#: The tool kinds a rule may name (``*`` names all).
KINDS: Final = frozenset(
    {"read", "edit", "delete", "move", "search", "execute", "think", "fetch", "other", "*"}
)
#: Kinds that only look: the ones a project's own settings file may allow unconfirmed.
READ_KINDS: Final = frozenset({"read", "search", "think"})

_RULE = re.compile(r"^\s*([a-z*]+)\s*(?:\((.*)\))?\s*$", re.DOTALL)
#: Characters that let one command line run another (or expand to anything).
_SHELL_CONTROL = re.compile(r"[;&|`$<>()\n\r]")


@dataclass(frozen=True)
class Facts:
    """What a request is about: the tool ``kind``, the ``commands`` it runs (exact,
    unsanitized), the absolute ``paths`` it touches and the session's ``root`` folder."""

    kind: str | None
    commands: tuple[str, ...]
    paths: tuple[str, ...]
    root: str | None


@dataclass(frozen=True)
class Rule:
    """A parsed rule: ``kind`` and an optional ``pattern``; ``text`` as written."""

    kind: str
    pattern: str | None
    text: str

    def matches(self, facts: Facts) -> bool:
        """True when this rule covers every command or path of ``facts``."""
        if facts.kind is None or (self.kind != "*" and self.kind != facts.kind):
            return False
        if self.pattern is None:
            return True
        if facts.kind == "execute":
            return bool(facts.commands) and all(self._command(c) for c in facts.commands)
        return bool(facts.paths) and all(self._path(p, facts.root) for p in facts.paths)

    def _command(self, command: str) -> bool:
        pattern = self.pattern or ""
        line = " ".join(command.split())
        if _SHELL_CONTROL.search(command):
            return False
        if pattern.endswith(" *"):
            prefix = pattern[:-2].strip()
            return line == prefix or line.startswith(prefix + " ")
        return line == " ".join(pattern.split())

    def _path(self, path: str, root: str | None) -> bool:
        return path_matches(self.pattern or "", path, root)

    @property
    def looks_only(self) -> bool:
        """True for a rule that can only approve looking inside the project: a read kind
        with a relative glob that stays inside the folder."""
        pattern = self.pattern
        return (
            self.kind in READ_KINDS
            and pattern is not None
            and not os.path.isabs(pattern)
            and ".." not in pattern.split("/")
            and not pattern.startswith("~")
        )


def parse_rule(text: str) -> Rule:
    """Parse one rule (see the module doc); raises InvalidSettings for a malformed one."""
    found = _RULE.match(text) if isinstance(text, str) else None
    if found is None or found.group(1) not in KINDS:
        raise InvalidSettings(f"not a permission rule: {text!r} (e.g. read, execute(make test))")
    pattern = found.group(2)
    if pattern is not None and not pattern.strip():
        raise InvalidSettings(f"empty pattern in permission rule {text!r}")
    return Rule(found.group(1), None if pattern is None else pattern.strip(), text.strip())


def path_matches(pattern: str, path: str, root: str | None) -> bool:
    """True when absolute ``path`` (normalised) matches glob ``pattern``; a relative
    pattern is relative to ``root`` and never matches a path outside it."""
    path = os.path.normpath(path)
    if not os.path.isabs(pattern):
        if root is None:
            return False
        base = os.path.normpath(root)
        relative = os.path.relpath(path, base) if os.path.isabs(path) else path
        if relative == ".." or relative.startswith("../"):
            return False
        path = relative
    return _glob(os.path.normpath(pattern)).fullmatch(path) is not None


def _glob(pattern: str) -> re.Pattern[str]:
    out = []
    for part in re.split(r"(\*\*/?|\*|\?)", pattern):
        if part in ("**", "**/"):
            out.append("(?:.*/)?" if part == "**/" else ".*")
        elif part == "*":
            out.append("[^/]*")
        elif part == "?":
            out.append("[^/]")
        else:
            out.append(re.escape(part))
    return re.compile("".join(out), re.DOTALL)


def facts_of(request: PermissionRequest) -> Facts:
    """What ``request`` is about (see :class:`Facts`)."""
    from acp2.client import describe

    call = request.tool_call
    commands = []
    if request.command is not None:
        commands.append(request.command.command)
    elif call is not None:
        command = describe.raw_command(call.raw_input)
        if command is not None:
            commands.append(command)
    if call is not None:
        terms = describe.terminals_of(call, request.session.state)
        commands += [t.command for t in terms if isinstance(t.command, str) and t.command]
    kind = "execute" if commands else (None if call is None else str(call.kind))
    paths = () if call is None else tuple(_paths(call.locations))
    root = getattr(request.session, "cwd", None)
    return Facts(
        kind, tuple(dict.fromkeys(commands)), paths, root if isinstance(root, str) else None
    )


def _paths(locations: Iterable[Any]) -> Iterable[str]:
    for location in locations:
        path = getattr(location, "path", None)
        if isinstance(path, str) and os.path.isabs(path):
            yield path


def rule_for(facts: Facts, *, relative: bool = True) -> str | None:
    """The narrowest rule that covers ``facts``: the exact command(s) (one rule only when
    there is one command), else the kind with its one path (relative inside the folder,
    unless ``relative`` is False: a rule for every folder names the one file), else the
    bare kind; None for a request about nothing nameable."""
    if facts.kind is None:
        return None
    if facts.kind == "execute":
        if len(facts.commands) != 1 or _SHELL_CONTROL.search(facts.commands[0]):
            return None
        return f"execute({' '.join(facts.commands[0].split())})"
    if len(facts.paths) == 1:
        path = os.path.normpath(facts.paths[0])
        if facts.root is not None and relative:
            inside = os.path.relpath(path, os.path.normpath(facts.root))
            if not inside.startswith(".."):
                path = inside
        return f"{facts.kind}({path})"
    return facts.kind
