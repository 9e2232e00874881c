"""Opening a client connection: spawn an agent over stdio, or use any transport.

Both entry points are async context managers that yield a :class:`ClientConnection`
with ``initialize`` done, and close everything on exit.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import (
    AsyncExitStack,
    asynccontextmanager,
    contextmanager,
)
from typing import TYPE_CHECKING, Final

import anyio
from anyio.abc import TaskGroup

from acp2._groups import leaves
from acp2.client.connection import ClientConnection
from acp2.client.core import ClientCore
from acp2.client.elicitation import ElicitationPolicy, advertise
from acp2.client.permissions import PermissionPolicy, deny_all
from acp2.client.session import ClientSession
from acp2.client.startup import AgentExited, StdoutWatch, initialize
from acp2.diagnose import early_exit, start_failure
from acp2.errors import AgentStartError, ConnectionClosed
from acp2.rpc import Connection
from acp2.schema import ClientCapabilities, Implementation, InitializeResponse
from acp2.transport.base import Transport

if TYPE_CHECKING:
    from acp2.compat.v1.schema import InitializeResponse as V1InitializeResponse
    from acp2.transport.stdio import AgentProcess

__all__ = ["DEFAULT_INITIALIZE_TIMEOUT", "client_info", "connect", "connect_transport"]

#: Seconds to wait for the agent's ``initialize`` answer before giving up.
DEFAULT_INITIALIZE_TIMEOUT = 30.0
#: Seconds to wait for an agent whose stdout ended to exit, to report its status.
EXIT_WAIT: Final = 2.0


def client_info() -> Implementation:
    """The ``info`` acp2 sends by default: name ``acp2``, the installed version."""
    # acp2.__version__, not importlib.metadata: reading the package metadata costs ~40 ms
    # of every client's start-up (tests/client/test_client_imports.py keeps them equal).
    from acp2 import __version__

    return Implementation(name="acp2", version=__version__, title="acp2 client")


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
    files: bool = False,
    terminals: bool = False,
    elicitation: ElicitationPolicy | None = None,
) -> AsyncIterator[ClientConnection]:
    """Start the agent ``command`` (argv list) on stdio and yield the initialized client.

    ``cwd`` is the agent process's working directory and the default session cwd
    (default: ours); ``env`` replaces the environment when given. ``permissions`` answers
    permission requests (default :func:`~acp2.client.deny_all`); ``elicitation``, an
    elicitation policy (:mod:`acp2.client.elicitation`), answers ``elicitation/create``
    and makes the client advertise both elicitation modes (default: none advertised,
    every request refused). On exit the agent's stdin is closed and the process is
    stopped and reaped.

    Raises, before yielding: :class:`~acp2.client.AgentStartError` (an ``OSError``) when
    the command cannot be started; :class:`~acp2.client.AgentExited` (a
    ``ConnectionClosed``) when the agent exits before answering ``initialize``;
    :class:`~acp2.client.AgentStrayOutput` (a ``TimeoutError``) when it wrote a line that
    is not JSON on stdout and then did not answer; and what :func:`connect_transport`
    raises (``files`` and ``terminals`` are described there). The agent's stderr tail is
    in those messages and in ``client.stderr_tail()``.
    """
    from acp2.transport.stdio import spawn_agent

    argv = list(command)
    where = _absolute(cwd)
    with _sole_exception():
        async with AsyncExitStack() as stack:
            try:
                proc = await stack.enter_async_context(spawn_agent(argv, cwd=where, env=_env(env)))
            except OSError as exc:
                raise AgentStartError(start_failure(argv, exc, where)) from exc
            watch = StdoutWatch(proc)
            entered = False
            try:
                async with _connect(
                    watch,
                    watch=watch,
                    cwd=where,
                    permissions=permissions,
                    info=info,
                    capabilities=capabilities,
                    initialize_timeout=initialize_timeout,
                    stderr_tail=proc.stderr_tail,
                    stderr_done=proc.wait_stderr,
                    files=files,
                    terminals=terminals,
                    elicitation=elicitation,
                ) as client:
                    entered = True
                    yield client
            except ConnectionClosed as exc:
                if entered:
                    raise
                await proc.wait_exit(EXIT_WAIT)
                raise _exited(argv, proc, watch) from exc


def _exited(argv: list[str], proc: AgentProcess, watch: StdoutWatch) -> AgentExited:
    def describe() -> str:
        return early_exit(argv, proc.returncode, proc.stderr_tail(), watch.found)

    return AgentExited(describe, lambda: proc.returncode)


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
    files: bool = False,
    terminals: bool = False,
    elicitation: ElicitationPolicy | None = None,
) -> AsyncIterator[ClientConnection]:
    """Run the client side of ACP over ``transport`` and yield the initialized client.

    Sends ``initialize`` with protocol version 2, ``info`` (default :func:`client_info`)
    and ``capabilities`` (default ``{}``). Raises ``UnsupportedProtocolVersion`` when the
    agent answers another version (the connection is closed first, IN-05) or ``-32022``;
    ``TimeoutError`` when it does not answer within ``initialize_timeout`` seconds;
    ``ConnectionClosed`` when it goes away. ``cwd`` is the default session cwd
    (default: ours). ``elicitation`` is as for :func:`connect`. The connection is
    closed on exit.

    An agent answering protocol version 1 (or echoing 2 in v1's shape) is driven through
    the back bridge (:mod:`acp2.bridge.back`) with the same API. With ``files``, such an
    agent is offered ``fs/read_text_file`` / ``fs/write_text_file`` (the ``initialize``
    also carries v1's ``clientInfo`` / ``clientCapabilities``, which v2 agents ignore),
    served below each session's directories, writes asked through ``permissions``. With
    ``terminals``, such an agent is offered ``terminal/*``
    (:mod:`acp2.bridge.back_terminal`): each command asked through ``permissions``, run
    in its own process group in a directory below the session's, its output shown as the
    v2 terminal of the same id, and stopped on release, cancel, session close and exit.
    """
    async with _connect(
        transport,
        watch=None,
        cwd=cwd,
        permissions=permissions,
        info=info,
        capabilities=capabilities,
        initialize_timeout=initialize_timeout,
        stderr_tail=stderr_tail,
        files=files,
        terminals=terminals,
        elicitation=elicitation,
    ) as client:
        yield client


@asynccontextmanager
async def _connect(
    transport: Transport,
    *,
    watch: StdoutWatch | None,
    cwd: str | os.PathLike[str] | None,
    permissions: PermissionPolicy,
    info: Implementation | None,
    capabilities: ClientCapabilities | None,
    initialize_timeout: float | None,
    stderr_tail: Callable[[], str] | None,
    stderr_done: Callable[[float], Awaitable[object]] | None = None,
    files: bool = False,
    terminals: bool = False,
    elicitation: ElicitationPolicy | None = None,
) -> AsyncIterator[ClientConnection]:
    """:func:`connect_transport`, with the stdout ``watch`` of a spawned agent (if any)."""
    default_cwd = _absolute(cwd)
    if elicitation is not None:
        capabilities = advertise(capabilities)
    connection = Connection(transport, name="agent")
    with _sole_exception():
        async with anyio.create_task_group() as tg:
            link: ClientCore[ClientSession] = ClientCore(
                connection, tg, stderr_tail=stderr_tail, stderr_done=stderr_done
            )
            link.elicitation_policy = elicitation
            link.advertised = capabilities
            link.install()
            try:
                async with connection:
                    tg.start_soon(link.watch)
                    response = await initialize(
                        link,
                        info or client_info(),
                        capabilities,
                        initialize_timeout,
                        watch,
                        files,
                        terminals,
                    )
                    if not isinstance(response, InitializeResponse):  # a v1 agent's answer
                        serving = {"files": files, "terminals": terminals}
                        bridged = _bridged(link, response, tg, serving, stderr_done)
                        async with bridged as bridge:
                            yield ClientConnection(
                                bridge,
                                bridge.v2_response,
                                permissions=permissions,
                                default_cwd=default_cwd,
                            )
                    else:
                        yield ClientConnection(
                            link, response, permissions=permissions, default_cwd=default_cwd
                        )
            finally:
                # The watcher may still be waiting for the agent's stderr: fail the sessions
                # now, or a work awaited after the connection was left would wait forever.
                link.fail_sessions()
            tg.cancel_scope.cancel()


class _BridgedLink(ClientCore[ClientSession]):
    """The link of a v1 agent's client: over the back bridge in this process."""

    v2_response: InitializeResponse


@asynccontextmanager
async def _bridged(
    v1_link: ClientCore[ClientSession],
    response: V1InitializeResponse,
    tg: TaskGroup,
    serving: dict[str, bool],
    stderr_done: Callable[[float], Awaitable[object]] | None,
) -> AsyncIterator[_BridgedLink]:
    """A v1 agent: run the back bridge (:mod:`acp2.bridge.back`, the one translation
    boundary) over ``v1_link``'s connection and yield a link to it for the v2 client.
    They meet over :func:`~acp2.bridge.inprocess.inprocess_pair`: the client's requests are the
    bridge's handlers awaited, the lifted updates reach the sessions as objects (no v2
    JSON-RPC between them). The link ends with the v1 connection. ``serving`` holds
    :class:`~acp2.bridge.back.BackBridge`'s ``files`` / ``terminals``."""
    from acp2.bridge.back import BackBridge
    from acp2.bridge.inprocess import inprocess_pair

    agent = v1_link.connection
    ours, bridge_end = inprocess_pair(agent, names=("v1 agent (bridge)", "v2 client (bridge)"))
    bridge = BackBridge(agent, bridge_end, response, tg, **serving)
    bridge.install()
    # The same plumbing as for a v2 agent, on our end of the pair (a Link like a Connection).
    link = _BridgedLink(ours, tg, stderr_tail=v1_link.stderr_tail, stderr_done=stderr_done)
    link.elicitation_policy, link.advertised = v1_link.elicitation_policy, v1_link.advertised
    link.install()
    bridge.feed_updates_to(link.feed)  # its lifted chunks go straight to the sessions
    link.v2_response = bridge.initialize_response()
    tg.start_soon(link.watch)
    try:
        yield link
    finally:
        link.fail_sessions()
        await bridge.aclose()


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
        found = leaves(group)
        if len(found) != 1:
            raise
        raise found[0] from found[0].__cause__
