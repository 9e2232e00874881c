"""``acp2 serve``: host an ACP agent on a remote endpoint (Streamable HTTP + WebSocket).

The application is :mod:`acp2.serve`; this module parses the flags, builds the agent
(``--app module:agent``, ``--coder``, the test agent, or ``-- AGENT COMMAND...``) and runs
uvicorn (the ``server`` extra, imported only here).
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import sys
from typing import Any

from acp2.cli.serve_limits import add_limit_flags, limit_settings
from acp2.cli.serve_startup import agent_command_problem, bind_listeners, wildcard_note

__all__ = ["add_parser", "main"]

_EPILOG = """\
agents:
  --app module:agent   an acp2 Agent object (or a function returning one), shared by
                       every connection: sessions outlive connections
  --coder              the built-in coding agent (scripted model)
  --test-agent         acp2's deterministic test agent
  -- AGENT CMD...      any stdio ACP agent: one subprocess per remote connection,
                       bytes passed through unchanged (v1 or v2)

security:
  binds 127.0.0.1 unless --host says otherwise. Every client must send a bearer
  token, also on loopback (other users of this machine can reach 127.0.0.1 too):
  --token or $ACP2_TOKEN, else one is generated and printed once, with the
  acp2 chat line that uses it. --no-token (loopback only) requires none: then any
  local user can drive the agent as you. Browsers' Origin must be this server's
  own loopback origin or an --allow-origin.
  The Host header must be a loopback name, the address connected to, or an
  --allowed-host (else 421: DNS rebinding).

HTTP/2: uvicorn speaks HTTP/1.1 (SSE works over it, one TCP connection per open
stream). The RFD requires HTTP/2 for Streamable HTTP: --http2 serves the same app
with hypercorn (the http2 extra), or run it under hypercorn yourself,
  ACP2_SERVE_APP=module:agent hypercorn --certfile C --keyfile K acp2.serve:env_app
