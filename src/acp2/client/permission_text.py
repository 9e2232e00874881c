"""Permission requests for people: what is asked, described in plain text, and answered
from a key or typed text (the rich panel is :func:`acp2.ui.blocks.permission_block`; the
one-key reader is :mod:`acp2.ui.asking`; this module needs no rich).

:func:`asked` turns a request into what a person must see, every string sanitized:
the agent's title and description, **what will run** (the command of a ``command``
subject, else the ``command`` of the tool call's raw input, else its terminals' commands),
the diffs of the tool call, its raw input in one line (and in full, on request), and a
warning when the title does not mention the command that will run. Options get human
labels from their kind (``Allow once``, ``Always allow``, ``Reject``, ``Always reject``)
and keys: ``y`` / ``a`` / ``n`` for the first allow-once, allow-always and reject option,
and a number for every option.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

from acp2 import sanitize
from acp2.client import PermissionRequest, describe
from acp2.schema import Diff, PermissionOption

__all__ = [
    "INVALID",
    "Asked",
    "Offer",
    "asked",
    "choice_hint",
    "choice_text",
    "offers_of",
    "parse_choice",
    "raw_input_text",
    "request_text",
]

#: What :func:`parse_choice` returns for an answer it does not understand.
INVALID: Final = "invalid"
#: Characters of the one-line raw input shown before it is cut (the full text on request).
RAW_INPUT_CHARS: Final = 240

_LABELS: Final = {
    "allow_once": "Allow once",
    "allow_always": "Always allow",
    "reject_once": "Reject",
    "reject_always": "Always reject",
}
#: Names an agent may give an option without it being worth repeating next to the label.
_SAME: Final = {"allow_once": {"allow", "yes"}, "reject_once": {"reject", "deny", "no"}}
_KEYS: Final = (
    ("y", ("allow_once",)),
    ("a", ("allow_always",)),
    ("n", ("reject_once", "reject_always")),
)
_WORDS: Final = {"yes": "y", "always": "a", "no": "n"}


@dataclass(frozen=True)
class Offer:
    """One option as shown: its ``key`` (``y``/``a``/``n`` or its number), the human
    ``label`` of its kind, and the agent's own ``name`` when it says something else."""

    number: int
    key: str
    label: str
    agent_name: str | None
    option: PermissionOption

    @property
    def allows(self) -> bool:
        """True for an allow option."""
        return str(self.option.kind).startswith("allow")

    @property
    def rejects(self) -> bool:
        """True for a reject option."""
        return str(self.option.kind).startswith("reject")


@dataclass(frozen=True)
class Asked:
    """What a permission request asks, ready to show (every string sanitized)."""

    title: str
    description: str | None
    #: What will run: ``(command, cwd)`` pairs, shown exactly.
    commands: list[tuple[str, str | None]]
    diffs: list[Diff]
    root: str | None
    raw_input: str | None
    raw_input_full: str | None
    #: True when a command will run that the title does not mention.
    mismatch: bool
    offers: list[Offer]
    tool_call_id: str | None

    @property
    def hint(self) -> str:
        """The keys, e.g. ``y/a/n, 1-4``."""
        letters = [o.key for o in self.offers if not o.key.isdigit()]
        count = len(self.offers)
        numbers = "1" if count == 1 else f"1-{count}"
        return "/".join(letters) + (", " if letters else "") + numbers


def asked(request: PermissionRequest) -> Asked:
    """Describe ``request`` for a person (see the module doc)."""
    call = request.tool_call
    root = getattr(request.session, "cwd", None)
    commands = _commands(request)
    title = sanitize.line(request.title)
    raw = None if call is None else call.raw_input
    # Raw input that only repeats the title and the command shown is left for "i" (full).
    said = (
        None
        if raw is None or _repeats(raw, [title, *(c for pair in commands for c in pair)])
        else raw
    )
    return Asked(
        title=title,
        description=sanitize.prose(request.description) if request.description else None,
        commands=commands,
        diffs=[] if call is None else [i for i in call.content if isinstance(i, Diff)],
        root=root if isinstance(root, str) else None,
        raw_input=None if said is None else raw_input_text(said, limit=RAW_INPUT_CHARS),
        raw_input_full=None if raw is None else raw_input_text(raw, indent=True),
        mismatch=any(_squash(command) not in _squash(title) for command, _ in commands),
        offers=offers_of(request.options),
        tool_call_id=None if call is None else call.tool_call_id,
    )


def _commands(request: PermissionRequest) -> list[tuple[str, str | None]]:
    found: list[tuple[str, str | None]] = []
    subject = request.command
    if subject is not None:
        found.append((sanitize.exact(subject.command), sanitize.line(subject.cwd)))
    call = request.tool_call
    if call is None:
        return found
    if not found:
        command = describe.raw_command(call.raw_input)
        if command is not None:
            found.append((sanitize.exact(command), None))
    for term in describe.terminals_of(call, request.session.state):
        shown = sanitize.exact(term.command or "")
        if shown and all(shown != known for known, _ in found):
            found.append((shown, sanitize.line(term.cwd) if isinstance(term.cwd, str) else None))
    return found


