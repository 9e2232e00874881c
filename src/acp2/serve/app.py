"""The ASGI 3 application behind ``acp2 serve``: ACP over Streamable HTTP and WebSocket on
one path (the RFD "Streamable HTTP & WebSocket Transport", plus acp2's durable
extension; docs/remote.md).

:class:`AcpApp` is a plain ``async def __call__(scope, receive, send)``: it runs under
any ASGI server (uvicorn, which ``acp2 serve`` starts; hypercorn for HTTP/2). It checks
every request (:mod:`acp2.serve.security`), then hands HTTP to :mod:`acp2.serve.http` and
WebSockets to :mod:`acp2.serve.ws`. On lifespan shutdown every connection is ended and
its agent side awaited (bounded).
"""

from __future__ import annotations

import logging
import os
import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING

from acp2.serve.asgi import Receive, Scope, Send, respond
from acp2.serve.config import LOCAL_PRINCIPAL, ServeConfig
from acp2.serve.http import handle_http
from acp2.serve.registry import Registry, ServeFn
from acp2.serve.security import Headers, Refusal, admit
from acp2.serve.takeover_streams import Backing
from acp2.serve.ws import handle_websocket, reject_websocket

if TYPE_CHECKING:
    from acp2.agent.app import Agent

__all__ = ["AcpApp", "EnvApp", "app_from_env", "create_app", "env_app", "load_agent"]

logger = logging.getLogger(__name__)


class AcpApp:
    """The ACP endpoint as an ASGI application; ``registry`` holds its connections."""

    def __init__(
        self, serve: ServeFn, config: ServeConfig | None = None, backing: Backing | None = None
    ) -> None:
        self.config = config or ServeConfig()
        self.registry = Registry(self.config, serve, backing)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one ASGI event (lifespan, http or websocket)."""
        kind = scope["type"]
        if kind == "lifespan":
            await self._lifespan(receive, send)
            return
        on_path = scope.get("path", "").rstrip("/") == self.config.path.rstrip("/")
        if kind == "http":
            await self._http(scope, receive, send, on_path)
        elif kind == "websocket":
            await self._websocket(scope, receive, send, on_path)

    async def aclose(self) -> None:
        """End every connection (what lifespan shutdown does)."""
        await self.registry.aclose()

    async def _http(self, scope: Scope, receive: Receive, send: Send, on_path: bool) -> None:
        if not on_path:
            await respond(send, 404, "Not Found")
            return
        found = admit(scope, Headers.of(scope), self.config)
        if isinstance(found, Refusal):
            extra = [("www-authenticate", "Bearer")] if found.status == 401 else []
            await respond(send, found.status, found.reason, headers=extra)
            return
        await handle_http(scope, receive, send, self.registry, found)

    async def _websocket(self, scope: Scope, receive: Receive, send: Send, on_path: bool) -> None:
        if (await receive())["type"] != "websocket.connect":
            return
        found = (
            Refusal(404, "Not Found")
            if not on_path
            else admit(scope, Headers.of(scope), self.config)
        )
        if isinstance(found, Refusal):
            await reject_websocket(scope, send, found)
            return
        await handle_websocket(scope, receive, send, self.registry, found)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return


def create_app(
    agent: Agent | None = None,
    *,
    command: Sequence[str] | None = None,
    config: ServeConfig | None = None,
) -> AcpApp:
    """The application serving ``agent`` (one object shared by every connection) or,
    with ``command``, one ``command`` subprocess per connection. Exactly one is needed.

    With ``agent``, durable WebSocket streams keep their cursors beside the agent's
    session store, so another node on the same database (or this one after a restart)
    can take a stream over (:mod:`acp2.serve.takeover_streams`)."""
    from acp2.serve.agents import command as command_source
    from acp2.serve.agents import in_process

    if (agent is None) == (command is None):
        raise ValueError("pass exactly one of agent or command")
    if agent is None:
        app = AcpApp(command_source(command or ()), config)
        app.registry.spawns = True  # one subprocess per connection: max_agents holds
        return app
    from acp2.agent.runtime import runtime_for

    runtime = runtime_for(agent)
    return AcpApp(in_process(agent), config, Backing(lambda: runtime.store))


def load_agent(spec: str) -> Agent:
    """The agent named by ``module:attribute`` (an Agent, or a callable returning one)."""
    import importlib

    from acp2.agent.app import Agent

    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"expected module:attribute, got {spec!r}")
    value = getattr(importlib.import_module(module_name), attribute)
    if not isinstance(value, Agent) and callable(value):
        value = value()
    if not isinstance(value, Agent):
        raise TypeError(f"{spec} is not an acp2 Agent (got {type(value).__name__})")
    return value


def app_from_env() -> AcpApp:
    """An application configured from the environment, for ASGI servers' factories
    (``uvicorn --factory acp2.serve:app_from_env``; ``acp2.serve:env_app`` for servers
    without factories, e.g. hypercorn).

    ``ACP2_SERVE_APP=module:agent`` or ``ACP2_SERVE_COMMAND="agent argv"`` (default: the
    built-in coding agent with the scripted model); ``ACP2_TOKEN`` (bearer token,
    required: ValueError without it unless ``ACP2_NO_TOKEN=1`` says to serve anyone who
    can connect), ``ACP2_ALLOW_ORIGIN`` (comma-separated origins), ``ACP2_ALLOWED_HOST``
    (comma-separated Host names), ``ACP2_SERVE_PATH`` (default /acp).
    """
    env = os.environ
    token = env.get("ACP2_TOKEN")
    if not token and env.get("ACP2_NO_TOKEN") != "1":
        # The ASGI server binds whatever it was told, maybe every interface: never serve
        # tokenless unless asked to in so many words.
        raise ValueError("set ACP2_TOKEN (or ACP2_NO_TOKEN=1 to let anyone who connects in)")
    origins = tuple(o.strip() for o in env.get("ACP2_ALLOW_ORIGIN", "").split(",") if o.strip())
    config = ServeConfig(
        path=env.get("ACP2_SERVE_PATH", "/acp"),
        tokens={token: LOCAL_PRINCIPAL} if token else {},  # one token: the local user
        allow_origins=origins,
        allowed_hosts=tuple(
            h.strip() for h in env.get("ACP2_ALLOWED_HOST", "").split(",") if h.strip()
        ),
    )
    if env.get("ACP2_SERVE_COMMAND"):
        return create_app(command=shlex.split(env["ACP2_SERVE_COMMAND"]), config=config)
    if env.get("ACP2_SERVE_APP"):
        return create_app(load_agent(env["ACP2_SERVE_APP"]), config=config)
    from acp2.coder import build_coder_agent

    return create_app(build_coder_agent("scripted"), config=config)


class EnvApp:
    """An ASGI application that is :func:`app_from_env`, built on its first event: for
    servers that take an application object but no factory (``hypercorn
    acp2.serve:env_app``). Importing it reads nothing."""

    def __init__(self) -> None:
        self._app: AcpApp | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Build the application once, then hand it every event."""
        if self._app is None:
            self._app = app_from_env()
        await self._app(scope, receive, send)


#: The environment-configured application (see :class:`EnvApp`).
env_app = EnvApp()