(docs/remote.md).
"""


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``acp2 serve`` and its flags; return the parser."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "serve",
        help="host an ACP agent over Streamable HTTP and WebSocket (remote ACP)",
        description="Serve an ACP agent on one endpoint: POST/GET(SSE)/DELETE and WebSocket.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port (8000; 0: any free)")
    parser.add_argument("--path", default="/acp", help="endpoint path (/acp)")
    tokens = parser.add_mutually_exclusive_group()
    tokens.add_argument(
        "--token", help="bearer token clients must send (or $ACP2_TOKEN; default: generated)"
    )
    tokens.add_argument(
        "--no-token",
        action="store_true",
        help="loopback only: require no token (any local user can then drive the agent)",
    )
    parser.add_argument(
        "--allow-origin", action="append", default=[], metavar="ORIGIN", help="allowed Origin"
    )
    parser.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a Host name clients may use besides loopback and the bound address (repeatable)",
    )
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--app", metavar="MODULE:AGENT", help="an acp2 Agent to serve")
    which.add_argument("--coder", action="store_true", help="the built-in coding agent")
    which.add_argument("--test-agent", action="store_true", help="acp2's test agent")
    parser.add_argument(
        "--store", metavar="PATH", help="SQLite session history (--coder/--test-agent)"
    )
    parser.add_argument("--idle-timeout", type=float, default=300.0, metavar="SECONDS")
    parser.add_argument(
        "--ws-deflate", action="store_true", help="offer WebSocket permessage-deflate"
    )
    parser.add_argument("--ssl-keyfile", metavar="FILE", help="TLS key (uvicorn)")
    parser.add_argument("--ssl-certfile", metavar="FILE", help="TLS certificate (uvicorn)")
    parser.add_argument(
        "--http2",
        action="store_true",
        help="serve with hypercorn: HTTP/2 (TLS by ALPN, or cleartext prior knowledge)",
    )
    parser.add_argument("agent_command", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    add_limit_flags(parser)
    return parser


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _token(args: argparse.Namespace) -> tuple[str | None, bool]:
    """The token to require (None only with ``--no-token`` on loopback) and whether it
    was generated here; ValueError for ``--no-token`` off loopback."""
    from acp2.serve import new_token

    if args.no_token:
        if not _loopback(args.host):
            raise ValueError("--no-token is only allowed on a loopback --host")
        return None, False
    token = args.token or os.environ.get("ACP2_TOKEN") or None
    return (token, False) if token else (new_token(), True)


def _build_app(args: argparse.Namespace, config: Any) -> Any:
    from acp2.serve import create_app, load_agent

    command = [a for a in (args.agent_command or []) if a != "--"] or None
    if command is not None and (args.app or args.coder or args.test_agent):
        raise ValueError("give an agent command or --app/--coder/--test-agent, not both")
    if command is not None:
        # Found now, not when the first client connects (and gets a misleading answer).
        problem = agent_command_problem(command)
        if problem is not None:
            raise ValueError(problem)
        return create_app(command=command, config=config)
    if args.app:
        return create_app(load_agent(args.app), config=config)
    if args.test_agent:
        from acp2.testing.scenarios import build_test_agent

        return create_app(build_test_agent(args.store), config=config)
    from acp2.coder import build_coder_agent

    return create_app(build_coder_agent("scripted", store=args.store), config=config)


def main(args: argparse.Namespace) -> int:
    """Serve until interrupted; 2 on a configuration error or a missing extra."""
    problem = _missing_server(args)
    if problem is not None:
        print(problem, file=sys.stderr)
        return 2
    from acp2.serve.config import LOCAL_PRINCIPAL, ServeConfig

    try:
        token, generated = _token(args)
    except ValueError as exc:
        print(f"acp2 serve: {exc}", file=sys.stderr)
        return 2
    try:
        config = ServeConfig(
            path=args.path,
            # One token is the user who started the server: the local user, who also owns
            # the sessions made on stdio or on a tokenless server (acp2.serve.agents).
            tokens={token: LOCAL_PRINCIPAL} if token else {},
            allow_origins=tuple(args.allow_origin),
            allowed_hosts=tuple(args.allowed_host),
            idle_timeout=max(args.idle_timeout, 1.0),
            **limit_settings(args),
        )
        app = _build_app(args, config)
        # Bound here, not by uvicorn: its bind errors are a raw errno and exit status 1.
        listeners = bind_listeners(args.host, args.port)
    except (ValueError, TypeError, ImportError, AttributeError) as exc:
        print(f"acp2 serve: {exc}", file=sys.stderr)
        return 2
    if args.http2:
        _serve_http2(app, listeners, args, config, token if generated else None)
        return 0
    import uvicorn

    try:
        server = uvicorn.Server(_uvicorn_config(uvicorn, app, args, config))
        _announce(server, args, token if generated else None)
        server.run(sockets=listeners)
    finally:
        for sock in listeners:
            sock.close()
    return 0


def _missing_server(args: argparse.Namespace) -> str | None:
    """What to install for the server asked for (None: it is installed)."""
    if args.http2:
        from acp2.serve.http2 import missing

        return missing()
    from importlib.util import find_spec

    if find_spec("uvicorn") is None:
        return (
            "acp2 serve needs uvicorn and websockets: "
            "pip install -e '.[server]' in the acp2 checkout"
        )
    return None


def _serve_http2(
    app: Any, listeners: list[Any], args: argparse.Namespace, config: Any, generated: str | None
) -> None:
    """Run ``app`` under hypercorn on ``listeners`` (:mod:`acp2.serve.http2`)."""
    from acp2.serve.http2 import hypercorn_config, run_hypercorn
    from acp2.serve.limits import raise_fd_limit

    raise_fd_limit(config.max_sockets + 3 * config.max_agents + 64)
    port = listeners[0].getsockname()[1] if listeners else args.port
    hyper = hypercorn_config(
        listeners, config, certfile=args.ssl_certfile, keyfile=args.ssl_keyfile
    )
    run_hypercorn(app, hyper, lambda: _print_url(args, port, generated))


def _print_url(args: argparse.Namespace, port: int, generated: str | None) -> None:
    """The lines :func:`_announce` prints, for a server whose port is known already."""
    scheme = "https" if args.ssl_certfile else "http"
    host = f"[{args.host}]" if ":" in args.host else args.host
    url = f"{scheme}://{host}:{port}{args.path}"
    print(f"acp2 serve: listening on {url}", file=sys.stderr)
    for line in _access_lines(url, generated, args.no_token, args.host):
        print(f"acp2 serve: {line}", file=sys.stderr)
    sys.stderr.flush()


def _uvicorn_config(uvicorn: Any, app: Any, args: argparse.Namespace, config: Any) -> Any:
    from acp2.serve.limits import raise_fd_limit, uvicorn_options

    # Room for every socket the cap allows, plus the agents' pipes and the store.
    raise_fd_limit(config.max_sockets + 3 * config.max_agents + 64)
    return uvicorn.Config(
        app,
        host=args.host,
        port=args.port,
        lifespan="on",
        log_level="warning",
        **uvicorn_options(config),
        # Measured: permessage-deflate took ~100 KiB per idle connection and most of the
        # server's CPU per streamed update; ACP's messages are small and many.
        ws_per_message_deflate=args.ws_deflate,
        ssl_keyfile=args.ssl_keyfile,
        ssl_certfile=args.ssl_certfile,
        timeout_graceful_shutdown=5,
    )


def _announce(server: Any, args: argparse.Namespace, generated: str | None) -> None:
    """Print the URL once uvicorn listens (the real port when --port 0), then the
    generated token and the chat line that uses it, or the ``--no-token`` warning."""
    startup = server.startup

    async def announced(sockets: Any = None) -> None:
        await startup(sockets)
        port = args.port
        for listener in getattr(server, "servers", []):
            for sock in listener.sockets:
                port = sock.getsockname()[1]
        _print_url(args, port, generated)

    server.startup = announced


def _access_lines(url: str, generated: str | None, no_token: bool, host: str) -> list[str]:
    """What a user must know to connect: the generated token and a chat line to copy,
    or what ``--no-token`` opens (said after the URL: scripts read the URL first); on a
    wildcard ``host`` (0.0.0.0, ::) a note that clients use a real address instead."""
    note = wildcard_note(host)
    return _token_lines(url, generated, no_token) + ([note] if note else [])


def _token_lines(url: str, generated: str | None, no_token: bool) -> list[str]:
    if no_token:
        return [
            "warning: --no-token: no token is required, so any user of this machine can "
            "connect and drive the agent as you (read and write your files, run commands)"
        ]
    if generated is None:
        return []
    return [
        f"clients must send: Authorization: Bearer {generated}",
        f"connect with: acp2 chat --url {url} --token {generated}",
    ]
