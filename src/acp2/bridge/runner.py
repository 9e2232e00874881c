"""``acp2 bridge``'s core: learn both versions from ``initialize``, then copy or translate.

:func:`run_bridge` joins a client transport and an agent transport:

1. :func:`acp2.bridge.hello.read_hello` reads the client's first ``initialize`` and the
   version it speaks.
2. That request goes to the agent **unchanged** -- so a pass-through connection is byte
   for byte the client's -- except that with ``files`` / ``terminals`` a v2 request also
   carries v1's ``clientInfo`` / ``clientCapabilities`` (keys a v2 agent ignores) to
   offer ``fs/*`` / ``terminal/*`` to a v1 agent. :func:`acp2.bridge.hello.probe` reads
   the answer; what the agent wrote before and after it is kept, in order.
3. The answer decides (:func:`acp2.compat.v1.negotiate.result_version`: number and shape):

   ============  =====================  =====================================================
   client        agent answers          the bridge
   ============  =====================  =====================================================
   v1 or v2      the same version       copies bytes (:mod:`~acp2.bridge.passthrough`)
   v2            v1                     :func:`acp2.bridge.back.serve_back_transports`
   v1            v2                     :func:`acp2.bridge.front.run_front`; the front's own
                                        ``initialize`` is answered from the one already given
   v1            an error (a v2 agent   :func:`~acp2.bridge.front.run_front`, whose v2
                 refusing v1's shape)   ``initialize`` is the agent's first successful one
   v2            an error               forwarded as it is; then copies bytes
   ============  =====================  =====================================================

Failures raise :class:`AgentGone` (the agent's stdout ended before it answered) or
:class:`BadAnswer` (a v1 result that cannot be read); both carry the client's
``initialize`` so the caller can answer it (:func:`acp2.bridge.hello.answer_error`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import msgspec

from acp2.bridge.hello import Answer, Hello, answer_version, probe, read_hello
from acp2.bridge.passthrough import Side, pass_through
from acp2.bridge.wirelog import TappedTransport, WireLog
from acp2.compat.v1.negotiate import Version
from acp2.errors import AgentGone, InvalidRequest
from acp2.errors import BadInitializeAnswer as BadAnswer
from acp2.rpc.guarded import decode as guarded_decode
from acp2.transport.base import DirectReceive, DirectSend, Transport

__all__ = ["AgentGone", "BadAnswer", "BridgeEnd", "run_bridge", "tapped"]

_NEWLINE: Final = b"\n"
_encoder: Final = msgspec.json.Encoder()
_any: Final = msgspec.json.Decoder()


@dataclass(frozen=True)
class BridgeEnd:
    """How :func:`run_bridge` ended: the mode it chose and which side ended first
    (``client`` also when the client never sent an ``initialize``)."""

    mode: str
    first_closed: Side


# -- choosing and running -----------------------------------------------------------------


@dataclass(frozen=True)
class _Sides:
    client: Transport
    agent: Transport
    log: WireLog | None
    files: bool
    terminals: bool


async def run_bridge(
    client: Transport,
    agent: Transport,
    *,
    files: bool = False,
    terminals: bool = False,
    log: WireLog | None = None,
) -> BridgeEnd:
    """Bridge ``client`` and ``agent`` until one ends (see the module). ``files`` /
    ``terminals`` serve a v1 agent's ``fs/*`` / ``terminal/*`` requests (back direction
    only; ``terminals`` needs a back bridge that has them). ``log`` records every frame.
    Raises :class:`AgentGone` / :class:`BadAnswer` before the direction is chosen."""
    ends: list[Side] = []
    sides = _Sides(
        _watch(client, "client", ends), _watch(agent, "agent", ends), log, files, terminals
    )
    hello = await read_hello(sides.client)
    if hello is None:
        return BridgeEnd("none", "client")
    offer = hello.version == 2 and (files or terminals)
    sent = _with_v1_offer(hello.line, files, terminals) if offer else hello.line
    answer = await probe(sides.agent, sent, hello.request_id)
    if answer is None:
        raise AgentGone(hello)
    mode = await _run_mode(sides, hello, sent, answer)
    return BridgeEnd(mode, ends[0] if ends else "client")


async def _run_mode(sides: _Sides, hello: Hello, sent: bytes, answer: Answer) -> str:
    agent_version = answer_version(answer)
    if agent_version == hello.version or (hello.version == 2 and agent_version is None):
        await _pass(sides, hello, sent, answer)
        return "pass-through"
    _note(sides, f"client v{hello.version}, agent {_named(agent_version)}: translating")
    if sides.log is not None:
        sides.log.frames("bridge->agent", f"v{hello.version}", [sent])
        sides.log.frames("agent->bridge", _named(agent_version), [answer.line])
    if hello.version == 2:
        from acp2.bridge.translate import run_back

        await run_back(sides, hello, answer)
        return "back"
    from acp2.bridge.translate import run_front_side

    await run_front_side(sides, hello, answer, preanswered=agent_version == 2)
    return "front"


async def _pass(sides: _Sides, hello: Hello, sent: bytes, answer: Answer) -> None:
    version = f"v{hello.version}"
    _note(sides, f"client and agent speak {version}: passing frames through")
    if sides.log is not None:
        sides.log.frames("client->agent", version, [sent])
    agent_head = answer.before + answer.line + _NEWLINE + answer.rest
    await pass_through(
        sides.client,
        sides.agent,
        client_head=hello.rest,
        agent_head=agent_head,
        version=version,
        log=sides.log,
    )


def _named(version: Version | None) -> str:
    return "an error" if version is None else f"v{version}"


def _note(sides: _Sides, text: str) -> None:
    if sides.log is not None:
        sides.log.note(text)


def tapped(sides: _Sides, transport: Transport, who: str, version: str) -> Transport:
    """``transport`` logged as the ``who`` side (``client`` / ``agent``), if logging."""
    if sides.log is None:
        return transport
    return TappedTransport(
        transport,
        sides.log,
        received=f"{who}->bridge",
        sent=f"bridge->{who}",
        version=version,
    )


def _with_v1_offer(line: bytes, files: bool, terminals: bool) -> bytes:
    """A v2 ``initialize`` line plus v1's ``clientInfo`` / ``clientCapabilities`` offering
    ``fs/*`` (``files``) and ``terminal/*`` (``terminals``); unchanged if unreadable."""
    import acp2.schema as v2
    from acp2.compat.v1.handshake import initialize_request_to_v1
    from acp2.schema.codec import decode

    try:
        message = guarded_decode(_any, line)
        request = decode(_encoder.encode(message["params"]), v2.InitializeRequest)
    except (InvalidRequest, msgspec.ValidationError, KeyError, TypeError):
        return line
    offer = initialize_request_to_v1(
        request, read_files=files, write_files=files, terminals=terminals
    )
    extra = msgspec.to_builtins(offer)
    message["params"]["clientInfo"] = extra["clientInfo"]
    message["params"]["clientCapabilities"] = extra["clientCapabilities"]
    return _encoder.encode(message)


class _EndWatch:
    """A side's transport that appends ``side`` to ``ends`` when its stream ends, so the
    bridge can tell which side went first (both may end within moments)."""

    def __init__(self, inner: Transport, side: Side, ends: list[Side]) -> None:
        self.inner = inner
        self.send = inner.send
        self.aclose = inner.aclose
        self._side = side
        self._ends = ends

    def _ended(self) -> None:
        if self._side not in self._ends:
            self._ends.append(self._side)

    async def receive(self) -> bytes:
        """The inner transport's next chunk (``b""`` marks the end)."""
        chunk = await self.inner.receive()
        if not chunk:
            self._ended()
        return chunk


class _DirectEndWatch(_EndWatch):
    """An :class:`_EndWatch` keeping the inner transport's direct paths (stdio has
    them), so a connection over it keeps its fast paths."""

    inner: Any
    send_nowait: Callable[[bytes], int]

    def __init__(self, inner: Transport, side: Side, ends: list[Side]) -> None:
        super().__init__(inner, side, ends)
        self.send_nowait = self.inner.send_nowait

    async def pump(self, consume: Callable[[bytes], bool]) -> bool:
        """Pump the inner transport; its end marks the end."""
        more: bool = await self.inner.pump(consume)
        if not more:
            self._ended()
        return more


def _watch(inner: Transport, side: Side, ends: list[Side]) -> _EndWatch:
    if isinstance(inner, DirectReceive) and isinstance(inner, DirectSend):
        return _DirectEndWatch(inner, side, ends)
    return _EndWatch(inner, side, ends)
