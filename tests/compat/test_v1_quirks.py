"""The table of what known v1 agents need beyond the schema (acp2.compat.v1.quirks)."""

from __future__ import annotations

import acp2.compat.v1.schema as v1
from acp2.compat.v1.quirks import AgentQuirks, quirks_for


def answer(info: v1.Implementation | None) -> v1.InitializeResponse:
    return v1.InitializeResponse(protocol_version=1, agent_info=info)


def test_gemini_cli_reads_a_missing_file_as_empty() -> None:
    info = v1.Implementation(name="gemini-cli", title="Gemini CLI", version="0.61.0")
    assert quirks_for(answer(info)).missing_file_empty is True


def test_an_unknown_or_unnamed_agent_gets_the_plain_v1_behaviour() -> None:
    assert quirks_for(answer(v1.Implementation(name="fast-agent", version="1"))) == AgentQuirks()
    assert quirks_for(answer(None)) == AgentQuirks()
    assert quirks_for(v1.InitializeResponse(protocol_version=1)) == AgentQuirks()
