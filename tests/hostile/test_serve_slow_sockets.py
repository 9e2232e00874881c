"""Attack: sockets that hold ``acp2 serve`` open without ever making a request (issue 24,
item 4).

Before the fix a socket that sent nothing was kept as long as its client liked (3,000
idle sockets all held for 40 s and more, and under a 1024-descriptor limit 1,100 of them
locked legitimate clients out), and a request head trickled one byte per 2 s was kept
60 s. Now a socket must send a whole request head within ``--header-timeout`` of
opening (or of its last response) and a whole body within ``--body-timeout``: else it
is closed (a late body is answered 408), while a client that keeps to time is served.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path

import httpx
import pytest

from helpers.timeouts import TIMEOUT
from hostile.serve_limits_helpers import Served, served

pytestmark = pytest.mark.slow

#: The timeouts the server is started with (seconds): small, so the tests are quick.
HEADER_TIMEOUT = 0.5
BODY_TIMEOUT = 1.0
#: Pace of the trickle: the whole head would take HEAD_BYTES * PACE = 12 s.
PACE = 0.1
HEAD = b"POST /acp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
HEAD_BYTES = 120

FLAGS = ("--header-timeout", str(HEADER_TIMEOUT), "--body-timeout", str(BODY_TIMEOUT))


def _open(server: Served) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=TIMEOUT)
    return sock


def _closed_within(sock: socket.socket, bound: float) -> float:
    """Read until the server closes ``sock`` (at most ``bound`` seconds); return how
    long that took."""
    start = time.monotonic()
    sock.settimeout(bound)
    while sock.recv(4096):
        pass
    return time.monotonic() - start


def test_a_socket_that_sends_nothing_is_closed_after_the_header_timeout(tmp_path: Path) -> None:
    with served(tmp_path, *FLAGS) as server, _open(server) as idle:
        waited = _closed_within(idle, TIMEOUT)
        assert HEADER_TIMEOUT * 0.5 <= waited < TIMEOUT


def test_a_request_head_trickled_byte_by_byte_is_cut_at_the_header_timeout(
    tmp_path: Path,
) -> None:
    head = (HEAD * 2)[:HEAD_BYTES]
    with served(tmp_path, *FLAGS) as server, _open(server) as sock:
        start = time.monotonic()
        sock.settimeout(PACE)  # each byte waits PACE for the server to say something
        cut = False
        for byte in head:
            try:
                sock.sendall(bytes([byte]))
                cut = sock.recv(4096) == b""
            except TimeoutError:
                continue
            except OSError:
                cut = True
            if cut:
                break
        assert cut, "the server kept a trickled head for the whole trickle"
        assert time.monotonic() - start < len(head) * PACE / 2


def test_a_body_trickled_past_the_body_timeout_is_answered_408(tmp_path: Path) -> None:
    with served(tmp_path, *FLAGS) as server, _open(server) as sock:
        sock.sendall(HEAD + b"Content-Length: 1000\r\n\r\n{")
        sock.settimeout(TIMEOUT)
        answer = sock.recv(4096)
        assert answer.startswith(b"HTTP/1.1 408"), answer[:80]


def test_a_client_that_keeps_to_time_is_served_as_before(tmp_path: Path) -> None:
    with served(tmp_path, *FLAGS) as server, httpx.Client(timeout=TIMEOUT) as client:
        for _ in range(2):  # a second request on the same keep-alive socket too
            assert server.post_initialize(client).status_code == 200