def _squash(text: str) -> str:
    return " ".join(text.split())


def _repeats(raw: Any, shown: list[str | None]) -> bool:
    """True when ``raw`` is an object whose every value is text already in ``shown``
    (e.g. ``{"command": "make test"}`` under ``$ make test``): nothing new to read."""
    if not isinstance(raw, dict) or not raw:
        return False
    known = _squash(" ".join(sanitize.exact(text) for text in shown if text))
    values = list(raw.values())
    return all(isinstance(v, str) and _squash(sanitize.exact(v)) in known for v in values)


def raw_input_text(raw: Any, *, limit: int | None = None, indent: bool = False) -> str:
    """The tool call's raw input as JSON, shown exactly; cut to ``limit`` characters
    (with ``…``) when given, on several lines with ``indent``."""
    try:
        text = json.dumps(raw, ensure_ascii=False, indent=2 if indent else None)
    except (TypeError, ValueError):
        text = repr(raw)
    if limit is not None and len(text) > limit:
        kept = limit - len(f"… (+{len(text)} characters)")
        text = text[: max(0, kept)] + f"… (+{len(text) - max(0, kept)} characters)"
    return sanitize.exact(text) if indent else sanitize.line(text)


def offers_of(options: list[PermissionOption]) -> list[Offer]:
    """The options as shown: human labels by kind, ``y`` / ``a`` / ``n`` for the first
    allow-once, allow-always and reject option, numbers for the others."""
    keyed: dict[int, str] = {}
    for key, kinds in _KEYS:
        for kind in kinds:
            index = next((i for i, o in enumerate(options) if o.kind == kind), None)
            if index is not None and index not in keyed:
                keyed[index] = key
                break
    offers = []
    for index, option in enumerate(options):
        kind = str(option.kind)
        name = sanitize.line(option.name)
        label = _LABELS.get(kind, name)
        said = _squash(name).lower()
        differs = kind in _LABELS and said != label.lower() and said not in _SAME.get(kind, ())
        offers.append(
            Offer(
                number=index + 1,
                key=keyed.get(index, str(index + 1)),
                label=label if kind in _LABELS else f"{name} ({sanitize.line(kind)})",
                agent_name=name if differs else None,
                option=option,
            )
        )
    return offers


def request_text(request: PermissionRequest, *, offers: bool = True) -> str:
    """The request as plain lines (the transcript and ``acp2 run``)::

    [permission] Run `make test` with a timeout?
      $ make test   (in /work)
      raw input: {"command": "make test", "timeout": 60}
      [y] Allow once  [a] Always allow  [n] Reject  [4] Always reject

    The raw input line is left out when it only repeats the title and the command;
    ``offers=False`` leaves out the options line (a one-key chooser lists them)."""
    shown = asked(request)
    lines = [f"[permission] {shown.title}"]
    if shown.description:
        lines.extend("  " + part for part in shown.description.split("\n"))
    if shown.mismatch:
        lines.append("  ! the title does not match the command that will run:")
    for command, cwd in shown.commands:
        lines.append(_command_line(command, cwd, "  "))
    for diff in shown.diffs:
        patch = describe.diff_patch(diff, shown.root)
        body = patch.rstrip("\n") if patch else "\n".join(describe.diff_changes(diff, shown.root))
        lines.extend("    " + part for part in body.split("\n"))
    if shown.raw_input is not None:
        lines.append(f"  raw input: {shown.raw_input}")
    if offers:
        lines.append("  " + "  ".join(_offer_text(offer) for offer in shown.offers))
    return "\n".join(lines)


def _command_line(command: str, cwd: str | None, indent: str) -> str:
    where = f"   (in {cwd})" if cwd else ""
    return indent + "$ " + command.replace("\n", "\n" + indent + "  ") + where


def _offer_text(offer: Offer) -> str:
    said = f' ("{offer.agent_name}")' if offer.agent_name else ""
    return f"[{offer.key}] {offer.label}{said}"


def choice_hint(request: PermissionRequest) -> str:
    """What the user may type: ``y/a/n, 1-4``."""
    return asked(request).hint


def parse_choice(request: PermissionRequest, answer: str) -> PermissionOption | str:
    """The option an answer picks, or :data:`INVALID`.

    A number picks that option; ``y``/``yes`` the first allow-once option, ``a``/``always``
    the first allow-always option, ``n``/``no`` the first reject option (reject-once, else
    reject-always).
    """
    word = answer.strip().lower()
    word = _WORDS.get(word, word)
    for offer in asked(request).offers:
        if word in (offer.key, str(offer.number)):
            return offer.option
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
    return f"{verb}: {_LABELS.get(kind, sanitize.line(option.name))}"
