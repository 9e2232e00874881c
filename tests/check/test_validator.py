"""Validation against the shipped schemas, with messages from the branch the tag selects."""

from __future__ import annotations

import sys

import pytest

from acp2.check.validator import MissingJsonschema, SchemaValidator, require_jsonschema


def test_the_prompt_receipt_differs_between_the_drafts() -> None:
    frame = {"jsonrpc": "2.0", "id": 3, "result": {}}
    assert SchemaValidator("aug").check_frame(frame, "session/prompt") is None
    problem = SchemaValidator("nov").check_frame(frame, "session/prompt")
    assert problem == "PromptResponse at (top): 'messageId' is a required property"


@pytest.mark.parametrize("draft", ["aug", "nov"])
def test_a_chunk_without_message_id_is_explained_by_its_own_branch(draft: str) -> None:
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}}
    frame = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s", "update": update},
    }
    problem = SchemaValidator(draft).check_frame(frame, None)
    assert problem == "UpdateSessionNotification at update: 'messageId' is a required property"


def test_agents_may_send_only_what_clients_handle() -> None:
    validator = SchemaValidator("aug")
    prompt = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "session/prompt",
        "params": {"sessionId": "s", "prompt": []},
    }
    assert "not an ACP request an agent may send" in (validator.check_frame(prompt, None) or "")
    ask = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "session/request_permission",
        "params": {
            "sessionId": "s",
            "title": "May I?",
            "options": [{"optionId": "a", "name": "Allow", "kind": "allow_once"}],
        },
    }
    assert validator.check_frame(ask, None) is None
    assert validator.check_frame({"jsonrpc": "2.0", "method": "_x/y"}, None) is None


def test_errors_are_validated_against_the_error_definition() -> None:
    bad = {"jsonrpc": "2.0", "id": 1, "error": {"code": "oops", "message": "m"}}
    assert "Error at code" in (SchemaValidator("nov").check_frame(bad, "initialize") or "")


def test_without_jsonschema_a_clear_install_hint_is_raised(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "jsonschema", None)
    with pytest.raises(MissingJsonschema, match=r"pip install -e '\.\[check\]' in the acp2"):
        require_jsonschema()


def test_the_shipped_v1_schema_is_the_one_the_v1_models_are_tested_against() -> None:
    # check ships its own copy (it does not import acp2.compat's data); the two must agree.
    from importlib import resources

    ours = resources.files("acp2.check").joinpath("schemas", "acp-v1.json").read_bytes()
    theirs = resources.files("acp2.compat.v1").joinpath("schemas", "acp-v1.json").read_bytes()
    assert ours == theirs


def test_v1_frames_are_validated_with_v1_methods_and_sides() -> None:
    validator = SchemaValidator("v1")
    ended = {"jsonrpc": "2.0", "id": 4, "result": {"stopReason": "cancelled"}}
    assert validator.check_frame(ended, "session/prompt") is None
    bad = {"jsonrpc": "2.0", "id": 4, "result": {"stopReason": "done"}}
    assert "PromptResponse at stopReason" in (validator.check_frame(bad, "session/prompt") or "")
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}}
    chunk = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s", "update": update},
    }
    assert validator.check_frame(chunk, None) is None  # v1 chunks need no messageId


@pytest.mark.parametrize("draft", ["aug", "nov", "preview"])
def test_an_unstable_auth_status_update_is_judged_by_its_model_not_reported_unknown(
    draft: str,
) -> None:
    validator = SchemaValidator(draft)
    note = {"jsonrpc": "2.0", "method": "auth/status_update", "params": {"state": "unknown"}}
    assert validator.check_frame(note, None) is None
    bad = {"jsonrpc": "2.0", "method": "auth/status_update", "params": {"accounts": []}}
    assert "state" in (validator.check_frame(bad, None) or "")
    fork = {"jsonrpc": "2.0", "method": "session/fork", "params": {}}
    assert "not an ACP notification an agent may send" in (validator.check_frame(fork, None) or "")
