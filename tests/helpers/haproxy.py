"""A real HAProxy in front of several HTTP servers on 127.0.0.1, for the scale-out test.

:func:`find_haproxy` says whether it is installed (scripts/ensure-system-packages.sh
installs it). :class:`Balancer` writes a config to a temporary folder and runs HAProxy in
the foreground as a subprocess, on a socket this process already listens on (handed over
as ``bind fd@N``: clients can connect at once, and no one can take the port meanwhile).
The config: cookie affinity (``cookie SERVERID insert``; the RFD expects clients to send
back the cookies a server sets), fast TCP health checks (a killed node is marked down
within about half a second), ``option redispatch`` (a request whose cookie names a down
server goes to a live one) and a short connect timeout (HAProxy waits that long, at
most 1 s, before each retry of a refused connection).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

__all__ = ["Balancer", "find_haproxy"]

_CONFIG = """\
global
    maxconn 512

defaults
    mode http
    option redispatch
    retries 3
    timeout connect 250ms
    timeout client 60s
    timeout server 60s
    timeout tunnel 60s

frontend acp
    bind fd@{fd}
    default_backend nodes

backend nodes
    balance roundrobin
    cookie SERVERID insert indirect nocache
{servers}
"""
_SERVER = "    server {name} 127.0.0.1:{port} cookie {name} check inter 200ms fall 2 rise 1\n"


def find_haproxy() -> str | None:
    """The path of the haproxy program, or None when it is not installed."""
    return shutil.which("haproxy") or next(
        (p for p in ("/usr/sbin/haproxy", "/usr/local/sbin/haproxy") if Path(p).exists()), None
    )


class Balancer:
    """One HAProxy process balancing ``nodes`` (name -> port): :meth:`start`, :meth:`stop`;
    ``port`` is where clients connect."""

    def __init__(self, program: str, nodes: Sequence[tuple[str, int]]) -> None:
        self.program = program
        self._listener = socket.create_server(("127.0.0.1", 0), backlog=128)
        self._listener.set_inheritable(True)
        self.port = int(self._listener.getsockname()[1])
        self.root = Path(tempfile.mkdtemp(prefix="acp2-haproxy-"))
        self.config = self.root / "haproxy.cfg"
        servers = "".join(_SERVER.format(name=n, port=p) for n, p in nodes)
        self.config.write_text(_CONFIG.format(fd=self._listener.fileno(), servers=servers))
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Check the config, then run HAProxy in the foreground (``-db``); raises when the
        config is refused."""
        check = subprocess.run(
            [self.program, "-c", "-q", "-f", str(self.config)],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
            pass_fds=(self._listener.fileno(),),
        )
        if check.returncode != 0:
            raise RuntimeError(f"haproxy refused its config: {check.stderr[-2000:]}")
        log = (self.root / "haproxy.log").open("wb")
        self.process = subprocess.Popen(
            [self.program, "-db", "-f", str(self.config)],
            stdout=log,
            stderr=log,
            pass_fds=(self._listener.fileno(),),
        )
        log.close()

    def stop(self) -> None:
        """Stop HAProxy (idempotent) and remove its folder."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self._listener.close()
        shutil.rmtree(self.root, ignore_errors=True)

    def log_tail(self) -> str:
        """The end of HAProxy's output (for failure messages)."""
        path = self.root / "haproxy.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""
