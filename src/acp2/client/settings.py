"""Lasting permission rules in settings files people can read and edit, and the policy
wrapper that applies them to every agent that asks (:func:`remembering`).

Two files, the same shape::

    {"permissions": {"allow": ["read(src/**)", "execute(make test)"],
                     "deny": ["execute(rm *)"]}}

* **user**: ``settings.json`` in ``$ACP2_CONFIG_DIR``, else ``$XDG_CONFIG_HOME/acp2``,
  else ``~/.config/acp2``; it applies in every folder.
* **project**: ``.acp2/settings.json`` in the session's folder.

A project file is untrusted input (a cloned repository can ship one). Its ``deny``
rules always apply (they can only ask less). Of its ``allow`` rules only those that
look inside the project apply on their own (``read`` / ``search`` / ``think`` with a
relative glob, :attr:`acp2.client.permission_rules.Rule.looks_only`); the others apply
once the user confirmed that file's exact content (:func:`trust_project`, ``/permissions
trust`` in the chat), recorded as a SHA-256 under ``trustedProjectSettings`` in the user
file. Any change to the project file (a ``git pull``) needs a new confirmation; a rule
the chat saves there is confirmed with it. Deny wins over allow; the rule syntax is
:mod:`acp2.client.permission_rules`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from acp2.client.permission_rules import Facts, Rule, facts_of, parse_rule
from acp2.errors import InvalidSettings

if TYPE_CHECKING:
    from acp2.client.permissions import Choice, PermissionPolicy, PermissionRequest
    from acp2.schema import PermissionOption

__all__ = [
    "Effect",
    "Entry",
    "Scope",
    "add_rule",
    "decide",
    "load_rules",
    "project_settings_path",
    "remembering",
    "remove_rule",
    "trust_project",
    "user_settings_path",
]

log = logging.getLogger("acp2.client")

Scope = Literal["user", "project"]
Effect = Literal["allow", "deny"]
#: A settings file larger than this is refused (a project file is untrusted input).
MAX_SETTINGS_BYTES: Final = 1 << 20
_TRUST_KEY: Final = "trustedProjectSettings"


@dataclass(frozen=True)
class Entry:
    """One rule as loaded: its ``effect``, ``scope`` and file; ``active`` is False for
    a project allow rule that waits for the user's confirmation; ``confined`` is True for
    an unconfirmed project rule, which also needs every path to stay inside the folder
    once symlinks are resolved (a cloned repository can ship ``docs/key -> ~/.ssh/...``)."""

    rule: Rule
    effect: Effect
    scope: Scope
    path: Path
    active: bool
    confined: bool = False


def user_settings_path() -> Path:
    """The user's settings file (it may not exist)."""
    base = os.environ.get("ACP2_CONFIG_DIR")
    if base:
        return Path(base) / "settings.json"
    xdg = os.environ.get("XDG_CONFIG_HOME")
    return (Path(xdg) if xdg else Path.home() / ".config") / "acp2" / "settings.json"


def project_settings_path(cwd: str) -> Path:
    """The project settings file of folder ``cwd`` (it may not exist)."""
    return Path(os.path.abspath(cwd)) / ".acp2" / "settings.json"


