"""Answer a v2 ``initialize`` on stdio before the rest of the agent runtime is imported.

A freshly spawned agent spends most of its start-up importing what serves sessions
(the event loop, anyio, the history store and SQLite, session state, the JSON-RPC peer);
none of it is needed to answer ``initialize``, whose response depends on the
configuration only. So :meth:`acp2.agent.Agent.run` first calls :func:`answer_stdin`,
which reads the first line from fd 0 (blocking: nothing else runs yet) and, when it is
a well-formed v2 ``initialize`` request, writes to fd 1 the same response the connection
would (:func:`acp2.agent.capabilities.build_initialize_response`). The connection then
starts with that request already taken (``serve_connection(initialized=...)``) and the
rest of what was read replayed in front of the stream.

Anything else -- not an ``initialize``, a v1 one (the front bridge answers it), params
that do not decode, an id that is neither a number nor a string, no newline within
:data:`LIMIT` bytes, non-blocking fds -- is not answered: every byte read is handed to
the connection, which judges it by its own rules. This path never answers differently
from the connection; it only answers sooner.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from typing import TYPE_CHECKING, Final

import msgspec

from acp2.agent.capabilities import build_initialize_response, runs_terminal_login
from acp2.compat.v1.negotiate import NegotiationError, request_version
from acp2.rpc.envelope import read
from acp2.rpc.messages import Request, RequestId, encode_result
from acp2.schema import InitializeRequest
from acp2.schema.codec import encode
from acp2.schema.methods import INITIALIZE

if TYPE_CHECKING:
    from acp2.agent.settings import AgentSettings as Agent

__all__ = ["LIMIT", "answer_stdin", "parse_initialize", "response_line"]

#: Bytes read looking for the first newline before giving the stream to the connection.
LIMIT: Final = 1 << 20


_params: Final = msgspec.json.Decoder(InitializeRequest)


def parse_initialize(line: bytes) -> tuple[RequestId, InitializeRequest] | None:
    """``(id, params)`` of a v2 ``initialize`` request on ``line``, or None when the
    connection should judge the line (see the module). The envelope is the rpc reader's
    (:func:`acp2.rpc.envelope.read`), so this path and the connection judge it alike."""
    request = read(line).message
    if type(request) is not Request or request.method != INITIALIZE.name:
        return None
    assert isinstance(request, Request)
    if request.params is None:
        return None
    try:
        if request_version(request.params) != 2:
            return None
        return request.id, _params.decode(request.params)
    # acp2.rpc.guarded.decode's cases: params nested too deeply are the connection's to
    # judge too.
    except (msgspec.DecodeError, RecursionError, NegotiationError):
        return None


def response_line(
    agent: Agent, request_id: RequestId, params: InitializeRequest | None = None
) -> bytes:
    """The ``initialize`` response line for ``agent`` (what the connection answers to
    ``params``; terminal auth methods only for a client that can run them)."""
    terminal = params is not None and runs_terminal_login(params)
    result = encode(build_initialize_response(agent, terminal_auth=terminal))
    return encode_result(request_id, msgspec.Raw(result)) + b"\n"


def answer_stdin(agent: Agent) -> tuple[bytes, InitializeRequest | None]:
    """Read fd 0 up to its first newline; answer it on fd 1 if it is a v2 ``initialize``.

    Returns the bytes read and not answered (to be replayed before the rest of the
    stream) and the request answered, or ``(everything read, None)``."""
    if _nonblocking(0) or _nonblocking(1):
        return b"", None
    buffer = bytearray()
    while b"\n" not in buffer and len(buffer) <= LIMIT:
        chunk = os.read(0, 65536)
        if not chunk:
            return bytes(buffer), None
        buffer += chunk
    end = buffer.find(b"\n")
    found = parse_initialize(bytes(buffer[:end])) if end >= 0 else None
    if found is None:
        return bytes(buffer), None
    with contextlib.suppress(OSError):  # the client is gone: the connection finds out
        _write_all(1, response_line(agent, found[0], found[1]))
    return bytes(buffer[end + 1 :]), found[1]


def _nonblocking(fd: int) -> bool:
    try:
        return bool(fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_NONBLOCK)
    except OSError:  # closed: let the transport report it
        return True


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
