"""One MCP connection carried by ACP's ``mcp/message`` (MCP over ACP), as the MCP SDK's
stream pair.

The MCP Python SDK runs a client session (the agent's side) or a server (the client's
side) over a pair of memory object streams of ``SessionMessage``. :class:`McpChannel` is
the far end of that pair for one ``connectionId``: what the SDK writes goes out as
``mcp/message`` -- a request through ``send_request`` (its result, or error, comes back to
the SDK as the response), a notification through ``send_notification`` -- and what the
ACP peer sends arrives at the SDK through :meth:`McpChannel.deliver_request` and
:meth:`McpChannel.deliver_notification`.

Cancellation crosses over both ways: MCP's ``notifications/cancelled`` for a request the
channel relayed cancels that ACP request (the connection sends ``$/cancel_request``), and
an ACP request whose sender withdrew it becomes ``notifications/cancelled`` to the SDK.
The ACP envelope is never read here: the peer hands over decoded ``mcp/message`` params.
Memory is bounded: each direction buffers at most :data:`BUFFER` messages and then waits.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio
import msgspec
from msgspec import UNSET

from acp2.errors import Acp2Error, RequestError, ResourceNotFound, error_for_code
from acp2.schema.codec import decode_any, encode
from acp2.schema.mcp_acp import McpMessage

if TYPE_CHECKING:
    from anyio.abc import TaskGroup
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

__all__ = ["BUFFER", "McpChannel"]

log = logging.getLogger("acp2.mcp")

#: Messages buffered in each direction before the writer waits.
BUFFER = 32
#: The MCP notification that withdraws a request.
_CANCELLED = "notifications/cancelled"

#: Sends one MCP request as an ``mcp/message`` request; returns the raw inner result.
SendRequest = Callable[[McpMessage], Awaitable[msgspec.Raw]]
#: Sends one MCP notification as an ``mcp/message`` notification.
SendNotification = Callable[[McpMessage], Awaitable[None]]


class McpChannel:
    """One MCP-over-ACP connection (``connection_id``). Give the SDK :attr:`streams`
    (read, write), run :meth:`run` in a task while it is in use, and :meth:`close` it."""

    def __init__(
        self, connection_id: str, send_request: SendRequest, send_notification: SendNotification
    ) -> None:
        self.connection_id = connection_id
        self._send_request = send_request
        self._send_notification = send_notification
        to_sdk, sdk_reads = anyio.create_memory_object_stream[Any](BUFFER)
        sdk_writes, from_sdk = anyio.create_memory_object_stream[Any](BUFFER)
        self._to_sdk: MemoryObjectSendStream[Any] = to_sdk
        self._from_sdk: MemoryObjectReceiveStream[Any] = from_sdk
        #: The SDK's ``(read_stream, write_stream)``.
        self.streams = (sdk_reads, sdk_writes)
        self._relayed: dict[Any, anyio.CancelScope] = {}  # SDK request id -> its ACP call
        self._waiting: dict[int, _Answer] = {}  # our id -> where its answer goes
        self._next_id = 0

    async def run(self) -> None:
        """Relay what the SDK writes until it closes its end (or :meth:`close`); then
        fail whatever still waits for an answer through this channel."""
        try:
            async with anyio.create_task_group() as tg:
                async with self._from_sdk:
                    async for item in self._from_sdk:
                        await self._relay(item.message, tg)
                tg.cancel_scope.cancel()  # the SDK is gone: nobody reads the answers
        finally:
            self.close()

    def close(self) -> None:
        """End the channel (idempotent): the SDK reads end-of-stream, and every request
        delivered to it and not answered fails."""
        self._to_sdk.close()  # the SDK then closes its write end, which ends run()
        waiting, self._waiting = self._waiting, {}
        for answer in waiting.values():
            answer(None)

    # -- the SDK to the ACP peer ------------------------------------------------------

    async def _relay(self, message: Any, tg: TaskGroup) -> None:
        from mcp_types import JSONRPCError, JSONRPCNotification, JSONRPCRequest, JSONRPCResponse

        if isinstance(message, JSONRPCRequest):
            scope = self._relayed[message.id] = anyio.CancelScope()
            tg.start_soon(self._forward_request, message, scope)
        elif isinstance(message, JSONRPCNotification) and message.method == _CANCELLED:
            withdrawn = self._relayed.get((message.params or {}).get("requestId"))
            if withdrawn is not None:
                withdrawn.cancel()  # our call sends $/cancel_request
        elif isinstance(message, JSONRPCNotification):
            with contextlib.suppress(Acp2Error):  # the ACP connection is closing
                await self._send_notification(self._wrap(message.method, message.params))
        elif isinstance(message, JSONRPCResponse | JSONRPCError):
            answer = self._waiting.pop(message.id, None) if isinstance(message.id, int) else None
            if answer is not None:
                answer(message)

    async def _forward_request(self, request: Any, scope: anyio.CancelScope) -> None:
        with scope:
            try:
                raw = await self._send_request(self._wrap(request.method, request.params))
                reply = _result(request.id, raw)
            except RequestError as exc:
                reply = _error(request.id, exc.code, exc.message, exc.data)
            except Acp2Error as exc:  # the ACP connection closed under the call
                reply = _closed(request.id, exc)
            finally:
                self._relayed.pop(request.id, None)
        if not scope.cancelled_caught:
            await self._to_sdk_nowait(reply)

    def _wrap(self, method: str, params: dict[str, Any] | None) -> McpMessage:
        return McpMessage(
            connection_id=self.connection_id,
            mcp_method=method,
            mcp_params=UNSET if params is None else params,
        )

    # -- the ACP peer to the SDK ------------------------------------------------------

    async def deliver_request(self, message: McpMessage) -> msgspec.Raw:
        """Hand an ``mcp/message`` request to the SDK; return its raw result. Raises the
        :class:`~acp2.errors.RequestError` for the SDK's error (same code), and
        :class:`~acp2.errors.ResourceNotFound` once the channel is closed. Cancelling
        the caller withdraws the request (``notifications/cancelled`` to the SDK)."""
        from mcp_types import JSONRPC_VERSION, JSONRPCRequest

        self._next_id += 1
        ours = self._next_id
        answer = self._waiting[ours] = _Answer()
        params = None if message.mcp_params is UNSET else message.mcp_params
        request = JSONRPCRequest(
            jsonrpc=JSONRPC_VERSION, id=ours, method=message.mcp_method, params=params
        )
        try:
            await self._to_sdk_now(request)
            await answer.done.wait()
        except anyio.get_cancelled_exc_class():
            self._waiting.pop(ours, None)
            self._withdraw(ours)
            raise
        return _answer(answer.reply, self.connection_id)

    async def deliver_notification(self, message: McpMessage) -> None:
        """Hand an ``mcp/message`` notification to the SDK (dropped once closed)."""
        from mcp_types import JSONRPC_VERSION, JSONRPCNotification

        params = None if message.mcp_params is UNSET else message.mcp_params
        note = JSONRPCNotification(
            jsonrpc=JSONRPC_VERSION, method=message.mcp_method, params=params
        )
        with contextlib.suppress(ResourceNotFound):
            await self._to_sdk_now(note)

    def _withdraw(self, ours: int) -> None:
        from mcp_types import JSONRPC_VERSION, JSONRPCNotification

        note = JSONRPCNotification(
            jsonrpc=JSONRPC_VERSION, method=_CANCELLED, params={"requestId": ours}
        )
        with contextlib.suppress(anyio.WouldBlock, anyio.ClosedResourceError):
            self._to_sdk.send_nowait(_session_message(note))

    async def _to_sdk_now(self, message: Any) -> None:
        try:
            await self._to_sdk.send(_session_message(message))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise ResourceNotFound(
                f"MCP connection {self.connection_id!r} is closed", remote=False
            ) from None

    async def _to_sdk_nowait(self, message: Any) -> None:
        with contextlib.suppress(ResourceNotFound):
            await self._to_sdk_now(message)


class _Answer:
    """Where the SDK's answer to one delivered request is put (None: the channel closed)."""

    __slots__ = ("done", "reply")

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.reply: Any = None

    def __call__(self, reply: Any) -> None:
        self.reply = reply
        self.done.set()


