"""What known v1 agents need of a client beyond what the v1 schema says, by agent name.

The client side reads the agent's ``initialize`` answer (``agentInfo.name``) once and
serves that agent the way it copes with. Each entry was observed with the released
agent named in its comment; an agent not listed gets the plain v1 behaviour.
"""

from __future__ import annotations

from dataclasses import dataclass

import acp2.compat.v1.schema as v1

__all__ = ["AgentQuirks", "quirks_for"]


@dataclass(frozen=True)
class AgentQuirks:
    """How to serve one agent. ``missing_file_empty``: answer ``fs/read_text_file`` of a
    missing file with empty content instead of ``-32002`` (resource not found)."""

    missing_file_empty: bool = False


#: Gemini CLI (0.61.0) reads a file before its write_file tool writes it and treats any
#: JSON-RPC error of that read as fatal: its SDK rejects with the bare error object, so
#: the text test that would map "Resource not found" to ENOENT never matches and every
#: new file fails with "Error checking existing file". An empty file is what it expects
#: (Zed answers a missing path with an empty buffer).
_KNOWN = {"gemini-cli": AgentQuirks(missing_file_empty=True)}

_PLAIN = AgentQuirks()


def quirks_for(result: v1.InitializeResponse) -> AgentQuirks:
    """The quirks of the agent that answered ``initialize`` with ``result`` (the plain
    v1 behaviour when it gave no ``agentInfo`` or is not known)."""
    info = result.agent_info
    if not isinstance(info, v1.Implementation):
        return _PLAIN
    return _KNOWN.get(info.name, _PLAIN)
