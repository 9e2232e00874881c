"""The keys a model has no field for, named by path (fault 5: nothing decoded away silently)."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

import acp2.schema as v2
from acp2.schema.unmodelled import MAX_NAMES, IgnoredFields, unmodelled_keys


def _j(value: Any) -> bytes:
    return json.dumps(value).encode()


_IDLE = {
    "sessionId": "s",
    "update": {
        "sessionUpdate": "state_update",
        "state": "idle",
        "stopReason": "end_turn",
        "usage": {"totalTokens": 3, "inputTokens": 2, "outputTokens": 1, "reasoningX": 9},
        "futureField": True,
    },
    "_meta": {"anything": {"goes": 1}},
}


def test_keys_the_model_skips_are_named_by_path_and_meta_is_never_walked() -> None:
    assert unmodelled_keys(_j(_IDLE), v2.UpdateSessionNotification) == [
        "update.usage.reasoningX",
        "update.futureField",
    ]


def test_capabilities_a_newer_agent_advertises_are_named_inside_their_objects() -> None:
    result = {
        "protocolVersion": 2,
        "info": {"name": "a", "version": "1"},
        "capabilities": {"session": {"fork": {}, "_zap": {}}, "weird": 1},
        "extra": [1],
    }
    assert unmodelled_keys(_j(result), v2.InitializeResponse) == [
        "capabilities.session._zap",
        "capabilities.weird",
        "extra",
    ]


def test_list_items_are_walked_and_an_unknown_variant_is_kept_not_reported() -> None:
    prompt = {
        "sessionId": "s",
        "prompt": [
            {"type": "text", "text": "hi", "lang": "en"},
            {"type": "_hologram", "depth": 3},
        ],
    }
    assert unmodelled_keys(_j(prompt), v2.PromptRequest) == ["prompt[].lang"]


def test_a_message_without_unknown_keys_reports_nothing() -> None:
    note = {"sessionId": "s", "update": {"sessionUpdate": "state_update", "state": "running"}}
    assert unmodelled_keys(_j(note), v2.UpdateSessionNotification) == []


def _counter(level: int) -> tuple[IgnoredFields, logging.Logger]:
    logger = logging.getLogger("acp2.test.unmodelled")
    logger.setLevel(level)
    return IgnoredFields(logger, "agent"), logger


def test_each_ignored_path_is_logged_once_per_connection_and_counted_per_message(
    caplog: pytest.LogCaptureFixture,
) -> None:
    ignored, _ = _counter(logging.DEBUG)
    with caplog.at_level(logging.DEBUG, logger="acp2.test.unmodelled"):
        for _ in range(3):
            ignored.check("session/update", _j(_IDLE), v2.UpdateSessionNotification)
    lines = [r.getMessage() for r in caplog.records]
    assert lines == [
        "agent: session/update: ignored fields acp2 does not model: "
        "['update.usage.reasoningX', 'update.futureField']"
    ]
    assert ignored.counts == {
        "session/update update.usage.reasoningX": 3,
        "session/update update.futureField": 3,
    }


def test_the_names_kept_are_bounded_and_the_rest_counted_together() -> None:
    ignored, _ = _counter(logging.DEBUG)
    for i in range(MAX_NAMES + 5):
        ignored.check("x", _j({"sessionId": "s", f"k{i}": 1}), v2.CancelSessionNotification)
    assert len(ignored.counts) == MAX_NAMES + 1
    assert ignored.counts["(more)"] == 5


def test_checks_are_off_unless_debug_logging_is_on() -> None:
    ignored, logger = _counter(logging.INFO)
    assert not ignored.enabled
    logger.setLevel(logging.DEBUG)
    assert ignored.enabled


def test_a_message_that_is_not_json_is_not_counted_and_does_not_raise() -> None:
    ignored, _ = _counter(logging.DEBUG)
    ignored.check("x", b"{nope", v2.CancelSessionNotification)
    assert not ignored.counts


def test_a_message_nested_too_deep_to_walk_is_not_counted_and_does_not_raise() -> None:
    ignored, _ = _counter(logging.DEBUG)
    deep = b'{"sessionId":"s","prompt":' + b"[" * 5000 + b"]" * 5000 + b"}"
    ignored.check("session/prompt", deep, v2.PromptRequest)
    assert not ignored.counts
