"""Subagents across v1 (``protocol/v1/subagents``): acp2's client opts in
(``clientCapabilities.subagents``) and lifts a v1 agent's subagent updates as the v2
ones; for a v1 client that did not opt in, a child's agent text is folded into the
parent's tool call that names the child (:mod:`acp2.compat.v1.project_children`)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from msgspec import Raw
from v1_check import assert_v1

import acp2.compat.v1.schema as v1
import acp2.schema as v2
from acp2.compat.v1 import handshake
from acp2.compat.v1.lift import V1Lifter
from acp2.compat.v1.project_children import ChildFolder, wants_subagents
from acp2.schema.codec import decode


def test_acp2s_client_offers_subagents_to_a_v1_agent() -> None:
    request = v2.InitializeRequest(
        protocol_version=2, info=v2.Implementation(name="acp2", version="0.1")
    )
    sent = assert_v1(handshake.initialize_request_to_v1(request), "InitializeRequest")
    assert sent["clientCapabilities"]["subagents"] == {}


def test_a_v1_clients_opt_in_is_read_from_its_capabilities() -> None:
    def caps(body: dict[str, Any]) -> Any:
        return decode(json.dumps(body).encode(), v1.ClientCapabilities)

    assert wants_subagents(caps({"subagents": {}}))
    assert not wants_subagents(caps({}))
    assert not wants_subagents(caps({"subagents": None}))
    assert not wants_subagents(None)


def test_a_v1_agents_subagent_updates_lift_to_the_v2_models_and_name_the_child() -> None:
    lifter = V1Lifter("s1")
    announce = Raw(b'{"sessionUpdate":"subagent_update","sessionId":"c1","title":"Helper"}')
    (lifted,) = lifter.lift(announce)
    assert lifted == v2.SubagentUpdate(session_id="c1", title="Helper")
    assert lifter.children == ["c1"]
    message = Raw(
        b'{"sessionUpdate":"session_message","messageId":"m1","senderSessionId":"s1",'
        b'"recipientSessionId":"c1","content":[{"type":"text","text":"go"}]}'
    )
    (lifted,) = lifter.lift(message)
    assert type(lifted) is v2.SessionMessage
    assert lifted.recipient_session_id == "c1"
    broken = Raw(b'{"sessionUpdate":"subagent_update","title":"no id"}')
    assert lifter.lift(broken) == [broken]  # kept raw, counted
    assert lifter.unknown["subagent_update"] == 1


def _chunk(text: str) -> v2.AgentMessageChunk:
    return v2.AgentMessageChunk(message_id="m", content=v2.TextContent(text=text))


def test_a_childs_text_is_folded_into_the_call_that_names_it_and_the_rest_counted() -> None:
    dropped: Counter[str] = Counter()
    folder = ChildFolder(dropped)
    folder.note("s1", v2.SubagentUpdate(session_id="c1"))
    assert "c1" in folder
    assert folder.fold("c1", _chunk("early")) is None  # no call names it yet
    link = v2.ToolCallContentChunk(tool_call_id="t1", content=v2.SessionReference(session_id="c1"))
    folder.note("s1", link)
    parent, chunk = folder.fold("c1", _chunk("found it"))  # type: ignore[misc]
    assert parent == "s1"
    assert chunk == v2.ToolCallContentChunk(
        tool_call_id="t1", content=v2.Content(content=v2.TextContent(text="found it"))
    )
    assert folder.fold("c1", v2.StateUpdate(state="idle")) is None
    assert dropped == Counter({"subagent.unlinked": 1, "subagent.update": 1})
