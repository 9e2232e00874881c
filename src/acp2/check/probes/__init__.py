"""The probes of ``acp2 check``, in the order they are started: :data:`PROBES` for a v2
agent, :data:`V1_PROBES` for an agent that answered protocol version 1."""

from __future__ import annotations

from typing import Final

from acp2.check.probes.background import BACKGROUND_PROBES
from acp2.check.probes.base import ProbeSpec
from acp2.check.probes.cancel import CANCEL_PROBES
from acp2.check.probes.content import CONTENT_PROBES
from acp2.check.probes.handshake import HANDSHAKE_PROBES
from acp2.check.probes.jsonrpc import JSONRPC_PROBES
from acp2.check.probes.malformed import MALFORMED_PROBES
from acp2.check.probes.permission import PERMISSION_PROBES
from acp2.check.probes.preview import PREVIEW_PROBES
from acp2.check.probes.prompt import PROMPT_PROBES
from acp2.check.probes.sessions import SESSION_PROBES
from acp2.check.probes.shutdown import SHUTDOWN_PROBES
from acp2.check.probes.v1 import V1_PROBES

__all__ = ["PROBES", "V1_PROBES"]

#: Every probe by name. The slow ones (turns, permission) come first so that they
#: start early when ``--jobs`` limits how many agent processes run at once.
PROBES: Final[dict[str, ProbeSpec]] = {
    spec.name: spec
    for spec in (
        *PROMPT_PROBES,
        *CANCEL_PROBES,
        *SESSION_PROBES,
        *PREVIEW_PROBES,
        *PERMISSION_PROBES,
        *CONTENT_PROBES,
        *HANDSHAKE_PROBES,
        *JSONRPC_PROBES,
        *BACKGROUND_PROBES,
        *MALFORMED_PROBES,
        *SHUTDOWN_PROBES,
    )
}
