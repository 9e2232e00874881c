"""The v1 method table's typed constants."""

from __future__ import annotations

import acp2.compat.v1.methods as m
from acp2.compat.v1.schema import (
    CreateTerminalRequest,
    CreateTerminalResponse,
    LoadSessionRequest,
    PromptResponse,
)


def test_each_constant_is_the_table_entry_of_its_wire_name() -> None:
    constants = [
        getattr(m, n) for n in m.__all__ if n.isupper() and n not in ("METHODS", "AGENT_REQUESTS")
    ]
    assert {spec.name for spec in constants} == set(m.METHODS)
    assert all(m.METHODS[spec.name] is spec for spec in constants)


def test_constants_carry_the_v1_models_and_directions() -> None:
    assert m.SESSION_LOAD.params_type is LoadSessionRequest
    assert m.SESSION_PROMPT.result_type is PromptResponse
    assert (m.TERMINAL_CREATE.params_type, m.TERMINAL_CREATE.result_type) == (
        CreateTerminalRequest,
        CreateTerminalResponse,
    )
    assert m.FS_READ_TEXT_FILE.sender == "agent"
    assert m.INITIALIZE.sender == "client"
    assert m.CANCEL_REQUEST.sender == "either"


def test_notifications_have_no_result_type() -> None:
    for spec in (m.SESSION_CANCEL, m.SESSION_UPDATE, m.ELICITATION_COMPLETE, m.CANCEL_REQUEST):
        assert spec.kind == "notification"


def test_agent_requests_are_the_file_and_terminal_methods_a_client_serves() -> None:
    assert sorted(m.AGENT_REQUESTS) == [
        "fs/read_text_file",
        "fs/write_text_file",
        "terminal/create",
        "terminal/kill",
        "terminal/output",
        "terminal/release",
        "terminal/wait_for_exit",
    ]
    assert all(spec.sender == "agent" for spec in m.AGENT_REQUESTS.values())


def test_read_only_methods_are_safe_to_retry_and_prompts_are_not() -> None:
    assert m.FS_READ_TEXT_FILE.retry == "safe"
    assert m.SESSION_PROMPT.retry == "never"
