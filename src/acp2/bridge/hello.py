"""The opening of a bridged connection: the client's ``initialize``, the agent's answer.

:func:`read_hello` reads the client's first ``initialize`` and the version it speaks
(a request for 1 is v1 whatever else its params carry -- the rule of
:mod:`acp2.bridge.peek`, so ``acp2 agent`` and ``acp2 bridge`` judge a client alike; an
unreadable version is answered ``-32602`` and the next line read; other first requests
are answered ``-32600``, as nothing can happen before ``initialize``; other lines are
answered or dropped by JSON-RPC's rules). :func:`probe` sends a line to the agent and
reads until the answer with the same id, keeping what came before and after it.
Nothing here decodes more than the routing keys (:func:`acp2.rpc.envelope.keys_of`);
params and results stay raw bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from msgspec import UNSET, Raw

from acp2.bridge.peek import first_line
from acp2.compat.v1.negotiate import NegotiationError, Version, request_version, result_version
from acp2.errors import (
    ConnectionClosed,
    InvalidParams,
    InvalidRequest,
    ParseError,
    RequestError,
    internal_error,
)
from acp2.rpc.envelope import keys_of
from acp2.rpc.framing import DEFAULT_MAX_MESSAGE_SIZE
from acp2.rpc.messages import TOO_DEEP, encode_error
from acp2.schema.methods import INITIALIZE
from acp2.transport.base import Transport

__all__ = [
    "Answer",
    "Hello",
    "answer_error",
    "answer_version",
    "probe",
    "read_hello",
]

_NEWLINE: Final = b"\n"


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


async def answer_error(client: Transport, hello: Hello, message: str) -> None:
    """Answer the client's ``initialize`` with a JSON-RPC internal error (``-32603``)."""
    await _send_error(client, hello.request_id, internal_error(message))


async def _send_error(transport: Transport, rid: Any, error: RequestError) -> None:
    await transport.send(encode_error(rid, error) + b"\n")


# -- the client's initialize ------------------------------------------------------------


async def read_hello(client: Transport) -> Hello | None:
    """The client's first ``initialize`` (see the module); ``None`` at the end of its
    stream or past the message size limit."""
    buffer = bytearray()
    while (line := await first_line(client, buffer)) is not None:
        del buffer[: len(line) + 1]
        if line.strip():
            hello = await _judge(client, line, bytes(buffer))
            if hello is not None:
                return hello
    return None


async def _judge(client: Transport, line: bytes, rest: bytes) -> Hello | None:
    """A :class:`Hello` for an ``initialize`` request line; else answer it, ``None``."""
    try:
        envelope = keys_of(line)
    except InvalidRequest as exc:
        if exc.message.endswith(TOO_DEEP):
            await _send_error(client, None, exc)
        else:
            await _send_error(client, None, ParseError("Parse error: not a JSON-RPC message"))
        return None
    if envelope.method != INITIALIZE.name or envelope.id is UNSET:
        if envelope.id is not UNSET and envelope.method is not UNSET:
            text = "The first request must be initialize"
            await _send_error(client, envelope.id, InvalidRequest(text))
        return None
    params = envelope.params if envelope.params is not UNSET else Raw(b"null")
    try:
        version = request_version(params)
    except NegotiationError as exc:
        await _send_error(client, envelope.id, InvalidParams(str(exc)))
        return None
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
        envelope = keys_of(line)
    except InvalidRequest:
        return None
    if envelope.method is not UNSET or envelope.id != request_id:
        return None
    return envelope.result if isinstance(envelope.result, Raw) else False


def answer_version(answer: Answer) -> Version | None:
    """The version the agent's answer speaks; ``None`` for an error or an unreadable result."""
    if answer.result is None:
        return None
    try:
        return result_version(answer.result)
    except NegotiationError:
        return None
