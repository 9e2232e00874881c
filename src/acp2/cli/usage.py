"""Usage checks shared by ``acp2 chat`` and ``acp2 run``: a wrong flag value or a missing
extra is a usage error (exit 2) whose message says the fix, found before anything starts,
never an "unexpected error" from deep inside the client.

Each check returns the problem as one line (``--url: 'foo' is not ...``), or None.
"""

from __future__ import annotations

import importlib
import os
from typing import Final

__all__ = ["cwd_problem", "remote_problem", "seconds_problem", "transport_problem", "url_problem"]

_EXAMPLE_URL: Final = "http://127.0.0.1:8765/acp"
#: The packages of the ``remote`` extra; either one can reach a server (WebSocket or HTTP).
_REMOTE_PACKAGES: Final = ("websockets", "httpx")


def url_problem(url: str | None) -> str | None:
    """What is wrong with ``--url``: not http(s) / ws(s) with a host, or the ``remote``
    extra is missing; None when it can be tried."""
    if url is None:
        return None
    from acp2.sanitize import line
    from acp2.transport.remote import http_url

    try:
        http_url(url)
    except ValueError:
        return (
            f"--url: {line(url)!r} is not an http(s):// or ws(s):// URL with a host "
            f"(e.g. {_EXAMPLE_URL})"
        )
    return remote_problem()


def remote_problem() -> str | None:
    """None when a remote connection can be made; else how to install the extra."""
    for name in _REMOTE_PACKAGES:
        try:
            importlib.import_module(name)
        except ImportError:
            continue
        return None
    return (
        "--url needs the 'remote' extra (websockets, httpx): pip install -e '.[remote]' in "
        "the acp2 checkout"
    )


def seconds_problem(flag: str, value: float | None) -> str | None:
    """``flag`` must be a finite number of seconds above 0 when given."""
    if value is None or (value > 0 and value != float("inf")):
        return None
    return f"{flag}: give a number of seconds above 0 (got {value:g})"


def cwd_problem(cwd: str | None, *, remote: bool) -> str | None:
    """``--cwd`` must name an existing folder here; a remote agent's folder is on its
    own machine, so it is not checked."""
    if cwd is None or remote or os.path.isdir(cwd):
        return None
    from acp2.sanitize import line

    what = "is not a folder" if os.path.exists(cwd) else "does not exist"
    return f"--cwd: {line(cwd)} {what} (give an existing folder)"


def transport_problem(transport: str | None, url: str | None) -> str | None:
    """``--transport`` chooses how ``--url`` is reached: alone it means nothing."""
    if transport is None or url is not None:
        return None
    return "--transport needs --url (an agent started here is reached over its stdio)"
