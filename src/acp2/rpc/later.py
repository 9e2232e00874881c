"""A request answered after its handler returned: :class:`Later`.

A request handler normally answers by returning (or raising). One that must wait for
something another task or callback produces -- the in-process v1 bridge holds
``session/prompt`` open until the agent's turn reports ``idle`` -- may instead return a
:class:`Later` and keep it: the request stays open (it counts among the live,
unanswered requests, so it is bounded as they are) until :meth:`Later.resolve` or
:meth:`Later.fail` is called, from any code running in the connection's event loop.
The answer is queued in that call, without waking a task.

A cancel of the request (``$/cancel_request`` TR-22, the connection closing TR-23) calls
the ``on_cancel`` hook given to the ``Later`` and answers ``-32800`` at once, as a
cancelled handler would be. Only the first outcome counts; later calls are ignored.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

from acp2.errors import RequestCancelled, RequestError

__all__ = ["Later"]

R = TypeVar("R")

#: How the responder answers: ``answer(result, error)`` (exactly one of them set).
Answer = Callable[[Any, RequestError | None], None]


class Later(Generic[R]):
    """A deferred answer of result type ``R`` (see the module). Return it from a request
    handler; then call :meth:`resolve` or :meth:`fail` once, before or after the handler
    returned.

    ``on_cancel`` is called (once, with no arguments) if the request is cancelled before
    it was answered; the request is then answered ``-32800`` by the connection."""

    __slots__ = ("_answer", "_outcome", "on_cancel")

    def __init__(self, on_cancel: Callable[[], None] | None = None) -> None:
        self.on_cancel = on_cancel
        self._answer: Answer | None = None
        #: The outcome given before the handler returned, until the responder binds it.
        self._outcome: tuple[Any, RequestError | None] | None = None

    @property
    def done(self) -> bool:
        """True once an outcome was given (or the request was cancelled)."""
        return self._outcome is not None

    def resolve(self, result: R) -> None:
        """Answer the request with ``result`` (queued now if the handler has returned)."""
        self._settle(result, None)

    def fail(self, error: RequestError) -> None:
        """Answer the request with ``error``."""
        self._settle(None, error)

    def cancel(self) -> None:
        """The request was cancelled (the responder calls this): ``on_cancel``, then
        ``-32800``. A no-op once an outcome was given."""
        if self._outcome is not None:
            return
        hook, self.on_cancel = self.on_cancel, None
        if hook is not None:
            hook()
        self._settle(None, RequestCancelled())

    def bind(self, answer: Answer) -> None:
        """Called by the responder when the handler returned this: from now on an
        outcome is answered through ``answer`` (at once if one was given already)."""
        self._answer = answer
        if self._outcome is not None:
            self._deliver(*self._outcome)

    def _settle(self, result: Any, error: RequestError | None) -> None:
        if self._outcome is not None:
            return
        self._outcome = (result, error)
        if self._answer is not None:
            self._deliver(result, error)

    def _deliver(self, result: Any, error: RequestError | None) -> None:
        answer, self._answer = self._answer, None
        self.on_cancel = None
        if answer is not None:
            answer(result, error)
