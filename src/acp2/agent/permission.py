"""Asking the client for permission, and reading its answer safely (PR-01..PR-11)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from acp2.errors import RemoteProtocolError, RequestError
from acp2.schema import (
    CancelledPermissionOutcome,
    CommandPermissionSubject,
    PermissionOption,
    RequestPermissionRequest,
    RequestPermissionResponse,
    SelectedPermissionOutcome,
    ToolCallFields,
    ToolCallPermissionSubject,
)

if TYPE_CHECKING:
    from acp2.agent.handles import ToolCallHandle

__all__ = [
    "ALLOW_KINDS",
    "PermissionAsker",
    "PermissionOutcome",
    "PermissionResult",
    "ask_permission",
    "default_options",
]

#: Sends ``session/request_permission`` and returns the client's answer (the connection
#: serving the session provides it).
PermissionAsker = Callable[[RequestPermissionRequest], Awaitable[RequestPermissionResponse]]
#: What a :class:`PermissionResult` can say.
PermissionOutcome = Literal["selected", "cancelled", "invalid"]

#: Option kinds that mean "go ahead".
ALLOW_KINDS = frozenset({"allow_once", "allow_always"})


def default_options() -> list[PermissionOption]:
    """The four standard choices: allow once / always, reject once / always."""
    return [
        PermissionOption(option_id="allow_once", name="Allow", kind="allow_once"),
        PermissionOption(option_id="allow_always", name="Always allow", kind="allow_always"),
        PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"),
        PermissionOption(option_id="reject_always", name="Always reject", kind="reject_always"),
    ]


@dataclass(frozen=True)
class PermissionResult:
    """The user's answer.

    ``outcome`` is ``"selected"``, ``"cancelled"`` or ``"invalid"`` (an unknown outcome,
    an option that was not offered, or an error answer); ``option`` is the offered option
    that was picked, if any.
    """

    outcome: PermissionOutcome
    option: PermissionOption | None = None

    @property
    def approved(self) -> bool:
        """True only when an offered option of kind allow_once / allow_always was picked."""
        return self.option is not None and self.option.kind in ALLOW_KINDS

    @property
    def always(self) -> bool:
        """True when the picked option is an ``*_always`` kind (remember the choice)."""
        return self.option is not None and self.option.kind.endswith("_always")


async def ask_permission(
    ask: PermissionAsker,
    session_id: str,
    session_cwd: str,
    title: str,
    *,
    options: Sequence[PermissionOption] | None,
    description: str | None,
    tool_call: ToolCallHandle | None,
    command: str | None,
    cwd: str | None,
) -> PermissionResult:
    """Ask with ``ask`` (``session/request_permission``) and interpret the answer (PR-08).

    Never approves by default: an error answer is ``cancelled`` (-32800) or ``invalid``;
    a malformed result is ``invalid``. Raises ConnectionClosed if the client goes away.
    """
    offered = list(options) if options else default_options()
    request = RequestPermissionRequest(session_id=session_id, title=title, options=offered)
    if description is not None:
        request.description = description
    if command is not None:
        subject = CommandPermissionSubject(command=command, cwd=cwd or session_cwd)
        if tool_call is not None:
            subject.tool_call_id = tool_call.tool_call_id
        request.subject = subject
    elif tool_call is not None:
        request.subject = ToolCallPermissionSubject(
            tool_call=ToolCallFields(tool_call_id=tool_call.tool_call_id)
        )
    try:
        response = await ask(request)
    except RequestError as exc:
        # Aug clients may answer a cancelled permission request with -32800 (PR-10).
        return PermissionResult("cancelled" if exc.code == -32800 else "invalid")
    except RemoteProtocolError:
        # A result that is not a RequestPermissionResponse at all: never an approval.
        return PermissionResult("invalid")
    return interpret(response, offered)


def interpret(
    response: RequestPermissionResponse, offered: Sequence[PermissionOption]
) -> PermissionResult:
    """Map a response to a result; unknown outcomes and unoffered ids are not approval (PR-08)."""
    outcome = response.outcome
    if isinstance(outcome, SelectedPermissionOutcome):
        for option in offered:
            if option.option_id == outcome.option_id:
                return PermissionResult("selected", option)
        return PermissionResult("invalid")
    if isinstance(outcome, CancelledPermissionOutcome):
        return PermissionResult("cancelled")
    return PermissionResult("invalid")
