"""Saving an "always" answer as a lasting rule (:mod:`acp2.client.settings`).

After the chat's permission box was answered with *Always allow* (or *Always reject*),
one more key says where the rule goes: ``p`` this project's ``.acp2/settings.json``,
``u`` the user's settings (every folder), Enter or Esc nowhere (the agent alone
remembers it, for as long as it does). The rule is the narrowest one that covers the
request (:func:`acp2.client.permission_rules.rule_for`): the exact command, or the kind
and its one path (relative to the project in the project's file, absolute in the
user's).
"""

from __future__ import annotations

from typing import Final

from prompt_toolkit.application import Application
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.layout import Layout, Window
from prompt_toolkit.layout.controls import FormattedTextControl
from prompt_toolkit.output import Output

from acp2 import sanitize
from acp2.client import PermissionRequest
from acp2.client.permission_rules import facts_of, rule_for
from acp2.client.settings import Effect, Scope, add_rule
from acp2.errors import InvalidSettings
from acp2.schema import PermissionOption

__all__ = ["SCOPE_KEYS", "offer_to_remember", "read_scope"]

#: The keys of the question and the settings file each picks.
SCOPE_KEYS: Final[dict[str, Scope]] = {"p": "project", "u": "user"}


async def read_scope(rule: str, output: Output | None = None) -> Scope | None:
    """Ask with one key where ``rule`` is saved; None for nowhere (Enter, Esc, Ctrl-C).
    ``output`` defaults to stdout."""
    keys = KeyBindings()
    for key, scope in SCOPE_KEYS.items():
        keys.add(key)(lambda event, scope=scope: event.app.exit(result=scope))
    for key in ("enter", "escape", "c-c", "c-d", "n"):
        keys.add(key, eager=True)(lambda event: event.app.exit(result=None))
    text: StyleAndTextTuples = [
        ("bold", f"remember {sanitize.line(rule)}? "),
        ("reverse bold", " p "),
        ("", " this project  "),
        ("reverse bold", " u "),
        ("", " all my folders  "),
        ("reverse bold", " enter "),
        ("", " no"),
    ]
    app: Application[Scope | None] = Application(
        layout=Layout(Window(FormattedTextControl(text, show_cursor=False), wrap_lines=True)),
        key_bindings=keys,
        erase_when_done=True,
        output=output,
    )
    return await app.run_async(handle_sigint=False)


async def offer_to_remember(
    request: PermissionRequest, option: PermissionOption | None, output: Output | None = None
) -> str | None:
    """After an "always" answer, ask where to save its rule and save it; the line to
    show (what was saved where, or why not), or None when nothing was asked."""
    kind = None if option is None else str(option.kind)
    if kind not in ("allow_always", "reject_always"):
        return None
    facts = facts_of(request)
    rule = rule_for(facts)
    if rule is None or facts.root is None:
        return None
    scope = await read_scope(rule, output)
    if scope is None:
        return None
    effect: Effect = "allow" if kind == "allow_always" else "deny"
    if scope == "user":  # every folder: a path names this one file, not its namesakes
        rule = rule_for(facts, relative=False) or rule
    try:
        path = add_rule(rule, effect, scope, facts.root)
    except (InvalidSettings, OSError) as exc:
        return sanitize.line(f"not saved: {exc}")
    return sanitize.line(f"saved {effect} {rule} in {path} (/permissions lists the rules)")
