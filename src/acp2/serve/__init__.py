"""``acp2.serve``: the ASGI application behind ``acp2 serve`` (remote ACP over Streamable
HTTP and WebSocket on one endpoint; docs/remote.md).

``create_app(agent)`` (or ``create_app(command=[...])``) returns an :class:`AcpApp` for
any ASGI server; ``app_from_env`` (a factory) and ``env_app`` (an object) are configured
from the environment, for running under an ASGI server's own command line. The
WebSocket profile needs an ASGI server with WebSocket support (uvicorn with
``websockets``: the ``server`` extra).
"""

from __future__ import annotations

from acp2.serve.app import AcpApp, EnvApp, app_from_env, create_app, env_app, load_agent
from acp2.serve.config import ServeConfig, new_token

__all__ = [
    "AcpApp",
    "EnvApp",
    "ServeConfig",
    "app_from_env",
    "create_app",
    "env_app",
    "load_agent",
    "new_token",
]
