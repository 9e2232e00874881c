"""The translating modes of ``acp2 bridge`` (:mod:`acp2.bridge.runner` chooses them).

Each replays the bytes the direction choice already read -- the client's
``initialize`` and what followed it, what the agent wrote around its answer -- into the
bridge it runs, so those connections see both streams as they were sent:

- :func:`run_back`: a v2 client and a v1 agent, through
  :func:`acp2.bridge.back.serve_back_transports` with the v1 answer already read;
- :func:`run_front_side`: a v1 client and a v2 agent, through
  :func:`acp2.bridge.front.run_front`. When the agent has already answered
  ``initialize`` (it took the v1 client's request and answered 2), the front's own
  ``initialize`` is answered from that answer by :class:`Preanswered` instead of
  initializing the agent a second time.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any, Final

import anyio
import msgspec

from acp2.bridge.hello import Answer, Hello
from acp2.bridge.peek import replay
from acp2.bridge.runner import BadAnswer, tapped
from acp2.errors import InvalidRequest
from acp2.rpc.envelope import keys_of
from acp2.rpc.messages import encode_result
from acp2.schema.methods import INITIALIZE
from acp2.transport.base import Transport

if TYPE_CHECKING:
    from acp2.bridge.runner import _Sides

__all__ = ["Preanswered", "back_serves_terminals", "run_back", "run_front_side"]

_NEWLINE: Final = b"\n"


def back_serves_terminals() -> bool:
    """Whether this build's back bridge can serve a v1 agent's ``terminal/*`` requests
    (:func:`~acp2.bridge.back.serve_back_transports` takes ``terminals``)."""
    from acp2.bridge.back import serve_back_transports

    return "terminals" in inspect.signature(serve_back_transports).parameters


async def run_back(sides: _Sides, hello: Hello, answer: Answer) -> None:
    """Serve the v2 client from the v1 agent whose ``answer`` was read; returns when
    either side closed. Raises :class:`BadAnswer` if the v1 result cannot be read."""
    import acp2.compat.v1.schema as v1
    from acp2.bridge.back import serve_back_transports
    from acp2.schema.codec import decode

    assert answer.result is not None
    try:
        result = decode(answer.result, v1.InitializeResponse)
    except msgspec.ValidationError as exc:
        raise BadAnswer(hello, str(exc)) from None
    client = tapped(sides, replay(sides.client, hello.line + _NEWLINE + hello.rest), "client", "v2")
    agent = tapped(sides, replay(sides.agent, answer.before + answer.rest), "agent", "v1")
    serve_terminals = sides.terminals and back_serves_terminals()
    extra: dict[str, Any] = {"terminals": True} if serve_terminals else {}
    await serve_back_transports(client, agent, result, files=sides.files, **extra)


async def run_front_side(sides: _Sides, hello: Hello, answer: Answer, *, preanswered: bool) -> None:
    """Serve the v1 client from the v2 agent; returns when either side closed. With
    ``preanswered`` the agent already answered ``initialize`` with ``answer``."""
    from acp2.bridge.front import run_front

    client = tapped(sides, replay(sides.client, hello.line + _NEWLINE + hello.rest), "client", "v1")
    agent = tapped(sides, replay(sides.agent, answer.before + answer.rest), "agent", "v2")
    if preanswered and answer.result is not None:
        agent = Preanswered(agent, answer.result)
    dropped = await run_front(client, agent)
    if dropped and sides.log is not None:
        sides.log.note(f"not sent to the v1 client: {dict(dropped)}")


class Preanswered:
    """``inner`` (an agent already initialized), with the first ``initialize`` request
    sent on it answered locally with ``result`` instead of reaching the agent.

    Nothing is received from the agent before that answer (it has nothing to say before
    the next request), so the answer cannot race the agent's bytes."""

    def __init__(self, inner: Transport, result: msgspec.Raw) -> None:
        self.inner = inner
        self._result = result
        self._answer = b""
        self._answered = anyio.Event()
        self._delivered = False

    async def send(self, data: bytes) -> None:
        """Send ``data``, less the first ``initialize`` request (answered locally)."""
        if not self._answered.is_set():
            data = self._take_initialize(data)
            if not data:
                return
        await self.inner.send(data)

    def _take_initialize(self, data: bytes) -> bytes:
        cut = data.find(_NEWLINE)
        first = data if cut < 0 else data[:cut]
        try:
            envelope = keys_of(first)
        except InvalidRequest:
            return data
        if envelope.method != INITIALIZE.name or envelope.id is msgspec.UNSET:
            return data
        self._answer = encode_result(envelope.id, self._result) + _NEWLINE
        self._answered.set()
        return b"" if cut < 0 else data[cut + 1 :]

    async def receive(self) -> bytes:
        """The local answer first (once the request was sent), then the agent's bytes."""
        if not self._delivered:
            await self._answered.wait()
            self._delivered = True
            return self._answer
        return await self.inner.receive()

    async def aclose(self) -> None:
        """Close the inner transport."""
        await self.inner.aclose()
