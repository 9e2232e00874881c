"""What a new connection under the same client means for the requests in flight.

:class:`~acp2.transport.rejoin.RejoiningTransport` only carries frames: it opens a new
connection when the old one cannot be resumed and asks its :class:`RejoinBook` what to
do with the messages. The book reads each message's envelope
(:func:`acp2.rpc.envelope.read`) and keeps, by the method table's ``retry`` column:

- the ``initialize`` the rpc layer sent first, sent again on every new connection under
  an id of the book's own (its answer swallowed);
- every request still waiting for its answer: on a new connection a ``"safe"`` one and a
  ``"keyed"`` one carrying its key (a prompt's ``idempotencyKey``: the agent's ledger
  answers a prompt it already took with the same work) are sent again with their own
  ids; a ``"never"`` one, a keyed one without its key and any method not in the table
  are answered ``-32603`` ("the remote connection was lost");
- which messages go out while the live sessions are being resumed (the re-resume's own
  ``session/resume`` / ``_acp2/session/attach``); the others wait until it is done.
"""

from __future__ import annotations

import itertools
from typing import Any, Final

import msgspec

from acp2.errors import ConnectionClosed, InvalidRequest, RequestError
from acp2.rpc.envelope import read
from acp2.rpc.guarded import decode
from acp2.rpc.messages import Request, RequestId, encode_error, encode_request
from acp2.schema.extensions import SESSION_ATTACH
from acp2.schema.methods import INITIALIZE, METHODS, SESSION_RESUME

__all__ = ["RejoinBook"]

#: What the re-resume sends: it goes out at once while everything else waits for it.
_REJOINING: Final = frozenset({SESSION_RESUME.name, SESSION_ATTACH.name})
_LOST: Final = RequestError("the remote connection was lost")


class _Idempotent(msgspec.Struct):
    idempotencyKey: Any = None


_idempotent: Final = msgspec.json.Decoder(_Idempotent)


class RejoinBook:
    """The requests in flight on one remote client and what a new connection does with
    them (module docstring); it satisfies :class:`acp2.transport.rejoin.Book`."""

    def __init__(self) -> None:
        self._initialize: msgspec.Raw | None = None  # the params of the first initialize
        # request id -> its bytes when a new connection sends it again, else None
        self._waiting: dict[RequestId, bytes | None] = {}
        self._ids = itertools.count(1)
        self._ours: set[str] = set()

    def sent(self, message: bytes) -> bool:
        """Note ``message`` going out; True when it may go out while the sessions are
        being resumed."""
        fields = read(message)
        request = fields.message
        if type(request) is Request:
            assert isinstance(request, Request)
            if request.method == INITIALIZE.name and self._initialize is None:
                self._initialize = request.params or msgspec.Raw(b"{}")
            self._waiting[request.id] = message if _resent(request) else None
        return fields.method in _REJOINING

    def received(self, data: bytes) -> bytes:
        """Note the answers in ``data`` (newline-separated messages); return ``data``
        less the answers to the book's own ``initialize``."""
        if not self._waiting and not self._ours:
            return data
        kept: list[bytes] = []
        for line in data.split(b"\n"):
            fields = read(line) if line.strip() else None
            if fields is not None and fields.method is None and fields.id is not None:
                if isinstance(fields.id, str) and fields.id in self._ours:
                    self._ours.discard(fields.id)
                    continue
                self._waiting.pop(fields.id, None)
            kept.append(line)
        return b"\n".join(kept)

    def hello(self) -> bytes:
        """The first message of a new connection: the recorded ``initialize`` under an id
        of the book's own. Raises ``ConnectionClosed`` when none was ever sent."""
        if self._initialize is None:
            raise ConnectionClosed("the lost connection was never initialized")
        ours = f"acp2-rejoin-{next(self._ids)}"
        self._ours.add(ours)
        return encode_request(ours, INITIALIZE.name, self._initialize) + b"\n"

    def to_resend(self) -> list[bytes]:
        """The waiting requests a new connection sends again, in the order sent."""
        return [message for message in self._waiting.values() if message is not None]

    def still_waiting(self, messages: list[bytes]) -> list[bytes]:
        """Those of ``messages`` (from :meth:`to_resend`) not answered meanwhile."""
        waiting = set(self._waiting.values())
        return [message for message in messages if message in waiting]

    def fail_lost(self) -> bytes:
        """Error answers (``-32603``) for the waiting requests not sent again; they are
        forgotten."""
        lost = [key for key, kept in self._waiting.items() if kept is None]
        for key in lost:
            del self._waiting[key]
        return b"".join(encode_error(key, _LOST) + b"\n" for key in lost)


def _resent(request: Request) -> bool:
    """Whether a new connection sends ``request`` again (module docstring); never
    ``initialize``, which :meth:`RejoinBook.hello` sends itself."""
    spec = METHODS.get(request.method)
    if spec is None or spec.retry == "never" or spec is INITIALIZE:
        return False
    return spec.retry == "safe" or _keyed(request)


def _keyed(request: Request) -> bool:
    if request.params is None:
        return False
    try:
        return decode(_idempotent, request.params).idempotencyKey is not None
    except InvalidRequest:
        return False
