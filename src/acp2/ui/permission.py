"""Permission requests for people: described in plain text and answered from typed text
(the rich panel is :func:`acp2.ui.blocks.permission_block`; this module needs no rich).

The user sees the request's title, description, the command or tool call it is about
(with its diff), and the options as a numbered list. :func:`parse_choice` reads an
answer: an option number, or ``y`` / ``a`` / ``n`` for the first allow-once,
allow-always and reject option.
"""

from __future__ import annotations

from typing import Final

from acp2.client import PermissionRequest
from acp2.schema import PermissionOption
from acp2.ui import describe

__all__ = [
    "INVALID",
    "choice_hint",
    "choice_text",
    "parse_choice",
    "request_text",
]

#: What :func:`parse_choice` returns for an answer it does not understand.
INVALID: Final = "invalid"

_SHORTCUTS: Final[dict[str, tuple[str, ...]]] = {
    "y": ("allow_once", "allow_always"),
    "yes": ("allow_once", "allow_always"),
    "a": ("allow_always",),
    "always": ("allow_always",),
    "n": ("reject_once", "reject_always"),
    "no": ("reject_once", "reject_always"),
}


def request_text(request: PermissionRequest) -> str:
    """The request as plain lines: title, description, subject, ``[1] Allow once``..."""
    lines = [f"[permission] {request.title}"]
    if request.description:
        lines.append(f"  {request.description}")
    if request.command is not None:
        lines.append(f"  $ {request.command.command}   (in {request.command.cwd})")
    call = request.tool_call
    if call is not None:
        lines.append(f"  [{call.kind}] {describe.tool_title(call)}")
    for number, option in enumerate(request.options, 1):
        lines.append(f"  [{number}] {option.name} ({option.kind})")
    return "\n".join(lines)


def choice_hint(request: PermissionRequest) -> str:
    """What the user may type: ``1-3, y/n``."""
    count = len(request.options)
    numbers = "1" if count == 1 else f"1-{count}"
    kinds = {str(option.kind) for option in request.options}
    letters = [k for k, wanted in (("y", "allow_once"), ("a", "allow_always")) if wanted in kinds]
    if kinds & {"reject_once", "reject_always"}:
        letters.append("n")
    return numbers + (f", {'/'.join(letters)}" if letters else "")


def parse_choice(request: PermissionRequest, answer: str) -> PermissionOption | str:
    """The option an answer picks, or :data:`INVALID`.

    A number picks that option; ``y``/``yes``, ``a``/``always``, ``n``/``no`` pick the
    first offered option of the matching kind.
    """
    word = answer.strip().lower()
    options = request.options
    if word.isdigit() and 1 <= int(word) <= len(options):
        return options[int(word) - 1]
    kinds = _SHORTCUTS.get(word)
    if kinds is not None:
        option = request.option_of_kind(*kinds)
        if option is not None:
            return option
    return INVALID


def choice_text(option: PermissionOption | None) -> str:
    """``allowed: Allow once`` / ``rejected: Reject`` / ``declined``."""
    if option is None:
        return "declined"
    kind = str(option.kind)
    verb = (
        "allowed"
        if kind.startswith("allow")
        else "rejected"
        if kind.startswith("reject")
        else "chose"
    )
    return f"{verb}: {option.name}"
