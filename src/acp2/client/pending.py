"""The permission and elicitation requests of one session that still wait for an answer.

Each request is answered exactly once: with the policy's choice, or with its method's
cancellation result (permission: outcome ``cancelled``; elicitation: action ``cancel``)
when the session cancels its foreground work (PL-16; requests
about tool calls the agent lists as background work stay, D-15), when the connection goes
away, or when the agent withdraws the request with ``$/cancel_request`` (PR-10, D-03).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

import anyio

from acp2.client.permissions import (
    CANCELLED_OUTCOME,
    PermissionPolicy,
    PermissionRequest,
    marked,
    run_policy,
    to_response,
)
from acp2.schema import (
    BackgroundToolCall,
    CommandPermissionSubject,
    RequestPermissionRequest,
    RequestPermissionResponse,
    ToolCallPermissionSubject,
)
from acp2.state import SessionState

__all__ = ["PendingPermissions"]

#: Runs a coroutine function with its arguments in the background (a task group's).
StartSoon = Callable[..., None]
R = TypeVar("R")


class _Pending(Generic[R]):
    """One request waiting for its answer; ``cancelled`` is the answer a cancel gives."""

    __slots__ = ("cancelled", "event", "params", "response", "scope")

    def __init__(self, params: Any, cancelled: R) -> None:
        self.params = params
        self.cancelled = cancelled
        self.event = anyio.Event()
        self.scope = anyio.CancelScope()
        self.response: R | None = None

    def resolve(self, response: R) -> None:
        if self.response is None:
            self.response = response
            self.event.set()
        self.scope.cancel()


class PendingPermissions:
    """The requests to the user of one session waiting for an answer (``len()``: how
    many): permission requests, and elicitations (:meth:`open_with`).

    ``start_soon`` runs the policy in the connection's task group, so a slow policy never
    holds up the reader.
    """

    __slots__ = ("_start_soon", "_waiting")

    def __init__(self, start_soon: StartSoon) -> None:
        self._start_soon = start_soon
        # A dict as an ordered set: an empty one is 64 bytes, an empty set 216, and every
        # client session holds one (issue 16: client memory per session).
        self._waiting: dict[_Pending[Any], None] = {}

    def __len__(self) -> int:
        return len(self._waiting)

    def open(
        self, request: PermissionRequest, policy: PermissionPolicy
    ) -> _Pending[RequestPermissionResponse]:
        """Register ``request`` and start ``policy`` on it; :meth:`answer` waits for it."""
        pending = _Pending(request.params, CANCELLED_OUTCOME)
        self._waiting[pending] = None
        self._start_soon(_decide, pending, policy, request)
        return pending

    def open_with(
        self, params: Any, cancelled: R, decide: Callable[[], Awaitable[R]]
    ) -> _Pending[R]:
        """Register a request (``params``) answered by ``decide()``, or by ``cancelled``
        when it is cancelled; :meth:`answer` waits for it."""
        pending = _Pending(params, cancelled)
        self._waiting[pending] = None
        self._start_soon(_run, pending, decide)
        return pending

    async def answer(self, pending: _Pending[R]) -> R:
        """The answer to the request :meth:`open` registered, once there is one."""
        try:
            await pending.event.wait()
        except anyio.get_cancelled_exc_class():
            # The agent withdrew the request ($/cancel_request) or the connection is
            # closing. Answer with the method's own cancellation result, outcome
            # `cancelled`, rather than -32800 (PR-10, D-03, D-15). Nothing is awaited
            # after this point, and the request's own cancel scope ends with this return.
            pending.resolve(pending.cancelled)
            return pending.cancelled
        finally:
            self._waiting.pop(pending, None)
        assert pending.response is not None
        return pending.response

    def cancel_all(self) -> None:
        """Answer every waiting request ``cancelled`` (the connection is gone)."""
        for pending in list(self._waiting):
            pending.resolve(pending.cancelled)

    def cancel_foreground(self, state: SessionState) -> None:
        """Answer ``cancelled`` every waiting request but those about a tool call the
        last ``background`` snapshot of ``state`` lists (PL-16, D-15)."""
        background = _background_tool_calls(state)
        for pending in list(self._waiting):
            if _subject_tool_call(pending.params) not in background:
                pending.resolve(pending.cancelled)


async def _run(pending: _Pending[R], decide: Callable[[], Awaitable[R]]) -> None:
    with pending.scope:
        pending.resolve(await decide())


async def _decide(
    pending: _Pending[RequestPermissionResponse],
    policy: PermissionPolicy,
    request: PermissionRequest,
) -> None:
    with pending.scope:
        choice = await run_policy(policy, request)
        pending.resolve(marked(to_response(choice, request.params.options), policy))


def _background_tool_calls(state: SessionState) -> set[str]:
    """Ids of tool calls listed in the last ``background`` snapshot (Nov, PL-25)."""
    return {
        item.tool_call_id for item in state.background or () if isinstance(item, BackgroundToolCall)
    }


def _subject_tool_call(params: Any) -> str | None:
    if not isinstance(params, RequestPermissionRequest):
        # An elicitation names its tool call directly (``toolCallId``).
        call_id = getattr(params, "tool_call_id", None)
        return call_id if isinstance(call_id, str) else None
    subject = params.subject
    if isinstance(subject, ToolCallPermissionSubject):
        return subject.tool_call.tool_call_id
    if isinstance(subject, CommandPermissionSubject) and isinstance(subject.tool_call_id, str):
        return subject.tool_call_id
    return None
