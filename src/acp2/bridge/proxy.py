"""``acp2 bridge``'s core: learn both versions from ``initialize``, then copy or translate.

:func:`run_bridge` joins a client transport and an agent transport:

1. :func:`read_hello` reads the client's first ``initialize`` and its version (v2-shaped
   params asking for 1, as ``acp2 check``'s probe sends, count as v2; an unreadable
   version is answered ``-32602`` and the next line read; other first messages are
   answered ``-32600``, as no session can exist before ``initialize``).
2. That request goes to the agent **unchanged** -- so a pass-through connection is byte
   for byte the client's -- except that with ``files`` / ``terminals`` a v2 request also
   carries v1's ``clientInfo`` / ``clientCapabilities`` (keys a v2 agent ignores) to
   offer ``fs/*`` / ``terminal/*`` to a v1 agent. :func:`probe` reads the answer; what
   the agent wrote before it is kept, in order.
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
``initialize`` so the caller can answer it (:func:`answer_error`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import msgspec
from msgspec import UNSET, Raw, UnsetType

from acp2.bridge.passthrough import Side, pass_through
from acp2.bridge.wirelog import TappedTransport, WireLog
from acp2.compat.v1.negotiate import NegotiationError, Version, request_version, result_version
from acp2.errors import ConnectionClosed
from acp2.rpc.framing import DEFAULT_MAX_MESSAGE_SIZE
from acp2.schema.methods import INITIALIZE
from acp2.transport.base import DirectReceive, DirectSend, Transport

__all__ = [
    "AgentGone",
    "BadAnswer",
    "BridgeEnd",
    "Hello",
    "answer_error",
    "probe",
    "read_hello",
    "run_bridge",
]

_NEWLINE: Final = b"\n"
#: JSON-RPC codes the bridge answers with itself.
PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
INTERNAL_ERROR: Final = -32603


class _Envelope(msgspec.Struct):
    # Only what routes a message; params and result stay raw bytes.
    method: Any = UNSET
    id: Any = UNSET
    params: Raw | UnsetType = UNSET
    result: Raw | UnsetType = UNSET
    info: Any = UNSET  # only read from initialize params (v2 shape)


class _Shape(msgspec.Struct):
    info: Any = UNSET


_envelope: Final = msgspec.json.Decoder(_Envelope)
_shape: Final = msgspec.json.Decoder(_Shape)
_encoder: Final = msgspec.json.Encoder()


@dataclass(frozen=True)
class Hello:
    """The client's ``initialize``: the line (no newline), the bytes read after it, the
    version it speaks and its request id."""

    line: bytes
    rest: bytes
    version: Version
    request_id: Any


@dataclass(frozen=True)
class Answer:
    """The agent's answer to the probe: ``line``; what it wrote ``before`` and after it
    (``rest``); the raw ``result`` (``None`` for an error answer)."""

    before: bytes
    line: bytes
    rest: bytes
    result: Raw | None


@dataclass(frozen=True)
class BridgeEnd:
    """How :func:`run_bridge` ended: the mode it chose and which side ended first
    (``client`` also when the client never sent an ``initialize``)."""

    mode: str
    first_closed: Side


class AgentGone(Exception):
    """The agent's stdout ended before it answered ``initialize``."""

    def __init__(self, hello: Hello) -> None:
        super().__init__("the agent closed its stdout before answering initialize")
        self.hello = hello


class BadAnswer(Exception):
    """The agent answered ``initialize`` with a result the bridge cannot read."""

    def __init__(self, hello: Hello, reason: str) -> None:
        super().__init__(f"the agent's answer to initialize is malformed: {reason}")
        self.hello = hello


async def answer_error(client: Transport, hello: Hello, message: str) -> None:
    """Answer the client's ``initialize`` with a JSON-RPC internal error (``-32603``)."""
    await _send_error(client, hello.request_id, INTERNAL_ERROR, message)


async def _send_error(transport: Transport, rid: Any, code: int, message: str) -> None:
    error = {"code": code, "message": message}
    await transport.send(_encoder.encode({"jsonrpc": "2.0", "id": rid, "error": error}) + b"\n")


# -- the client's initialize ------------------------------------------------------------


async def read_hello(client: Transport) -> Hello | None:
    """The client's first ``initialize`` (see the module); ``None`` at the end of its
    stream or past the message size limit."""
    buffer = bytearray()
    while True:
        cut = buffer.find(_NEWLINE)
        if cut < 0:
            if len(buffer) > DEFAULT_MAX_MESSAGE_SIZE:
                return None
            chunk = await client.receive()
            if not chunk:
                return None
            buffer += chunk
            continue
        line, rest = bytes(buffer[:cut]), bytes(buffer[cut + 1 :])
        buffer = bytearray(rest)
        if line.strip():
            hello = await _judge(client, line, rest)
            if hello is not None:
                return hello


