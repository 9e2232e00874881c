"""Asking the user through the client: ``elicitation/create`` in form and URL modes.

The agent uses a mode only when the client advertised it (EL-01): a form needs a non-null
``capabilities.elicitation.form``, a URL a non-null ``.url``; otherwise nothing is sent
and :class:`ElicitationUnsupported` is raised, so the handler can fall back (for URL
mode never to a form: EL-06). The answer is read as untrusted input: accepted form
content is checked against the requested schema (:mod:`acp2.agent.elicit_check`), an
unknown action counts as ``cancel`` (EL-08, Nov), and ``-32800`` is ``cancel``.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from acp2.agent.elicit_check import content_problems
from acp2.errors import (
    ElicitationContentError,
    ElicitationUnsupported,
    RequestError,
)
from acp2.schema import (
    ClientCapabilities,
    CreateElicitationRequest,
    CreateElicitationResponse,
    ElicitationAcceptAction,
    ElicitationDeclineAction,
    ElicitationFormMode,
    ElicitationSchema,
    ElicitationUrlMode,
)
from acp2.schema._base import convert

__all__ = [
    "ElicitationAction",
    "ElicitationContentError",
    "ElicitationResult",
    "ElicitationUnsupported",
    "Elicitor",
    "advertises",
    "elicit",
    "form_request",
    "url_request",
]

#: Sends ``elicitation/create`` and returns the client's answer (the connection serving
#: the session provides it).
Elicitor = Callable[[CreateElicitationRequest], Awaitable[CreateElicitationResponse]]
#: What an :class:`ElicitationResult` can say.
ElicitationAction = Literal["accept", "decline", "cancel"]


@dataclass(frozen=True)
class ElicitationResult:
    """The user's answer to an elicitation.

    ``action`` is ``"accept"``, ``"decline"`` or ``"cancel"`` (also for an unknown action
    or a ``-32800`` answer). ``content`` is the submitted form, already checked against
    the schema (``{}`` when an accepted form had no content); None otherwise and in URL
    mode. ``elicitation_id`` is the id of a URL elicitation (None for a form): in URL mode
    ``accept`` only means the user agreed to open the link (EL-10).
    """

    action: ElicitationAction
    content: dict[str, Any] | None = None
    elicitation_id: str | None = None

    @property
    def accepted(self) -> bool:
        """True only for ``accept``."""
        return self.action == "accept"


def check_mode(capabilities: ClientCapabilities | None, mode: Literal["form", "url"]) -> None:
    """Raise :class:`ElicitationUnsupported` unless the client advertised ``mode`` (EL-01)."""
    if not advertises(capabilities, mode):
        raise ElicitationUnsupported(f"the client did not advertise {mode} elicitation")


def advertises(capabilities: ClientCapabilities | None, mode: Literal["form", "url"]) -> bool:
    """True when ``capabilities`` advertise the elicitation ``mode`` (EL-01)."""
    elicitation = getattr(capabilities, "elicitation", None)
    advertised = getattr(elicitation, "form" if mode == "form" else "url", None)
    return isinstance(advertised, msgspec.Struct)


def form_request(
    session_id: str,
    message: str,
    schema: ElicitationSchema | Mapping[str, Any],
    tool_call_id: str | None,
) -> ElicitationFormMode:
    """The params of a session-scoped form elicitation; ``TypeError`` for a bad schema."""
    request = ElicitationFormMode(
        session_id=session_id, message=message, requested_schema=_form_schema(schema)
    )
    if tool_call_id is not None:
        request.tool_call_id = tool_call_id
    return request


def _form_schema(schema: ElicitationSchema | Mapping[str, Any]) -> ElicitationSchema:
    if isinstance(schema, ElicitationSchema):
        return schema
    try:
        # The schema's own decoder: an unknown property type stays Raw (EL-13).
        checked: ElicitationSchema = convert(dict(schema), ElicitationSchema)
    except (msgspec.ValidationError, ValueError, TypeError) as exc:
        raise TypeError(f"elicit(schema=) is not an elicitation form schema: {exc}") from None
    return checked


def url_request(
    session_id: str, message: str, url: str, elicitation_id: str | None, tool_call_id: str | None
) -> ElicitationUrlMode:
    """The params of a session-scoped URL elicitation; a fresh random id unless given."""
    eid = elicitation_id or f"elicit_{secrets.token_hex(8)}"
    request = ElicitationUrlMode(
        session_id=session_id, message=message, elicitation_id=eid, url=url
    )
    if tool_call_id is not None:
        request.tool_call_id = tool_call_id
    return request


async def elicit(
    ask: Elicitor, request: ElicitationFormMode | ElicitationUrlMode
) -> ElicitationResult:
    """Send ``request`` with ``ask`` and read the answer (EL-08, EL-09).

    Raises :class:`ElicitationContentError` for accepted form content that does not fit
    the schema, ``RemoteProtocolError`` for a result that is not an elicitation answer,
    the client's ``RequestError`` for an error answer other than ``-32800``, and
    ``ConnectionClosed`` if the client goes away.
    """
    try:
        response = await ask(request)
    except RequestError as exc:
        if exc.code == -32800:
            return ElicitationResult("cancel")
        raise
    if isinstance(request, ElicitationUrlMode):
        return _url_result(response, request.elicitation_id)
    return _form_result(response, request.requested_schema)


def _url_result(response: CreateElicitationResponse, elicitation_id: str) -> ElicitationResult:
    return ElicitationResult(_action(response), None, elicitation_id)


def _form_result(
    response: CreateElicitationResponse, schema: ElicitationSchema
) -> ElicitationResult:
    action = _action(response)
    if action != "accept":
        return ElicitationResult(action)
    assert isinstance(response, ElicitationAcceptAction)
    content = response.content if isinstance(response.content, dict) else {}
    problems = content_problems(schema, content)
    if problems:
        raise ElicitationContentError(problems, content)
    return ElicitationResult("accept", content)


def _action(response: CreateElicitationResponse) -> ElicitationAction:
    if isinstance(response, ElicitationAcceptAction):
        return "accept"
    if isinstance(response, ElicitationDeclineAction):
        return "decline"
    # `cancel`, and an unknown action kept raw: Nov says handle it as cancel (EL-08).
    return "cancel"
