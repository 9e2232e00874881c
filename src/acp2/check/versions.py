"""Which protocol version an ``initialize`` answer speaks, and what the checker sends (pure).

The two versions name the same things differently: a v2 result must carry ``info`` and
names its capabilities ``capabilities``; a v1 result has no required ``info`` and names
them ``agentCapabilities`` / ``agentInfo``. A result is judged as v1 when it has no
``info`` and either says ``protocolVersion`` 1 or uses v1's names (a v1 agent that echoes
the requested number back). Everything else is judged as v2, as before.

The checker's own ``initialize`` for version 1 is valid under v1 *and* under every v2
draft: it carries v1's ``clientInfo`` / ``clientCapabilities`` and v2's ``info`` /
``capabilities`` (neither schema forbids the other's keys), so a dual-version agent may
answer it either way and be judged by the version it picked.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["CLIENT_INFO", "V1_NAMES", "V1_STOP_REASONS", "initialize_params", "is_v1_result"]

CLIENT_INFO: Final = {"name": "acp2-check", "title": "acp2 check", "version": "1"}
#: The keys only a v1 ``initialize`` result has.
V1_NAMES: Final = ("agentCapabilities", "agentInfo")
#: v1's ``StopReason`` (a closed set in the v1 schema).
V1_STOP_REASONS: Final = frozenset(
    {"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"}
)
#: v1 client capabilities saying the checker serves no file system and no terminals.
_V1_CLIENT_CAPABILITIES: Final = {
    "fs": {"readTextFile": False, "writeTextFile": False},
    "terminal": False,
}


def initialize_params(version: int) -> dict[str, Any]:
    """The ``initialize`` params asking for ``version``: v2's shape for 2 and above (what a
    v2 client sends), both shapes at once for anything lower (see the module)."""
    params: dict[str, Any] = {"protocolVersion": version, "info": CLIENT_INFO, "capabilities": {}}
    if version < 2:
        params["clientInfo"] = CLIENT_INFO
        params["clientCapabilities"] = _V1_CLIENT_CAPABILITIES
    return params


def is_v1_result(result: Any) -> bool:
    """True when an ``initialize`` result is in v1's shape (see the module)."""
    if not isinstance(result, dict) or "info" in result:
        return False
    version = result.get("protocolVersion")
    return (type(version) is int and version == 1) or any(k in result for k in V1_NAMES)
