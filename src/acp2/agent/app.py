"""The :class:`Agent` application object: what an agent author configures.

::

    agent = Agent("echo", version="1.0")

    @agent.prompt
    async def handle(turn: Turn) -> str:
        await turn.say(turn.text)
        return "end_turn"

    agent.run()          # serve ACP v2 on this process's stdin/stdout

The runtime answers ``initialize`` itself, advertising exactly what is configured here,
and owns the whole prompt lifecycle (see :mod:`acp2.agent.connection`). The Agent holds
configuration only: what the runtime keeps across connections is in
:mod:`acp2.agent.runtime`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from acp2.agent.settings import AgentSettings, AuthMethodSpec, PromptHandler

if TYPE_CHECKING:
    from acp2.schema import InitializeRequest
    from acp2.store.base import SessionStore
    from acp2.transport.base import Transport

__all__ = ["Agent", "AuthMethodSpec", "PromptHandler"]

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(eq=False)
class Agent(AgentSettings):
    """An ACP v2 agent: identity, capabilities, handlers and session storage.

    ``prompt_image`` / ``prompt_audio`` / ``prompt_embedded_context`` advertise the prompt
    content the agent accepts (text and resource links always are); ``mcp_stdio`` /
    ``mcp_http`` the MCP transports it connects to (``mcp_options`` their limits and
    stdio launcher, :mod:`acp2.agent.mcp`), ``mcp_acp`` servers the client hosts itself
    (MCP over ACP, unstable) and ``mcp_sse`` v1's HTTP+SSE servers (an acp2 extension);
    ``store`` is the history database (a SQLite path, ``":memory:"``, a
    ``postgresql://`` URL, a store such as :class:`HistoryStore`, or None for the default
    file under the user's data directory;
    :func:`acp2.agent.runtime.open_store`); ``list_page_size`` the number of sessions per
    ``session/list`` page. ``attach`` lets other connections attach to a live session
    (``_acp2/session/attach``, :mod:`acp2.agent.session_hub`) and ``may_attach`` decides who
    may (default: connections of the principal that created the session, and as
    observers the principals its owner is granted in ``observers``, a mapping of owner
    principal to the principals that may watch its sessions). ``fork`` / ``set_title``
    serve and advertise the Preview's ``session/fork`` and ``session/set_title``
    (:mod:`acp2.agent.forking`); ``on_fork(source_data, new_session)`` copies the author's
    in-memory state of the forked session. Compares by
    identity: each Agent object has its own runtime state
    (:func:`acp2.agent.runtime.runtime_for`).
    """

    def prompt(self, handler: PromptHandler) -> PromptHandler:
        """Decorator: register the prompt handler. It returns the stop reason (None = end_turn)."""
        self.prompt_handler = handler
        return handler

    def ext_method(self, method: str) -> Callable[[F], F]:
        """Decorator: handle the extension request ``method`` (must start with ``_``)."""
        _check_ext(method)

        def register(fn: F) -> F:
            """Register ``fn`` and return it unchanged."""
            self.ext_requests[method] = fn
            return fn

        return register

    def ext_notification(self, method: str) -> Callable[[F], F]:
        """Decorator: handle the extension notification ``method`` (must start with ``_``)."""
        _check_ext(method)

        def register(fn: F) -> F:
            """Register ``fn`` and return it unchanged."""
            self.ext_notifications[method] = fn
            return fn

        return register

    def session_data(self, session_id: str) -> dict[str, Any]:
        """The author's dict for ``session_id`` (``AgentSession.data``): one per session for
        the life of this Agent, shared by every connection that opens or resumes it."""
        from acp2.agent.runtime import runtime_for

        return runtime_for(self).shared(session_id).data

    def history(self) -> SessionStore:
        """Return the history store, opening it on first use."""
        from acp2.agent.runtime import runtime_for

        return runtime_for(self).store

    async def serve(self, transport: Transport, *, principal: object = None) -> None:
        """Serve one client connection on ``transport`` until it closes.

        A client whose ``initialize`` asks for protocol version 1 is served through the
        v1 front bridge (:mod:`acp2.bridge.front`); any other is served as v2.
        ``principal`` is who the server says the client is (None: the local user): every
        session it creates is bound to it, and it may list, resume, attach to and delete
        only its own sessions, or observe another's where ``observers`` grants it
        (:mod:`acp2.agent.session_hub`; v1 clients cannot attach)."""
        from acp2.bridge.peek import peek_version

        version, transport = await peek_version(transport)
        if version == 1:
            # Imported only here: the v1 models take most of a second to load.
            from acp2.agent.connection import serve_link
            from acp2.agent.runtime import runtime_for
            from acp2.bridge.front import serve_v1_client

            store = runtime_for(self).store
            await serve_v1_client(partial(serve_link, self, principal=principal), transport)
            store.flush()
        else:
            from acp2.agent.connection import serve_connection

            await serve_connection(self, transport, principal=principal)

    async def serve_stdio(self) -> None:
        """Serve ACP on this process's stdin/stdout until stdin closes."""
        await self._serve_stdio(b"", None)

    async def _serve_stdio(self, head: bytes, initialized: InitializeRequest | None) -> None:
        """Serve on stdio, ``head`` (bytes already read from stdin) first; ``initialized``:
        the ``initialize`` already answered by :func:`acp2.agent.early.answer_stdin`."""
        from acp2.bridge.peek import replay
        from acp2.transport.stdio import serve_stdio

        async with serve_stdio() as stdio:
            transport = replay(stdio, head) if head else stdio
            if initialized is None:
                await self.serve(transport)
                return
            from acp2.agent.connection import serve_connection

            await serve_connection(self, transport, initialized=initialized)

    def run(self) -> None:
        """Blocking entry point: serve on stdio with anyio on asyncio, then return.

        A v2 ``initialize`` sent first is answered before the event loop and the
        session runtime are even imported (:mod:`acp2.agent.early`): start-up time.
        Raises :class:`~acp2.errors.MissingHandler` first when the agent would advertise
        a method it does not serve (:func:`acp2.agent.served.check_advertised`). On stdio
        the agent has one client for its whole life, so attaching
        (``_acp2/session/attach``) is not offered: no client would ever succeed."""
        from acp2.agent.early import answer_stdin
        from acp2.agent.served import check_advertised

        self.attach = False
        check_advertised(self)  # before an initialize is answered: it advertises
        head, initialized = answer_stdin(self)
        import anyio

        anyio.run(self._serve_stdio, head, initialized)


def _check_ext(method: str) -> None:
    if not method.startswith("_"):
        raise ValueError(f"extension methods must start with '_': {method!r}")
