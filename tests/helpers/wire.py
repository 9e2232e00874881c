"""A strict JSON-RPC 2.0 frame checker for wire taps (TR-01, TR-02, TR-10)."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["check_frame", "is_id"]


def is_id(value: Any) -> bool:
    """True for a valid request id: a str or an int, never a bool (TR-10)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def check_frame(frame: bytes) -> Any:
    """Return the decoded frame; raise AssertionError if it is not strict JSON-RPC 2.0.

    A frame is one line (no raw newline), UTF-8, compact JSON: a request, a notification,
    a response, or an array of responses (a batch reply; we never send request batches).
    """
    assert b"\n" not in frame, "a frame must be a single line (TR-02)"
    value = json.loads(frame.decode("utf-8"))
    if isinstance(value, list):
        assert value, "never send [] (TR-14)"
        for entry in value:
            assert "method" not in entry, "we never send request batches (TR-15, D-01)"
            _check_message(entry)
    else:
        _check_message(value)
    return value


def _check_message(msg: Any) -> None:
    assert isinstance(msg, dict), f"not an object: {msg!r}"
    assert msg.get("jsonrpc") == "2.0", f"jsonrpc must be '2.0': {msg!r}"
    if "method" in msg:
        assert isinstance(msg["method"], str)
        assert set(msg) <= {"jsonrpc", "id", "method", "params"}, msg
        if "id" in msg:
            assert is_id(msg["id"]), f"bad request id (never null): {msg!r}"
        if "params" in msg:
            assert isinstance(msg["params"], (dict, list)), msg
        return
    assert set(msg) <= {"jsonrpc", "id", "result", "error"}, msg
    assert ("result" in msg) != ("error" in msg), f"exactly one of result/error: {msg!r}"
    if "result" in msg:
        assert is_id(msg.get("id")), msg
        return
    assert msg.get("id") is None or is_id(msg["id"]), msg
    error = msg["error"]
    assert isinstance(error, dict), msg
    assert set(error) <= {"code", "message", "data"}, msg
    assert is_id(error["code"]), msg
    assert isinstance(error["code"], int), msg
    assert isinstance(error["message"], str), msg
    assert "\n" not in error["message"], msg
