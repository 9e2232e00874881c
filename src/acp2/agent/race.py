"""One question (a permission or elicitation request) asked of every controller at once.

The rules, for a session several clients are attached to (:mod:`acp2.agent.session_hub`):

* The request goes to every controller attached when it is asked, and to each controller
  that attaches while it is still open.
* The first *explicit* answer wins: a result not marked implicit
  (:func:`acp2.schema.extensions.is_implicit`). The other controllers' requests are then
  withdrawn: their tasks are cancelled, so the connection sends ``$/cancel_request`` and
  drops the late answer.
* When every asked controller has answered and none explicitly, the first implicit answer
  counts (a policy's decline is still a decline); when there were only error answers (or
  malformed results), the first is raised; a controller whose connection closed gave no
  answer. With nobody left to answer, the question's ``fallback`` is the answer
  (``cancelled``) -- unless no client at all is left (``nobody_left()``): then
  ``ConnectionClosed`` is raised, as a request to a lone client whose connection closed
  always did.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import anyio

from acp2.errors import ConnectionClosed, RemoteProtocolError, RequestError
from acp2.schema.extensions import is_implicit

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from acp2.rpc.link import Link
    from acp2.schema.methods import MethodSpec

__all__ = ["Question"]

R = TypeVar("R")


class Question(Generic[R]):
    """``spec(params)`` asked of several connections; :meth:`run` returns the answer that
    counts. ``fits(connection)`` says whether a controller may be asked (e.g. it advertised
    the elicitation mode); ``nobody_left()`` whether every client of the session is gone."""

    def __init__(
        self,
        spec: MethodSpec[Any, R],
        params: Any,
        fallback: R,
        fits: Callable[[Link], bool],
        nobody_left: Callable[[], bool],
    ) -> None:
        self.spec = spec
        self.params = params
        self.fallback = fallback
        self.fits = fits
        self.nobody_left = nobody_left
        self._gone: ConnectionClosed | None = None
        self._tg: TaskGroup | None = None
        self._open = 0
        self._done = anyio.Event()
        self._explicit: R | None = None
        self._implicit: R | None = None
        self._error: RequestError | RemoteProtocolError | None = None

    async def run(self, connections: list[Link]) -> R:
        """Ask each of ``connections`` (and any :meth:`ask` adds), wait for the answer
        that counts, withdraw the rest."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            for connection in connections:
                self.ask(connection)
            if self._open == 0:
                self._done.set()
            await self._done.wait()
            tg.cancel_scope.cancel()  # withdraw the requests still open ($/cancel_request)
        self._tg = None
        return self._result()

    def ask(self, connection: Link) -> None:
        """Ask ``connection`` too (a controller that attached meanwhile), unless the
        question is settled or it does not fit."""
        if self._tg is None or self._done.is_set() or not self.fits(connection):
            return
        self._open += 1
        self._tg.start_soon(self._one, connection)

    async def _one(self, connection: Link) -> None:
        try:
            answer = await connection.call(self.spec, self.params)
        except (RequestError, RemoteProtocolError) as exc:  # an error, or a malformed result
            self._error = self._error or exc
        except ConnectionClosed as exc:
            self._gone = exc  # that client is gone: no answer from it
        else:
            if not is_implicit(answer):
                if self._explicit is None:  # two answers in one loop pass: the first wins
                    self._explicit = answer
                self._done.set()
            elif self._implicit is None:
                self._implicit = answer
        finally:
            self._open -= 1
            if self._open == 0:
                self._done.set()

    def _result(self) -> R:
        if self._explicit is not None:
            return self._explicit
        if self._implicit is not None:
            return self._implicit
        if self._error is not None:
            raise self._error
        if self._gone is not None and self.nobody_left():
            raise self._gone
        return self.fallback