def _read(path: Path) -> tuple[dict[str, Any], bytes]:
    """The file's JSON object and bytes; ``({}, b"")`` when it does not exist.
    Raises InvalidSettings for an unreadable, oversized or non-object file."""
    try:
        with path.open("rb") as file:
            data = file.read(MAX_SETTINGS_BYTES + 1)
    except FileNotFoundError:
        return {}, b""
    except OSError as exc:
        raise InvalidSettings(f"{path}: {exc.strerror or exc}") from None
    if len(data) > MAX_SETTINGS_BYTES:
        raise InvalidSettings(f"{path}: larger than {MAX_SETTINGS_BYTES} bytes")
    try:
        value = json.loads(data) if data.strip() else {}
    except ValueError as exc:
        raise InvalidSettings(f"{path}: not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise InvalidSettings(f"{path}: not a JSON object")
    return value, data


def _rules(value: dict[str, Any], effect: Effect, path: Path, warn: list[str]) -> list[Rule]:
    permissions = value.get("permissions", {})
    listed = permissions.get(effect, []) if isinstance(permissions, dict) else []
    if not isinstance(listed, list):
        warn.append(f"{path}: permissions.{effect} is not a list")
        return []
    out = []
    for text in listed:
        try:
            out.append(parse_rule(text))
        except InvalidSettings as exc:
            warn.append(f"{path}: {exc}")
    return out


def load_rules(cwd: str | None) -> tuple[list[Entry], list[str]]:
    """The rules of the user file and of ``cwd``'s project file, and warnings about
    what could not be read (a bad file or rule is skipped, never fatal)."""
    warn: list[str] = []
    user_path = user_settings_path()
    try:
        user, _ = _read(user_path)
    except InvalidSettings as exc:
        user = {}
        warn.append(str(exc))
    entries = [
        Entry(rule, effect, "user", user_path, True)
        for effect in ("allow", "deny")
        for rule in _rules(user, effect, user_path, warn)
    ]
    if cwd is None:
        return entries, warn
    path = project_settings_path(cwd)
    try:
        project, data = _read(path)
    except InvalidSettings as exc:
        return entries, [*warn, str(exc)]
    trusted = bool(data) and _trusted(user).get(str(path)) == _digest(data)
    for effect in ("allow", "deny"):
        for rule in _rules(project, effect, path, warn):
            looks = effect == "allow" and not trusted and rule.looks_only
            active = effect == "deny" or trusted or looks
            entries.append(Entry(rule, effect, "project", path, active, confined=looks))
    return entries, warn


def _trusted(user: dict[str, Any]) -> dict[str, Any]:
    value = user.get(_TRUST_KEY)
    return value if isinstance(value, dict) else {}


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def decide(entries: list[Entry], facts: Facts, *, allow: bool = True) -> Entry | None:
    """The active rule that answers ``facts``: a deny rule first, else (with ``allow``)
    an allow rule; None when no rule applies (ask)."""
    for effect in ("deny", "allow") if allow else ("deny",):
        for entry in entries:
            if _applies(entry, effect, facts):
                return entry
    return None


def _applies(entry: Entry, effect: Effect, facts: Facts) -> bool:
    if not entry.active or entry.effect != effect or not entry.rule.matches(facts):
        return False
    return not entry.confined or _really_inside(facts)


def _really_inside(facts: Facts) -> bool:
    """True when every path of ``facts``, symlinks resolved, is inside its root."""
    if facts.root is None:
        return False
    root = os.path.realpath(facts.root)
    return all(os.path.commonpath([root, os.path.realpath(path)]) == root for path in facts.paths)


def _write(path: Path, value: dict[str, Any]) -> bytes:
    """Replace ``path`` with ``value`` as indented JSON, atomically; its bytes."""
    data = (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(prefix=".settings-", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    return data


def _edit(path: Path, change: Callable[[list[str]], list[str]], effect: Effect) -> bytes:
    value, _ = _read(path)
    permissions = value.setdefault("permissions", {})
    if not isinstance(permissions, dict):
        raise InvalidSettings(f"{path}: permissions is not an object")
    listed = permissions.get(effect, [])
    permissions[effect] = change(list(listed) if isinstance(listed, list) else [])
    return _write(path, value)


def add_rule(text: str, effect: Effect, scope: Scope, cwd: str) -> Path:
    """Save rule ``text`` in the ``scope`` file (a project file saved here is confirmed
    with it); the file written. Raises InvalidSettings for a malformed rule or file,
    OSError when it cannot be written."""
    rule = parse_rule(text)
    path = user_settings_path() if scope == "user" else project_settings_path(cwd)
    kept = _edit(
        path, lambda rules: [*rules, rule.text] if rule.text not in rules else rules, effect
    )
    if scope == "project":
        _trust(path, kept)
    return path


def remove_rule(entry: Entry, cwd: str) -> None:
    """Remove ``entry``'s rule from its file; a project file the user had confirmed
    stays confirmed (removing a rule grants nothing)."""
    was_trusted = entry.scope == "project" and _is_trusted(entry.path)
    kept = _edit(entry.path, lambda rules: [r for r in rules if r != entry.rule.text], entry.effect)
    if was_trusted:
        _trust(entry.path, kept)


def _is_trusted(path: Path) -> bool:
    user, _ = _read(user_settings_path())
    _, data = _read(path)
    return bool(data) and _trusted(user).get(str(path)) == _digest(data)


def trust_project(cwd: str) -> Path | None:
    """Confirm ``cwd``'s project file as it is now (all its rules apply until it
    changes); the file, or None when there is none."""
    path = project_settings_path(cwd)
    _, data = _read(path)
    if not data:
        return None
    _trust(path, data)
    return path


def _trust(path: Path, data: bytes) -> None:
    user_path = user_settings_path()
    user, _ = _read(user_path)
    trusted = dict(_trusted(user))
    trusted[str(path)] = _digest(data)
    user[_TRUST_KEY] = trusted
    _write(user_path, user)


def remembering(
    policy: PermissionPolicy, note: Callable[[str], None] | None = None, *, allow: bool = True
) -> PermissionPolicy:
    """``policy`` behind the saved rules: a request a rule answers is answered at once
    (``note`` is told which rule, for the user to see); any other is passed on. Without
    ``allow`` (a front end told to deny everything) only deny rules are used."""
    from acp2.client.permissions import is_unattended, run_policy, unattended

    async def ask(request: PermissionRequest) -> Choice:
        ruled, option = _answer(request, note, allow)
        if ruled:
            return option
        return await run_policy(policy, request)

    # A policy that asks nobody stays marked so (its answers lose to a person's elsewhere).
    return unattended(ask) if is_unattended(policy) else ask


def _answer(
    request: PermissionRequest, note: Callable[[str], None] | None, allow: bool
) -> tuple[bool, PermissionOption | None]:
    """Whether a saved rule answers ``request``, and the option it picks: a deny rule
    whose reject option is not offered declines (None); an allow rule whose allow option
    is not offered leaves the request to the policy."""
    from acp2 import sanitize

    facts = facts_of(request)
    if facts.kind is None:
        return False, None
    entries, warnings = load_rules(facts.root)
    for warning in warnings:
        log.warning("%s", warning)
    entry = decide(entries, facts, allow=allow)
    if entry is None:
        return False, None
    kinds = (
        ("reject_once", "reject_always")
        if entry.effect == "deny"
        else ("allow_once", "allow_always")
    )
    option = request.option_of_kind(*kinds)
    if option is None and entry.effect == "allow":
        return False, None
    if note is not None:
        verb = "rejected" if entry.effect == "deny" else "allowed"
        rule = f"{entry.rule.text} ({entry.scope} settings)"
        said = f"permission: {request.title} → {verb} by rule {rule}"
        note(sanitize.line(said))
    return True, option
