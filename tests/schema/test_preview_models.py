"""The Preview's unstable models (issue 28): each decodes from a sample written from its
published shape and re-encodes byte for byte, ``_meta`` included; malformed optional
values read as absent; and nothing new is sent unless a caller sets it.

What survives a round trip: every modelled field, ``_meta``, and unknown *variants* of
open unions (kept raw). An unknown *field* of a known type is dropped at decode (msgspec
Structs keep only declared fields); the fields real agents send (claude-agent-acp,
codex-acp) are modelled so that they are kept -- see docs/preview.md.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import acp2.schema as schema
from acp2.agent.capabilities import build_initialize_response
from acp2.agent.settings import AgentSettings
from acp2.schema import UNSET, codec
from acp2.schema.methods import AUTH_STATUS_UPDATE, METHODS, UNSTABLE
from schema_validation import validate_frame

# (type, sample): every sample lists its keys in the model's field order, so the
# re-encoded bytes equal the input.
SAMPLES: list[tuple[Any, str]] = [
    (
        schema.SessionMessage,
        '{"sessionUpdate":"session_message","messageId":"m1","senderSessionId":"p",'
        '"recipientSessionId":"c","senderMessageId":null,"recipientMessageId":"cm1",'
        '"content":[{"type":"text","text":"go"}],"_meta":{"k":1}}',
    ),
    (
        schema.SessionMessageChunk,
        '{"sessionUpdate":"session_message_chunk","messageId":"m1","senderSessionId":"c",'
        '"content":{"type":"text","text":"done"},"_meta":{"chunk":true}}',
    ),
    (
        schema.StateUpdate,
        '{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn",'
        '"usage":{"totalTokens":30,"inputTokens":20,"outputTokens":10,"thoughtTokens":4,'
        '"cachedReadTokens":15,"cachedWriteTokens":2,"_meta":{"model":"m"}}}',
    ),
    (
        schema.SubagentUpdate,
        '{"sessionUpdate":"subagent_update","sessionId":"c","capabilities":{"cancel":{}},'
        '"state":{"state":"idle","usage":{"totalTokens":3,"inputTokens":2,"outputTokens":1}}}',
    ),
    (
        schema.AgentCapabilities,
        '{"auth":{"status":{}},"session":{"systemPrompt":{"mode":{"override":{}}},'
        '"fork":{},"archive":{},"status":{},"title":{"_meta":{"x":1}}},"providers":{}}',
    ),
    (
        schema.NewSessionRequest,
        '{"cwd":"/w","systemPrompt":{"mode":"append","content":[{"type":"text","text":"Be'
        ' brief."}]}}',
    ),
    (
        schema.ResumeSessionRequest,
        '{"sessionId":"s","cwd":"/w","replayFrom":{"type":"start"},'
        '"systemPrompt":{"mode":"override","content":[]}}',
    ),
    (
        schema.ForkSessionRequest,
        '{"sessionId":"s","cwd":"/w","additionalDirectories":["/lib"],"mcpServers":[],'
        '"systemPrompt":{"mode":"append","content":[]},"_meta":{}}',
    ),
    (schema.ForkSessionResponse, '{"sessionId":"s2","configOptions":[]}'),
    (schema.ArchiveSessionRequest, '{"sessionId":"s"}'),
    (schema.ArchiveSessionResponse, "{}"),
    (schema.UnarchiveSessionRequest, '{"sessionId":"s","_meta":null}'),
    (schema.UnarchiveSessionResponse, "{}"),
    (schema.SetSessionTitleRequest, '{"sessionId":"s","title":"Fix the parser"}'),
    (schema.SetSessionTitleResponse, '{"title":"Fix the parser"}'),
    (schema.AuthStatusRequest, "{}"),
    (
        schema.AuthStatusResponse,
        '{"state":"authenticated","accounts":[{"label":"Team","active":true,"name":"Ann",'
        '"email":"a@example.com","organization":"Acme"},{"label":"API key"}]}',
    ),
    (schema.AuthStatusUpdateNotification, '{"state":"_vendor_state","_meta":{"v":2}}'),
]


@pytest.mark.parametrize(("tp", "sample"), SAMPLES, ids=[tp.__name__ for tp, _ in SAMPLES])
def test_each_new_type_round_trips_byte_for_byte_with_its_meta(tp: Any, sample: str) -> None:
    value = codec.decode(sample.encode(), tp)
    assert isinstance(value, tp)
    assert codec.encode(value) == sample.encode()


def test_the_new_session_updates_decode_to_their_classes_inside_the_union() -> None:
    for tp, sample in SAMPLES[:4]:
        params = f'{{"sessionId":"p","update":{sample}}}'.encode()
        note = codec.decode(params, schema.UpdateSessionNotification)
        assert type(note.update) is tp
        assert codec.encode(note) == params


def test_a_malformed_usage_or_capability_reads_as_not_reported() -> None:
    update = codec.decode(
        b'{"sessionUpdate":"state_update","state":"idle","usage":{"totalTokens":-1}}',
        schema.StateUpdate,
    )
    assert update.usage is UNSET
    usage = codec.decode(
        b'{"totalTokens":3,"inputTokens":2,"outputTokens":1,"thoughtTokens":"many"}',
        schema.Usage,
    )
    assert usage.thought_tokens is UNSET
    caps = codec.decode(
        b'{"session":{"fork":true,"title":{}},"providers":[]}', schema.AgentCapabilities
    )
    assert caps.session.fork is UNSET
    assert caps.providers is UNSET
    assert schema.supports(caps.session.title)


def test_a_chunk_without_content_is_an_error_naming_the_path() -> None:
    with pytest.raises(ValueError, match="content"):
        codec.decode(
            b'{"sessionUpdate":"session_message_chunk","messageId":"m"}', schema.SessionMessageChunk
        )


def test_an_unknown_field_of_a_known_type_is_dropped_and_an_unknown_variant_is_kept() -> None:
    known = codec.decode(
        b'{"sessionUpdate":"session_message","messageId":"m","future":1}', schema.SessionUpdate
    )
    assert codec.encode(known) == b'{"sessionUpdate":"session_message","messageId":"m"}'
    raw = b'{"sessionUpdate":"session_poke","messageId":"m","future":1}'
    assert bytes(codec.encode(codec.decode(raw, schema.SessionUpdate))) == raw


def test_the_fields_real_agents_send_survive_a_decode_and_encode() -> None:
    # Shapes claude-agent-acp 0.101 and codex-acp 2.6 send (issue 28): usage on idle,
    # providers, session fork / title / systemPrompt capabilities.
    init = {
        "protocolVersion": 2,
        "info": {"name": "codex-acp", "version": "2.6.0"},
        "capabilities": {
            "session": {"systemPrompt": {}, "fork": {}, "title": {}},
            "providers": {},
        },
    }
    raw = json.dumps(init).encode()
    assert json.loads(codec.encode(codec.decode(raw, schema.InitializeResponse))) == init


def test_the_unstable_methods_decode_their_params_through_the_table() -> None:
    spec = METHODS["auth/status_update"]
    assert spec is AUTH_STATUS_UPDATE
    assert spec.kind == "notification"
    assert spec.sender == "agent"
    note = codec.decode(b'{"state":"unauthenticated"}', spec.params_type)
    assert note.state == "unauthenticated"
    assert note.accounts is UNSET
    mcp_over_acp = {name for name in UNSTABLE if name.startswith("mcp/")}
    assert mcp_over_acp == {"mcp/connect", "mcp/message", "mcp/disconnect"}
    others = UNSTABLE - {"auth/status_update"} - mcp_over_acp
    assert {METHODS[name].sender for name in others} == {"client"}


_NEW_CAPABILITY_KEYS = {"providers", "systemPrompt", "fork", "archive", "status", "title"}


def _keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


def test_acp2s_initialize_advertises_only_fork_archive_title_and_every_draft_accepts_it() -> None:
    # Fork, archive and set_title are served by default (acp2.agent.forking, archiving);
    # their capabilities
    # are extra keys every vendored draft allows, so clients that know none of them
    # (TS SDK 2.4, Python SDK 1.0rc3) still accept the answer. The rest stay unsent.
    settings = AgentSettings(
        name="a", prompt_image=True, prompt_audio=True, mcp_stdio=True, mcp_http=True
    )
    response = json.loads(codec.encode(build_initialize_response(settings)))
    new = _keys(response) & (_NEW_CAPABILITY_KEYS | {"usage", "auth"})
    assert new == {"fork", "archive", "title"}
    frame = {"jsonrpc": "2.0", "id": 0, "result": response}
    for draft in ("aug", "nov", "preview"):
        assert validate_frame(frame, "agent", draft, request_methods={0: "initialize"}) == []
    request = json.loads(
        codec.encode(
            schema.InitializeRequest(
                protocol_version=2,
                info=schema.Implementation(name="c", version="1"),
                capabilities=schema.ClientCapabilities(),
            )
        )
    )
    assert not _keys(request) & _NEW_CAPABILITY_KEYS


def test_an_agent_with_the_session_surface_off_advertises_no_unstable_capability() -> None:
    settings = AgentSettings(name="a", fork=False, set_title=False, archive=False)
    response = json.loads(codec.encode(build_initialize_response(settings)))
    assert not _keys(response) & (_NEW_CAPABILITY_KEYS | {"usage", "auth"})


def test_session_requests_carry_no_system_prompt_unless_one_is_set() -> None:
    plain = schema.NewSessionRequest(cwd="/w")
    assert codec.encode(plain) == b'{"cwd":"/w"}'
    resume = schema.ResumeSessionRequest(session_id="s", cwd="/w")
    assert b"systemPrompt" not in codec.encode(resume)
