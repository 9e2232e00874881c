"""Which methods each advertised capability commits its side to serving (data).

An agent's ``initialize`` result, and a client's ``initialize`` capabilities, promise
methods: ``capabilities.session`` the baseline session methods, ``session.delete``
``session/delete``, a non-empty ``authMethods`` ``auth/login`` and ``auth/logout``, and so
on. :data:`AGENT` and :data:`CLIENT` list those promises as (path, methods); a path is
read attribute by attribute (and key by key inside ``_meta`` dicts) from the
:class:`~acp2.schema.InitializeResponse` (agent) or the
:class:`~acp2.schema.ClientCapabilities` (client), and it holds when the value there is
set and not empty. :func:`promised` gives the methods a value promises;
:func:`acp2.rpc.handlers.register` refuses to start a runtime that does not serve them.
"""

from __future__ import annotations

from typing import Any, Final

from msgspec import UNSET

from acp2.schema.extensions import META_KEY, SESSION_ATTACH, SESSION_STEER
from acp2.schema.methods import (
    AUTH_LOGIN,
    AUTH_LOGOUT,
    AUTH_STATUS,
    ELICITATION_COMPLETE,
    ELICITATION_CREATE,
    INITIALIZE,
    MCP_CONNECT,
    MCP_DISCONNECT,
    MCP_MESSAGE,
    PROVIDERS_DISABLE,
    PROVIDERS_LIST,
    PROVIDERS_SET,
    SESSION_ARCHIVE,
    SESSION_CANCEL,
    SESSION_CLOSE,
    SESSION_DELETE,
    SESSION_FORK,
    SESSION_LIST,
    SESSION_NEW,
    SESSION_PROMPT,
    SESSION_REQUEST_PERMISSION,
    SESSION_RESUME,
    SESSION_SET_CONFIG_OPTION,
    SESSION_SET_TITLE,
    SESSION_UNARCHIVE,
    SESSION_UPDATE,
    MethodSpec,
)

__all__ = ["AGENT", "CLIENT", "Promises", "promised"]

#: (path, methods): the value at ``path`` (dotted; ``""`` is the root, always set)
#: promises ``methods``.
Promises = tuple[tuple[str, tuple[MethodSpec[Any, Any], ...]], ...]

#: What an agent's ``initialize`` result promises.
AGENT: Final[Promises] = (
    ("", (INITIALIZE,)),
    (
        "capabilities.session",
        (
            SESSION_NEW,
            SESSION_LIST,
            SESSION_RESUME,
            SESSION_CLOSE,
            SESSION_PROMPT,
            SESSION_CANCEL,
            SESSION_SET_CONFIG_OPTION,
        ),
    ),
    ("capabilities.session.delete", (SESSION_DELETE,)),
    ("capabilities.session.mcp.acp", (MCP_MESSAGE,)),
    ("capabilities.session.fork", (SESSION_FORK,)),
    ("capabilities.session.archive", (SESSION_ARCHIVE, SESSION_UNARCHIVE)),
    ("capabilities.session.title", (SESSION_SET_TITLE,)),
    (f"capabilities.session.meta.{META_KEY}.attach", (SESSION_ATTACH,)),
    (f"capabilities.session.meta.{META_KEY}.steer", (SESSION_STEER,)),
    ("capabilities.auth.status", (AUTH_STATUS,)),
    ("capabilities.providers", (PROVIDERS_LIST, PROVIDERS_SET, PROVIDERS_DISABLE)),
    ("auth_methods", (AUTH_LOGIN, AUTH_LOGOUT)),
)

#: What a client's ``initialize`` capabilities promise (the root: what every client
#: serves; MCP over ACP needs no capability of the client's, RFD ``mcp-over-acp``, so an
#: agent advertising ``session.mcp.acp`` may send it to any client).
CLIENT: Final[Promises] = (
    ("", (SESSION_UPDATE, SESSION_REQUEST_PERMISSION, MCP_CONNECT, MCP_MESSAGE, MCP_DISCONNECT)),
    ("elicitation", (ELICITATION_CREATE, ELICITATION_COMPLETE)),
)


def promised(value: object, promises: Promises) -> frozenset[MethodSpec[Any, Any]]:
    """The methods ``value`` (an initialize result for :data:`AGENT`, client capabilities
    for :data:`CLIENT`) promises to serve."""
    return frozenset(
        spec for path, specs in promises if not path or _is_set(_at(value, path)) for spec in specs
    )


def _at(value: object, path: str) -> object:
    """The value at the dotted ``path`` (None where a step is missing)."""
    for step in path.split(".") if path else ():
        value = value.get(step) if isinstance(value, dict) else getattr(value, step, None)
    return value


def _is_set(value: Any) -> bool:
    return value is not None and value is not UNSET and value != [] and value is not False
