"""``acp2.rpc.guarded.decode``: every way msgspec fails on a peer's JSON is one
``InvalidRequest`` (-32600) whose message is short and free of the peer's text."""

from __future__ import annotations

import msgspec
import pytest

from acp2.errors import InvalidRequest
from acp2.rpc.guarded import decode


class _Head(msgspec.Struct):
    id: msgspec.Raw = msgspec.Raw(b"")


HEAD = msgspec.json.Decoder(_Head)
ANY: msgspec.json.Decoder[object] = msgspec.json.Decoder()
SECRET = "peer-text-\x1b]0;title\x07"


@pytest.mark.parametrize(
    ("decoder", "data", "why"),
    [
        (HEAD, b'{"id":' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested too deeply"),
        (ANY, b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (HEAD, b'{"id":1', "truncated"),
        (ANY, b'{"id":"\xff"}', "UTF-8"),
        (HEAD, b"[1]", "Expected `object`"),
        (HEAD, '{"id":"\ud800"}', "lone surrogate"),
    ],
)
def test_every_decode_failure_is_one_invalid_request(
    decoder: msgspec.json.Decoder[object], data: bytes | str, why: str
) -> None:
    with pytest.raises(InvalidRequest) as caught:
        decode(decoder, data)
    assert caught.value.code == -32600
    assert why in caught.value.message


def test_the_message_never_quotes_the_peer() -> None:
    with pytest.raises(InvalidRequest) as caught:
        decode(HEAD, ('{"id":1,"' + SECRET).encode())
    assert "peer-text" not in caught.value.message


def test_a_good_message_decodes_unchanged() -> None:
    assert bytes(decode(HEAD, b'{"id":[1,2]}').id) == b"[1,2]"