async def _judge(client: Transport, line: bytes, rest: bytes) -> Hello | None:
    """A :class:`Hello` for an ``initialize`` request line; else answer it, ``None``."""
    try:
        envelope = _envelope.decode(line)
    except (msgspec.DecodeError, msgspec.ValidationError):
        await _send_error(client, None, PARSE_ERROR, "Parse error: not a JSON-RPC message")
        return None
    if envelope.method != INITIALIZE.name or envelope.id is UNSET:
        if envelope.id is not UNSET and envelope.method is not UNSET:
            text = "The first request must be initialize"
            await _send_error(client, envelope.id, INVALID_REQUEST, text)
        return None
    params = envelope.params if envelope.params is not UNSET else Raw(b"null")
    try:
        version = request_version(params)
    except NegotiationError as exc:
        await _send_error(client, envelope.id, exc.code, str(exc))
        return None
    if version == 1 and _shape.decode(params).info is not UNSET:
        version = 2  # v2's shape asking for 1 (a v2 client probing): answered 2
    return Hello(line, rest, version, envelope.id)


# -- the agent's answer -------------------------------------------------------------------


async def probe(agent: Transport, line: bytes, request_id: Any) -> Answer | None:
    """Send ``line`` (an ``initialize`` with ``request_id``) and read until its answer;
    ``None`` when the agent's stream ends (or overflows the size limit) first."""
    try:
        await agent.send(line + _NEWLINE)
    except ConnectionClosed:
        return None  # already gone: its stdout tells no more
    buffer = bytearray()
    start = 0
    while True:
        cut = buffer.find(_NEWLINE, start)
        if cut < 0:
            chunk = await agent.receive() if len(buffer) <= DEFAULT_MAX_MESSAGE_SIZE else b""
            if not chunk:
                return None
            buffer += chunk
            continue
        line = bytes(buffer[start:cut])
        found = _response(line, request_id)
        if found is not None:
            result = found if isinstance(found, Raw) else None
            return Answer(bytes(buffer[:start]), line, bytes(buffer[cut + 1 :]), result)
        start = cut + 1


def _response(line: bytes, request_id: Any) -> Raw | bool | None:
    """The raw result if ``line`` answers ``request_id`` (``False`` for an error answer);
    ``None`` if it is anything else."""
    try:
        envelope = _envelope.decode(line)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if envelope.method is not UNSET or envelope.id != request_id:
        return None
    return envelope.result if isinstance(envelope.result, Raw) else False


def _answer_version(answer: Answer) -> Version | None:
    if answer.result is None:
        return None
    try:
        return result_version(answer.result)
    except NegotiationError:
        return None


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
    watched = _watch(client)
    sides = _Sides(watched, agent, log, files, terminals)
    hello = await read_hello(watched)
    if hello is None:
        return BridgeEnd("none", "client")
    offer = hello.version == 2 and (files or terminals)
    sent = _with_v1_offer(hello.line, files, terminals) if offer else hello.line
    answer = await probe(agent, sent, hello.request_id)
    if answer is None:
        raise AgentGone(hello)
    mode = await _run_mode(sides, hello, sent, answer)
    return BridgeEnd(mode, "client" if watched.ended else "agent")


async def _run_mode(sides: _Sides, hello: Hello, sent: bytes, answer: Answer) -> str:
    agent_version = _answer_version(answer)
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

    message = msgspec.json.decode(line)
    try:
        request = decode(_encoder.encode(message["params"]), v2.InitializeRequest)
    except (msgspec.ValidationError, KeyError, TypeError):
        return line
    offer = initialize_request_to_v1(
        request, read_files=files, write_files=files, terminals=terminals
    )
    extra = msgspec.to_builtins(offer)
    message["params"]["clientInfo"] = extra["clientInfo"]
    message["params"]["clientCapabilities"] = extra["clientCapabilities"]
    return _encoder.encode(message)


class _EndWatch:
    """The client's transport, noting when its stream ends (to tell who ended first)."""

    def __init__(self, inner: Transport) -> None:
        self.inner = inner
        self.ended = False
        self.send = inner.send
        self.aclose = inner.aclose

    async def receive(self) -> bytes:
        """The inner transport's next chunk (``b""`` marks the end)."""
        chunk = await self.inner.receive()
        if not chunk:
            self.ended = True
        return chunk


class _DirectEndWatch(_EndWatch):
    """An :class:`_EndWatch` keeping the inner transport's direct paths (stdio has
    them), so a bridged connection over it keeps its fast paths."""

    inner: Any
    send_nowait: Callable[[bytes], int]

    def __init__(self, inner: Transport) -> None:
        super().__init__(inner)
        self.send_nowait = self.inner.send_nowait

    async def pump(self, consume: Callable[[bytes], bool]) -> bool:
        """Pump the inner transport; its end marks the end."""
        more: bool = await self.inner.pump(consume)
        if not more:
            self.ended = True
        return more


def _watch(inner: Transport) -> _EndWatch:
    if isinstance(inner, DirectReceive) and isinstance(inner, DirectSend):
        return _DirectEndWatch(inner)
    return _EndWatch(inner)
