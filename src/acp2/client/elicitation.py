"""Answering ``elicitation/create``: the request a policy sees, and the policies.

An *elicitation policy* is any callable that takes an :class:`ElicitationRequest` and
returns (or awaits to) its answer: a dict (accept with that form content), ``True``
(accept without content: in URL mode, the user agreed to open the link, EL-10), one of
the action models (:class:`~acp2.schema.ElicitationAcceptAction`, ``...DeclineAction``,
``...CancelAction``), or ``None`` / ``False`` (decline). A policy that raises declines.
Ready-made: :func:`decline_all` and :func:`accept_defaults`.

The client advertises ``capabilities.elicitation`` (both modes) only when a policy is
given to :func:`~acp2.client.connect`; without one every ``elicitation/create`` is
answered ``-32602``, as is a mode that was not advertised or is unknown (EL-01, EL-13).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias

import msgspec
from msgspec import UNSET

from acp2.client.permissions import call_policy, marked, unattended
from acp2.errors import InvalidParams
from acp2.schema import (
    ClientCapabilities,
    CreateElicitationRequest,
    CreateElicitationResponse,
    ElicitationAcceptAction,
    ElicitationCancelAction,
    ElicitationCapabilities,
    ElicitationDeclineAction,
    ElicitationFormCapabilities,
    ElicitationFormMode,
    ElicitationSchema,
    ElicitationUrlCapabilities,
    ElicitationUrlMode,
)

if TYPE_CHECKING:
    from acp2.client.session import ClientSession
    from acp2.state import ToolCallState

__all__ = [
    "ElicitationAnswer",
    "ElicitationPolicy",
    "ElicitationRequest",
    "accept_defaults",
    "decline_all",
]

log = logging.getLogger("acp2.client")

#: What a policy may return (see the module docstring).
ElicitationAnswer: TypeAlias = (
    Mapping[str, Any]
    | bool
    | ElicitationAcceptAction
    | ElicitationDeclineAction
    | ElicitationCancelAction
    | None
)
#: An elicitation policy: sync or async callable from request to answer.
ElicitationPolicy: TypeAlias = Callable[
    ["ElicitationRequest"], Awaitable[ElicitationAnswer] | ElicitationAnswer
]

#: The answers a client sends without asking anybody.
DECLINE: Final = ElicitationDeclineAction()
CANCEL: Final = ElicitationCancelAction()


@dataclass(frozen=True, eq=False)
class ElicitationRequest:
    """One pending ``elicitation/create`` from the agent, in form or URL mode.

    ``params`` is the request as received; ``session`` the session it is scoped to (None
    for a request-scoped elicitation).
    """

    session: ClientSession | None
    params: ElicitationFormMode | ElicitationUrlMode

    @property
    def mode(self) -> Literal["form", "url"]:
        """``"form"`` or ``"url"``."""
        return "form" if isinstance(self.params, ElicitationFormMode) else "url"

    @property
    def message(self) -> str:
        """What the agent asks and why (show it to the user, EL-07)."""
        return self.params.message

    @property
    def schema(self) -> ElicitationSchema | None:
        """The form's schema (form mode), else None."""
        params = self.params
        return params.requested_schema if isinstance(params, ElicitationFormMode) else None

    @property
    def url(self) -> str | None:
        """The link to open (URL mode; show it in full before asking, EL-12), else None."""
        return self.params.url if isinstance(self.params, ElicitationUrlMode) else None

    @property
    def elicitation_id(self) -> str | None:
        """The URL elicitation's id (opaque, EL-11), else None."""
        params = self.params
        return params.elicitation_id if isinstance(params, ElicitationUrlMode) else None

    @property
    def tool_call(self) -> ToolCallState | None:
        """The tool call the request is about, as currently reduced; else None."""
        call_id = self.params.tool_call_id
        if self.session is None or not isinstance(call_id, str):
            return None
        return self.session.state.tool_calls.get(call_id)

    def defaults(self) -> dict[str, Any]:
        """The declared ``default`` of every form field that has one (prefill, EL-05)."""
        schema = self.schema
        if schema is None:
            return {}
        found = {name: getattr(prop, "default", UNSET) for name, prop in schema.properties.items()}
        return {name: value for name, value in found.items() if value not in (UNSET, None)}


@unattended
def decline_all(request: ElicitationRequest) -> ElicitationAnswer:
    """Policy: decline every elicitation (what a client without a policy would answer)."""
    return None


def accept_defaults(request: ElicitationRequest) -> ElicitationAnswer:
    """Policy: accept a form with its declared defaults when they cover every required
    field, else decline; always decline URL mode (nobody is there to consent, EL-12)."""
    schema = request.schema
    if schema is None:
        return None
    content = request.defaults()
    required = schema.required if isinstance(schema.required, list) else []
    return content if all(name in content for name in required) else None


def advertise(capabilities: ClientCapabilities | None) -> ClientCapabilities:
    """``capabilities`` with ``elicitation`` advertising both modes, unless the caller
    already set ``elicitation`` (then it is kept as given)."""
    base = capabilities or ClientCapabilities()
    if base.elicitation is not UNSET:
        return base
    modes = ElicitationCapabilities(
        form=ElicitationFormCapabilities(), url=ElicitationUrlCapabilities()
    )
    return msgspec.structs.replace(base, elicitation=modes)


def check_request(
    params: CreateElicitationRequest, advertised: ClientCapabilities | None
) -> ElicitationFormMode | ElicitationUrlMode:
    """The request if its mode was advertised; ``InvalidParams`` (-32602) otherwise."""
    elicitation = getattr(advertised, "elicitation", None)
    if isinstance(params, ElicitationFormMode):
        mode: Any = getattr(elicitation, "form", None)
    elif isinstance(params, ElicitationUrlMode):
        mode = getattr(elicitation, "url", None)
    else:
        raise InvalidParams("unknown elicitation mode")
    if not isinstance(mode, msgspec.Struct):
        raise InvalidParams("this client did not advertise that elicitation mode")
    return params


async def run_policy(
    policy: ElicitationPolicy, request: ElicitationRequest
) -> CreateElicitationResponse:
    """Call ``policy`` (sync or async) and turn its answer into the response; a policy
    that raises, or answers something else, declines (logged)."""
    return marked(to_response(await call_policy(policy, request, "elicitation")), policy)


def to_response(answer: Any) -> CreateElicitationResponse:
    """Map a policy's answer to the response (see the module docstring)."""
    if isinstance(answer, ElicitationAcceptAction | ElicitationDeclineAction):
        return answer
    if isinstance(answer, ElicitationCancelAction):
        return answer
    if answer is True:
        return ElicitationAcceptAction()
    if isinstance(answer, Mapping):
        return ElicitationAcceptAction(content=dict(answer))
    if answer not in (None, False):
        log.warning("elicitation policy answered %r: declining", type(answer).__name__)
    return DECLINE