def _session_message(message: Any) -> Any:
    from mcp.shared.message import SessionMessage

    return SessionMessage(message)


def _result(request_id: Any, raw: msgspec.Raw) -> Any:
    """The SDK's response for a relayed request: the peer's result, if it is an object."""
    from mcp_types import JSONRPC_VERSION, JSONRPCResponse

    try:
        result = decode_any(raw)
    except msgspec.DecodeError:
        result = None
    if not isinstance(result, dict):
        return _error(request_id, -32600, "MCP over ACP: the result is not a JSON object")
    return JSONRPCResponse(jsonrpc=JSONRPC_VERSION, id=request_id, result=result)


def _error(request_id: Any, code: int, message: str, data: Any = None) -> Any:
    from mcp_types import JSONRPC_VERSION, ErrorData, JSONRPCError

    error = ErrorData(code=code, message=message, data=data)
    return JSONRPCError(jsonrpc=JSONRPC_VERSION, id=request_id, error=error)


def _closed(request_id: Any, exc: Exception) -> Any:
    """The error the SDK reads as "the connection closed" (its server is then gone)."""
    from mcp_types import CONNECTION_CLOSED

    return _error(request_id, CONNECTION_CLOSED, f"MCP over ACP: {exc}")


def _answer(reply: Any, connection_id: str) -> msgspec.Raw:
    """The SDK's answer as an ``mcp/message`` result, or the error to raise."""
    from mcp_types import JSONRPCError

    if reply is None:
        raise ResourceNotFound(f"MCP connection {connection_id!r} closed", remote=False)
    if isinstance(reply, JSONRPCError):
        raise error_for_code(reply.error.code, reply.error.message, reply.error.data, remote=False)
    return msgspec.Raw(encode(reply.result))
