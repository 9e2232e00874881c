"""The pieces the remote transports share: message framing, routing fields, URLs."""

from __future__ import annotations

import pytest

from acp2.transport.remote import auth_headers, http_url, ws_url
from acp2.transport.remote_base import LineSplitter, has_id, peek


def test_written_bytes_are_cut_into_whole_messages() -> None:
    splitter = LineSplitter()
    assert splitter.feed(b'{"a":1}\n{"b"') == [b'{"a":1}']
    assert splitter.feed(b":2}\n\n") == [b'{"b":2}']


def test_peek_finds_the_session_of_params_or_result() -> None:
    request = peek(b'{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s"}}')
    assert request.is_request
    assert request.session_id() == "s"
    answer = peek(b'{"jsonrpc":"2.0","id":2,"result":{"sessionId":"t"}}')
    assert answer.is_response
    assert answer.session_id() == "t"
    assert peek(b'{"jsonrpc":"2.0","id":3,"result":null}').session_id() is None


def test_peek_of_something_that_is_not_an_object_is_empty() -> None:
    found = peek(b"[1, 2]")
    assert not found.is_request
    assert not found.is_response
    assert found.session_id() is None


def test_has_id_tells_requests_and_responses_from_notifications_and_junk() -> None:
    assert has_id(b'{"jsonrpc":"2.0","id":1,"method":"session/request_permission"}')
    assert has_id(b'{"jsonrpc":"2.0","result":{},"id":"a"}')
    assert has_id(b'{"jsonrpc":"2.0","method":"session/update","params":{"id":1},"id":0}')
    assert not has_id(b'{"jsonrpc":"2.0","method":"session/update","params":{"id":1}}')
    assert not has_id(b'{"jsonrpc":"2.0","id":null,"error":{}}')
    assert not has_id(b"[1, 2]")
    assert not has_id(b"{not json")


def test_urls_switch_scheme_between_the_profiles() -> None:
    assert ws_url("https://h:1/acp?x=1") == "wss://h:1/acp?x=1"
    assert ws_url("http://h/acp") == "ws://h/acp"
    assert http_url("wss://h/acp") == "https://h/acp"
    with pytest.raises(ValueError, match="not an http"):
        http_url("ftp://h/acp")


def test_a_token_becomes_a_bearer_header() -> None:
    assert auth_headers("t0k", {"X": "1"}) == {"X": "1", "Authorization": "Bearer t0k"}
    assert auth_headers(None, None) == {}
