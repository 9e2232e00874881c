"""``/permissions`` in the chat: the saved permission rules, numbered, and removing or
confirming them (the files and their trust are :mod:`acp2.client.settings`).

``/permissions`` lists every rule of the user file and of this folder's project file,
with its effect and file; a project allow rule that waits for the user's confirmation
is marked ``(not confirmed)``. ``/permissions remove N`` removes rule ``N``;
``/permissions trust`` confirms the project file as it is now.
"""

from __future__ import annotations

from rich.text import Text

from acp2 import sanitize
from acp2.client.settings import (
    Entry,
    load_rules,
    project_settings_path,
    remove_rule,
    trust_project,
    user_settings_path,
)
from acp2.errors import InvalidSettings

__all__ = ["USAGE", "listing", "run"]

#: Said for an argument ``/permissions`` does not take.
USAGE = "usage: /permissions [remove N | trust]"


def listing(cwd: str) -> list[Text]:
    """The lines of ``/permissions``: each rule numbered, then where the files are."""
    entries, warnings = load_rules(cwd)
    out = [Text(sanitize.line(w), style="yellow") for w in warnings]
    if not entries:
        out.append(Text("no saved permission rules", style="dim"))
    for number, entry in enumerate(entries, 1):
        out.append(_row(number, entry))
    if any(not e.active for e in entries):
        out.append(Text("/permissions trust confirms this project's file as it is", style="dim"))
    out.append(Text(sanitize.line(f"user settings: {user_settings_path()}"), style="dim"))
    out.append(Text(sanitize.line(f"project settings: {project_settings_path(cwd)}"), style="dim"))
    return out


def _row(number: int, entry: Entry) -> Text:
    colour = "green" if entry.effect == "allow" else "red"
    line = Text(f" {number:>2} ", style="bold")
    line.append(f"{entry.effect:<6}", style=colour)
    line.append(sanitize.line(entry.rule.text), style="cyan")  # a project file's text
    line.append(f"  ({entry.scope})", style="dim")
    if not entry.active:
        line.append("  (not confirmed)", style="yellow")
    return line


def run(cwd: str, arg: str) -> list[Text]:
    """Run ``/permissions ARG`` in folder ``cwd``; the lines to show."""
    word, _, rest = arg.strip().partition(" ")
    try:
        if not word:
            return listing(cwd)
        if word == "trust":
            path = trust_project(cwd)
            said = f"confirmed {path}" if path else "this folder has no project settings file"
            return [Text(sanitize.line(said))]
        if word == "remove":
            return _remove(cwd, rest.strip())
    except (InvalidSettings, OSError) as exc:
        return [Text(sanitize.line(f"/permissions: {exc}"), style="red")]
    return [Text(USAGE, style="yellow")]


def _remove(cwd: str, number: str) -> list[Text]:
    entries, _ = load_rules(cwd)
    if not number.isdigit() or not 1 <= int(number) <= len(entries):
        return [Text(f"no rule {number!r}: /permissions lists them", style="yellow")]
    entry = entries[int(number) - 1]
    remove_rule(entry, cwd)
    said = f"removed {entry.effect} {entry.rule.text} from {entry.path}"
    return [Text(sanitize.line(said))]
