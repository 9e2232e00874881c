"""Opening a client connection: spawn an agent over stdio, or use any transport.

Both entry points are async context managers that yield a :class:`ClientConnection`
with ``initialize`` done, and close everything on exit.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager

import anyio

from acp2.client.checks import PROTOCOL_VERSION
from acp2.client.connection import ClientConnection
from acp2.client.permissions import PermissionPolicy, deny_all
from acp2.errors import UnsupportedProtocolVersion
from acp2.rpc import Connection
from acp2.schema import ClientCapabilities, Implementation, InitializeRequest, InitializeResponse
from acp2.transport.base import Transport

__all__ = ["DEFAULT_INITIALIZE_TIMEOUT", "client_info", "connect", "connect_transport"]

#: Seconds to wait for the agent's ``initialize`` answer before giving up.
DEFAULT_INITIALIZE_TIMEOUT = 30.0


def client_info() -> Implementation:
    """The ``info`` acp2 sends by default: name ``acp2``, the installed version."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        number = version("acp2")
    except PackageNotFoundError:  # pragma: no cover - running from a bare source tree
        number = "0"
    return Implementation(name="acp2", version=number, title="acp2 client")


@asynccontextmanager
async def connect(
    command: Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    permissions: PermissionPolicy = deny_all,
    info: Implementation | None = None,
    capabilities: ClientCapabilities | None = None,
    initialize_timeout: float | None = DEFAULT_INITIALIZE_TIMEOUT,
) -> AsyncIterator[ClientConnection]:
    """Start the agent ``command`` (argv list) on stdio and yield the initialized client.

    ``cwd`` is the agent process's working directory and the default session cwd
    (default: ours); ``env`` replaces the environment when given. ``permissions`` answers
    permission requests (default :func:`~acp2.client.deny_all`). On exit the agent's stdin
    is closed and the process is stopped and reaped. Raises what
    :func:`connect_transport` raises; the agent's stderr tail is in every
    ``ConnectionClosed`` and ``TimeoutError`` message and in ``client.stderr_tail()``.
    """
    from acp2.transport.stdio import spawn_agent

    where = _absolute(cwd)
    with _sole_exception():
        async with (
            spawn_agent(list(command), cwd=where, env=_env(env)) as proc,
            connect_transport(
                proc,
                cwd=where,
                permissions=permissions,
                info=info,
                capabilities=capabilities,
                initialize_timeout=initialize_timeout,
                stderr_tail=proc.stderr_tail,
            ) as client,
        ):
            yield client


@asynccontextmanager
async def connect_transport(
    transport: Transport,
    *,
    cwd: str | os.PathLike[str] | None = None,
    permissions: PermissionPolicy = deny_all,
    info: Implementation | None = None,
    capabilities: ClientCapabilities | None = None,
    initialize_timeout: float | None = DEFAULT_INITIALIZE_TIMEOUT,
    stderr_tail: Callable[[], str] | None = None,
) -> AsyncIterator[ClientConnection]:
    """Run the client side of ACP over ``transport`` and yield the initialized client.

    Sends ``initialize`` with protocol version 2, ``info`` (default :func:`client_info`)
    and ``capabilities`` (default ``{}``). Raises ``UnsupportedProtocolVersion`` when the
    agent answers another version (the connection is closed first, IN-05) or ``-32022``;
    ``TimeoutError`` when it does not answer within ``initialize_timeout`` seconds;
    ``ConnectionClosed`` when it goes away. ``cwd`` is the default session cwd
    (default: ours). The connection is closed on exit.
    """
    default_cwd = _absolute(cwd)
    connection = Connection(transport, name="agent")
    with _sole_exception():
        async with anyio.create_task_group() as tg:
            client = ClientConnection(
                connection,
                tg,
                permissions=permissions,
                default_cwd=default_cwd,
                stderr_tail=stderr_tail,
            )
            client._install()
            async with connection:
                tg.start_soon(client._watch)
                await _initialize(client, info, capabilities, initialize_timeout)
                yield client
            tg.cancel_scope.cancel()


def _absolute(cwd: str | os.PathLike[str] | None) -> str:
    return os.path.abspath(os.fspath(cwd)) if cwd is not None else os.getcwd()


def _env(env: Mapping[str, str] | None) -> dict[str, str] | None:
    return dict(env) if env is not None else None


@contextmanager
def _sole_exception() -> Iterator[None]:
    """Re-raise a task-group ``ExceptionGroup`` holding one exception as that exception,
    so callers can catch ``ConnectionClosed``, ``TimeoutError``, ... directly."""
    try:
        yield
    except BaseExceptionGroup as group:
        sole: BaseException = group
        while isinstance(sole, BaseExceptionGroup) and len(sole.exceptions) == 1:
            sole = sole.exceptions[0]
        if sole is group:
            raise
        raise sole from sole.__cause__


async def _initialize(
    client: ClientConnection,
    info: Implementation | None,
    capabilities: ClientCapabilities | None,
    seconds: float | None,
) -> None:
    """``initialize`` and check the version (IN-01, IN-02, IN-05)."""
    params = InitializeRequest(
        protocol_version=PROTOCOL_VERSION,
        info=info or client_info(),
        capabilities=capabilities or ClientCapabilities(),
    )
    try:
        with anyio.fail_after(seconds):
            response = await client._request("initialize", params, InitializeResponse)
    except TimeoutError:
        await client.aclose()
        tail = client.stderr_tail().strip()
        hint = f"; its stderr ended with:\n{tail}" if tail else ""
        raise TimeoutError(
            f"The agent did not answer initialize within {seconds:g} s{hint}"
        ) from None
    except UnsupportedProtocolVersion as exc:
        await client.aclose()
        raise UnsupportedProtocolVersion(
            f"The agent supports no protocol version acp2 speaks ({PROTOCOL_VERSION}): "
            f"{exc.message}",
            exc.data,
        ) from exc
    if response.protocol_version != PROTOCOL_VERSION:
        await client.aclose()
        raise UnsupportedProtocolVersion(
            f"The agent answered protocol version {response.protocol_version}; "
            f"acp2 speaks only version {PROTOCOL_VERSION}",
            {"requested": PROTOCOL_VERSION, "supported": [response.protocol_version]},
        )
    client._initialized(response)
