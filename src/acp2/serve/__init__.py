"""``acp2.serve``: the ASGI application behind ``acp2 serve`` (remote ACP over Streamable
HTTP and WebSocket on one endpoint; docs/remote.md).

``create_app(agent)`` (or ``create_app(command=[...])``) returns an :class:`AcpApp` for
any ASGI server; ``app_from_env`` is the same for servers that take a factory. The
WebSocket profile needs an ASGI server with WebSocket support (uvicorn with
``websockets``: the ``server`` extra).
"""

from __future__ import annotations

from acp2.serve.app import AcpApp, app_from_env, create_app, load_agent
from acp2.serve.config import ServeConfig, new_token

__all__ = ["AcpApp", "ServeConfig", "app_from_env", "create_app", "load_agent", "new_token"]
