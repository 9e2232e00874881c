"""``acp2 serve``: flags, the token rule (a token by default, ``--no-token`` only on
loopback), and a real start on a free port."""

from __future__ import annotations

import argparse
import subprocess
import sys

import httpx
import pytest

from acp2.cli.main import build_parser
from acp2.cli.serve_cmd import _build_app, _loopback, _token
from acp2.serve import ServeConfig
from helpers import timeouts


def parse(*argv: str) -> argparse.Namespace:
    return build_parser(["serve", *argv]).parse_args(["serve", *argv])


def test_the_defaults_bind_loopback_on_acp_with_a_generated_token(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ACP2_TOKEN", raising=False)
    args = parse()
    assert (args.host, args.port, args.path) == ("127.0.0.1", 8000, "/acp")
    token, generated = _token(args)
    assert generated
    assert token is not None
    assert len(token) >= 32


def test_no_token_is_for_loopback_only_and_excludes_a_token(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ACP2_TOKEN", "from-env")
    assert _token(parse("--no-token")) == (None, False)
    with pytest.raises(ValueError, match="loopback"):
        _token(parse("--no-token", "--host", "0.0.0.0"))
    with pytest.raises(SystemExit):
        parse("--no-token", "--token", "mine")


def test_a_non_loopback_address_gets_a_generated_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ACP2_TOKEN", raising=False)
    token, generated = _token(parse("--host", "0.0.0.0"))
    assert generated
    assert token is not None
    assert len(token) >= 32
    assert _token(parse("--host", "0.0.0.0", "--token", "mine")) == ("mine", False)
    monkeypatch.setenv("ACP2_TOKEN", "from-env")
    assert _token(parse("--host", "::")) == ("from-env", False)


def test_loopback_names_and_addresses() -> None:
    assert all(_loopback(h) for h in ("127.0.0.1", "127.0.0.2", "::1", "localhost"))
    assert not any(_loopback(h) for h in ("0.0.0.0", "::", "192.168.1.2", "example.com"))


def test_an_agent_command_and_an_app_flag_together_are_refused() -> None:
    args = parse("--test-agent", "--", "some-agent")
    with pytest.raises(ValueError, match="not both"):
        _build_app(args, ServeConfig())


def test_app_must_name_an_agent() -> None:
    args = parse("--app", "acp2.serve.config:new_token")
    with pytest.raises(TypeError, match="not an acp2 Agent"):
        _build_app(args, ServeConfig())


def test_acp2_serve_starts_prints_its_url_and_answers_initialize() -> None:
    argv = [sys.executable, "-m", "acp2", "serve", "--test-agent", "--port", "0", "--no-token"]
    server = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)
    try:
        assert server.stderr is not None
        line = server.stderr.readline()
        assert "listening on http://127.0.0.1:" in line
        url = line.split("listening on ", 1)[1].strip()
        assert url.endswith("/acp")
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": 2, "info": {"name": "t", "version": "1"}},
        }
        answer = httpx.post(url, json=init, timeout=timeouts.PROCESS_TIMEOUT)
        assert answer.status_code == 200
        assert answer.json()["result"]["info"]["name"] == "acp2-test-agent"
    finally:
        server.terminate()
        assert server.wait(timeouts.PROCESS_TIMEOUT) in (0, -15)
        if server.stderr is not None:
            server.stderr.close()
