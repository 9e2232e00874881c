"""The pieces the remote transports share: message framing, URLs."""

from __future__ import annotations

import pytest

from acp2.transport.remote import auth_headers, http_url, ws_url
from acp2.transport.remote_base import outgoing_framer, whole_messages


def test_written_bytes_are_cut_into_whole_messages() -> None:
    framer = outgoing_framer()
    assert whole_messages(framer, b'{"a":1}\n{"b"') == [b'{"a":1}']
    assert whole_messages(framer, b":2}\n\n") == [b'{"b":2}']


def test_a_message_of_any_size_is_cut_whole() -> None:
    # The framer is the rpc layer's own; the bytes are ours, so no size limit applies.
    big = b'{"a":"' + b"x" * (3 << 20) + b'"}'
    framer = outgoing_framer()
    assert whole_messages(framer, big[:1000]) == []
    assert whole_messages(framer, big[1000:] + b"\n") == [big]


def test_urls_switch_scheme_between_the_profiles() -> None:
    assert ws_url("https://h:1/acp?x=1") == "wss://h:1/acp?x=1"
    assert ws_url("http://h/acp") == "ws://h/acp"
    assert http_url("wss://h/acp") == "https://h/acp"
    with pytest.raises(ValueError, match="not an http"):
        http_url("ftp://h/acp")


def test_a_token_becomes_a_bearer_header() -> None:
    assert auth_headers("t0k", {"X": "1"}) == {"X": "1", "Authorization": "Bearer t0k"}
    assert auth_headers(None, None) == {}
