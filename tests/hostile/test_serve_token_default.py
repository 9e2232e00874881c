"""A tokenless ``acp2 serve`` on loopback (issue 24, item 3): every local user -- any uid
on the machine -- could connect to 127.0.0.1 and drive the agent as the user who started
it. A real ``acp2 serve`` now requires a bearer token by default, also on loopback,
generates one when none is given and prints it with the ``acp2 chat`` line that uses it;
``--no-token`` keeps the old behaviour and says what it opens."""

from __future__ import annotations

import contextlib
import queue
import re
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import InvalidStatus

from acp2.client import connect_url
from helpers.processes import ACP2, isolated_env
from helpers.timeouts import PROCESS_TIMEOUT

pytestmark = pytest.mark.anyio

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": 2, "info": {"name": "local-stranger", "version": "1"}},
}


class Lines:
    """The stderr lines of a process, read by a thread; :meth:`until` waits for one."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.seen: list[str] = []
        self._queue: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._drain, args=(process,), daemon=True).start()

    def _drain(self, process: subprocess.Popen[str]) -> None:
        assert process.stderr is not None
        for line in process.stderr:
            self._queue.put(line)
        self._queue.put("")

    def until(self, pattern: str) -> re.Match[str]:
        """The first line (from here on) matching ``pattern``; fails at the end of the
        output or after :data:`PROCESS_TIMEOUT`."""
        deadline = time.monotonic() + PROCESS_TIMEOUT
        while True:
            line = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
            self.seen.append(line)
            assert line, f"acp2 serve said no {pattern!r}: {''.join(self.seen)}"
            found = re.search(pattern, line)
            if found:
                return found


@contextlib.contextmanager
def acp2_serve(tmp_path: Path, *flags: str) -> Iterator[tuple[str, Lines]]:
    """``acp2 serve --test-agent --port 0 FLAGS`` with no ``$ACP2_TOKEN``; yields its URL
    and its stderr."""
    env = isolated_env(tmp_path)
    env.pop("ACP2_TOKEN", None)
    argv = [*ACP2, "serve", "--test-agent", "--port", "0", *flags]
    process = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, env=env)
    try:
        lines = Lines(process)
        url = lines.until(r"listening on (http://127\.0\.0\.1:\d+/acp)").group(1)
        yield url, lines
    finally:
        process.terminate()
        process.wait(PROCESS_TIMEOUT)


async def _refused_websocket(url: str) -> int:
    """The HTTP status that refuses a token-less WebSocket to ``url`` (0: accepted)."""
    try:
        async with ws_connect("ws" + url[4:], open_timeout=PROCESS_TIMEOUT):
            return 0
    except InvalidStatus as refused:
        return refused.response.status_code


async def test_serve_on_loopback_refuses_a_client_without_the_token_it_printed(
    tmp_path: Path,
) -> None:
    with acp2_serve(tmp_path) as (url, lines):
        async with httpx.AsyncClient(timeout=PROCESS_TIMEOUT) as http:
            stranger = await http.post(url, json=INITIALIZE)
            bearer = {"authorization": "Bearer guess"}
            guess = await http.post(url, json=INITIALIZE, headers=bearer)
        websocket = await _refused_websocket(url)
        assert (stranger.status_code, guess.status_code, websocket) == (401, 401, 401)
        token = lines.until(r"Authorization: Bearer (\S+)").group(1)
        chat = lines.until(r"connect with: (.*)").group(1)
        async with connect_url(url, token=token, rejoin=False) as client:
            agent = client.agent_info
    assert chat == f"acp2 chat --url {url} --token {token}"
    assert len(token) >= 32
    assert agent is not None
    assert agent.name == "acp2-test-agent"


async def test_no_token_serves_anyone_on_loopback_and_says_so(tmp_path: Path) -> None:
    with acp2_serve(tmp_path, "--no-token") as (url, lines):
        warning = lines.until(r"warning: (.*)").group(1)
        async with httpx.AsyncClient(timeout=PROCESS_TIMEOUT) as http:
            answer = await http.post(url, json=INITIALIZE)
    assert answer.status_code == 200
    assert "any user of this machine" in warning
    assert "as you" in warning
    assert not [line for line in lines.seen if "Bearer" in line]


async def test_the_environment_app_will_not_serve_without_a_token_unless_told(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from acp2.serve import app_from_env

    monkeypatch.setenv("ACP2_SERVE_APP", "acp2.testing.scenarios:build_test_agent")
    monkeypatch.delenv("ACP2_TOKEN", raising=False)
    monkeypatch.delenv("ACP2_NO_TOKEN", raising=False)
    with pytest.raises(ValueError, match="ACP2_TOKEN"):
        app_from_env()
    monkeypatch.setenv("ACP2_NO_TOKEN", "1")
    assert not app_from_env().config.tokens
    monkeypatch.setenv("ACP2_TOKEN", "t0k")
    assert dict(app_from_env().config.tokens) == {"t0k": "local"}


async def test_the_printed_token_is_the_local_user_who_keeps_the_sessions_made_without_one(
    tmp_path: Path,
) -> None:
    store, cwd = str(tmp_path / "history.sqlite3"), str(tmp_path)
    with acp2_serve(tmp_path, "--no-token", "--store", store) as (url, _):
        async with connect_url(url, cwd=cwd, rejoin=False) as before:
            made = (await before.new_session()).id
    with acp2_serve(tmp_path, "--store", store) as (url, lines):
        token = lines.until(r"Authorization: Bearer (\S+)").group(1)
        async with connect_url(url, token=token, cwd=cwd, rejoin=False) as client:
            listed = [info.session_id for info in await client.list_sessions()]
            await client.resume(made)
    assert listed == [made]
