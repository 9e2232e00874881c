"""Answering ``session/request_permission``: the request a policy sees, and the policies.

A *policy* is any callable that takes a :class:`PermissionRequest` and returns (or
awaits to) the chosen :class:`~acp2.schema.PermissionOption`, its ``optionId``, or
``None`` to decline (answered with outcome ``cancelled``: never approval, PR-08).
Ready-made policies: :func:`allow_all`, :func:`deny_all` and :func:`interactive`.
An option id that was not offered, or a policy that raises, is answered ``cancelled``.

A policy marked with :func:`unattended` (``deny_all``, and the elicitation
``decline_all``) answers without asking anyone: its answers carry
``_meta.acp2.implicit``, so on a session several clients control, a person's answer on
another client wins over it (:mod:`acp2.schema.extensions`).
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import sys
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal, TextIO, TypeAlias, TypeVar

import anyio
import anyio.lowlevel
import msgspec

from acp2.schema import (
    CancelledPermissionOutcome,
    CommandPermissionSubject,
    PermissionOption,
    PermissionOptionKind,
    RequestPermissionRequest,
    RequestPermissionResponse,
    SelectedPermissionOutcome,
    ToolCallPermissionSubject,
)
from acp2.schema.extensions import implicit_meta
from acp2.state import ToolCallState

if TYPE_CHECKING:
    from acp2.client.session import ClientSession

__all__ = [
    "PERMISSION_MODES",
    "PermissionMode",
    "PermissionPolicy",
    "PermissionRequest",
    "allow_all",
    "deny_all",
    "interactive",
    "is_unattended",
    "marked",
    "unattended",
]

log = logging.getLogger("acp2.client")

#: What a policy may return: an offered option, its id, or None (decline).
Choice: TypeAlias = PermissionOption | str | None
#: A permission policy: sync or async callable from request to choice.
PermissionPolicy: TypeAlias = Callable[["PermissionRequest"], Awaitable[Choice] | Choice]

#: How a front end (``acp2 run``, ``acp2 chat``) answers permission requests: every one
#: with :func:`allow_all` or :func:`deny_all`, or by asking the user.
PermissionMode: TypeAlias = Literal["allow", "deny", "ask"]
PERMISSION_MODES: Final[tuple[PermissionMode, ...]] = ("allow", "deny", "ask")

#: The option kinds :func:`allow_all` and :func:`deny_all` pick, in order of preference.
ALLOW_KINDS: Final[tuple[PermissionOptionKind, ...]] = ("allow_once", "allow_always")

F = TypeVar("F", bound=Callable[..., Any])
S = TypeVar("S")

#: The attribute :func:`unattended` sets on a policy.
_UNATTENDED: Final = "_acp2_unattended"


def unattended(policy: F) -> F:
    """Mark ``policy`` as answering without asking a person (e.g. a fixed decline):
    its answers are sent marked implicit, and lose to any explicit answer another
    controller of the same session gives. Returns ``policy`` itself."""
    setattr(policy, _UNATTENDED, True)
    return policy


def is_unattended(policy: object) -> bool:
    """True for a policy marked with :func:`unattended`."""
    return getattr(policy, _UNATTENDED, False) is True


def marked(response: S, policy: object) -> S:
    """``response`` as sent for ``policy``: a copy marked implicit when the policy is
    :func:`unattended`, else ``response`` itself."""
    if not is_unattended(policy) or not isinstance(response, msgspec.Struct):
        return response
    copy: S = msgspec.structs.replace(response, meta=implicit_meta())
    return copy


REJECT_KINDS: Final[tuple[PermissionOptionKind, ...]] = ("reject_once", "reject_always")


@dataclass(frozen=True, eq=False)
class PermissionRequest:
    """One pending ``session/request_permission`` from the agent.

    ``params`` is the request as received; ``session`` the session it names, whose state
    already includes the ``tool_call`` subject's patch (PR-04).
    """

    session: ClientSession
    params: RequestPermissionRequest

    @property
    def title(self) -> str:
        """The prompt text for the user (never copied onto the tool call, PR-03)."""
        return self.params.title

    @property
    def description(self) -> str | None:
        """Optional longer prompt text."""
        value = self.params.description
        return value if isinstance(value, str) else None

    @property
    def options(self) -> list[PermissionOption]:
        """The options offered, in order."""
        return list(self.params.options)

    @property
    def command(self) -> CommandPermissionSubject | None:
        """The ``command`` subject, if the agent asks to run a shell command."""
        subject = self.params.subject
        return subject if isinstance(subject, CommandPermissionSubject) else None

    @property
    def tool_call(self) -> ToolCallState | None:
        """The tool call this request is about (from a ``tool_call`` subject or a
        ``command`` subject's ``toolCallId``), as currently reduced; else None."""
        subject = self.params.subject
        call_id: Any = None
        if isinstance(subject, ToolCallPermissionSubject):
            call_id = subject.tool_call.tool_call_id
        elif isinstance(subject, CommandPermissionSubject):
            call_id = subject.tool_call_id
        return self.session.state.tool_calls.get(call_id) if isinstance(call_id, str) else None

    def option_of_kind(self, *kinds: PermissionOptionKind | str) -> PermissionOption | None:
        """The first offered option whose kind is ``kinds[0]``, else ``kinds[1]``, ...;
        None when none is offered."""
        for kind in kinds:
            for option in self.params.options:
                if option.kind == kind:
                    return option
        return None


def allow_all(request: PermissionRequest) -> PermissionOption | None:
    """Policy: pick ``allow_once`` (else ``allow_always``); decline if neither is offered."""
    return request.option_of_kind(*ALLOW_KINDS)


@unattended
def deny_all(request: PermissionRequest) -> PermissionOption | None:
    """Policy: pick ``reject_once`` (else ``reject_always``); else decline (``cancelled``)."""
    return request.option_of_kind(*REJECT_KINDS)


def interactive(
    *, input: TextIO | None = None, output: TextIO | None = None
) -> Callable[[PermissionRequest], Awaitable[Choice]]:
    """Return a policy that asks on a terminal: it prints the request to ``output``
    (default stderr) -- title, what will run, the diff, the raw input and the options,
    every agent string sanitized (:mod:`acp2.sanitize`) -- and reads a line from
    ``input`` (default stdin) in a worker thread: ``y`` allow once, ``a`` always allow,
    ``n`` reject, or an option's number. End of input or anything else declines."""

    async def ask(request: PermissionRequest) -> Choice:
        from acp2.client.permission_text import parse_choice  # pure text helpers, no rich

        out = output or sys.stderr
        out.write(render_request(request))
        out.flush()
        choice = parse_choice(request, await _read_line(input or sys.stdin))
        return choice if isinstance(choice, PermissionOption) else None

    return ask


async def _read_line(stream: TextIO) -> str:
    """Read one line in a daemon thread: a prompt abandoned by cancel must not keep the
    process alive at exit (anyio's worker threads are joined at interpreter exit)."""
    from anyio import from_thread  # only the interactive policy needs it (~10 ms to import)

    done = anyio.Event()
    token = anyio.lowlevel.current_token()
    result: list[str] = []

    def read() -> None:
        try:
            result.append(stream.readline())
        except (OSError, ValueError):
            result.append("")
        # RuntimeError: the event loop is gone, so nobody is waiting any more.
        with contextlib.suppress(RuntimeError):
            from_thread.run_sync(done.set, token=token)

    threading.Thread(target=read, name="acp2 permission prompt", daemon=True).start()
    await done.wait()
    return result[0]


def render_request(request: PermissionRequest) -> str:
    """The text :func:`interactive` shows: the request as ``acp2 run`` and the chat
    transcript show it, then ``choose [y/a/n, 1-4]:``."""
    from acp2.client.permission_text import asked, request_text

    return f"\n{request_text(request)}\nchoose [{asked(request).hint}]: "


#: The answer "the permission request was cancelled" (outcome ``cancelled``: a declined,
#: withdrawn or abandoned request; never approval, PR-08). Not a stop reason: that is
#: :data:`acp2.lifecycle.CANCELLED`.
CANCELLED_OUTCOME: Final = RequestPermissionResponse(outcome=CancelledPermissionOutcome())


def to_response(choice: Choice, offered: Sequence[PermissionOption]) -> RequestPermissionResponse:
    """Turn a policy's choice into the response; anything not offered is ``cancelled``."""
    option_id = choice.option_id if isinstance(choice, PermissionOption) else choice
    if option_id is None:
        return CANCELLED_OUTCOME
    if not any(option.option_id == option_id for option in offered):
        log.warning("permission policy chose %r, which was not offered: declining", option_id)
        return CANCELLED_OUTCOME
    return RequestPermissionResponse(outcome=SelectedPermissionOutcome(option_id=option_id))


async def run_policy(policy: PermissionPolicy, request: PermissionRequest) -> Choice:
    """Call ``policy`` (sync or async); a policy that raises declines (logged)."""
    choice: Choice = await call_policy(policy, request, "permission")
    return choice


async def call_policy(policy: Callable[[Any], Any], request: Any, kind: str) -> Any:
    """Call a sync or async user policy (permission, elicitation) with ``request``; one
    that raises answers ``None``, which every policy kind reads as "decline" (logged as
    ``"<kind> policy failed"``)."""
    try:
        result = policy(request)
        if inspect.isawaitable(result):
            result = await result
    except Exception:
        log.exception("%s policy failed: declining", kind)
        return None
    return result
