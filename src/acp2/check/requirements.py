"""The requirement rows ``acp2 check`` judges, with the text the report prints.

Each :class:`Requirement` is one row of the report. ``key`` is unique; ``id`` is the
requirement id it cites (several rows may cite one id; the prefixes are areas: ``TR``
transport, ``IN`` initialization, ...), and ``text`` says the requirement itself, so the
report needs no document outside the package. ``drafts`` says which draft the row applies
to: a row of every draft is judged the same way under each; a row of some drafts only
exists because the drafts disagree there, and ``diff`` names the difference (``D-01`` ...,
explained in :data:`DIFFERENCES`). ``counterpart`` is the row of the other side of that
difference that judges the same observation, so the report can say how the agent fares
there. ``preview`` follows ``nov`` everywhere the two have rows (the Preview kept the TS
SDK 2.4.0 wire); only its schema differs (``SCHEMA:preview``).

An agent that answers protocol version 1 is judged as ACP v1 instead: the rows of
:data:`V1` (keys and ids ``V1-...``) apply, and no v2 row does. The generic JSON-RPC
probes judge v1 agents too; :data:`V1_KEYS` says which v1 row each of their v2 rows
becomes.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from acp2.check import catalog

__all__ = [
    "BOTH_DRAFTS_ADVICE",
    "DIFFERENCES",
    "DRAFTS",
    "DRAFT_NAMES",
    "DRAFT_SOURCES",
    "REQUIREMENTS",
    "SPEC_URL",
    "V1",
    "V1_KEYS",
    "V1_NAME",
    "V1_SPEC_URL",
    "Level",
    "Requirement",
    "requirement",
]

#: The drafts a row can apply to: ACP v2 alpha.3 (default), the TS SDK 2.4.0 draft and
#: the ACP v2 Preview as modelled here (see ``schemas/README.md``).
DRAFTS: Final = ("aug", "nov", "preview")
#: What each draft is (see ``schemas/README.md`` for where its shipped schema comes from).
DRAFT_NAMES: Final = {
    "aug": "ACP v2 alpha.3 (Aug 2026)",
    "nov": "TypeScript SDK 2.4.0 (Nov 2026)",
    "preview": "ACP v2 Preview (2026-11-20)",
}
#: Where each draft's shipped schema comes from, in a few words (the report header).
DRAFT_SOURCES: Final = {
    "aug": "schema 2.0.0-alpha.3, spec commit b7f00054",
    "nov": "the v2 schema of @agentclientprotocol/sdk 2.4.0",
    "preview": "modelled: the nov schema with subagents made baseline v2",
}
#: The judging of an agent that answered protocol version 1 (its rows apply to this only).
V1: Final = "v1"
#: The public ACP v1 pages.
V1_SPEC_URL: Final = "https://agentclientprotocol.com/protocol/v1/overview"
#: What a report judged as ACP v1 is called (``draft_name`` in the JSON report).
V1_NAME: Final = "ACP v1 (the agent answered protocol version 1)"
#: The public ACP v2 pages (what changed from v1, with links to every v2 page).
SPEC_URL: Final = "https://agentclientprotocol.com/protocol/v2/migration"
#: Where the drafts disagree on the wire, for the ``diff`` ids the rows cite: what ``aug``
#: expects, then what ``nov`` expects (texts from the requirement list, acp2.check.catalog).
DIFFERENCES: Final = {
    diff: catalog.load().text(diff)
    for diff in ("D-01", "D-05", "D-09", "D-10", "D-14", "D-15", "D-25", "D-34")
}
#: What an agent does to work with clients of both drafts.
BOTH_DRAFTS_ADVICE: Final = (
    "to work with clients of both drafts: answer session/prompt with {messageId}, never "
    "send batches, and send a state_update before a resume response"
)
#: The rows every draft has (the name is older than the third draft).
BOTH: Final = DRAFTS


class Level(StrEnum):
    """How much a failure weighs in the verdict."""

    MUST = "MUST"  #: a failure makes the agent NOT CONFORMANT
    SHOULD = "SHOULD"  #: reported, never changes the verdict
    CAP = "CAP"  #: MUST once the agent advertises the capability; SKIP otherwise
    INFO = "INFO"  #: an observation, never a failure of the agent


@dataclass(frozen=True)
class Requirement:
    """One row: what is checked, how much it weighs, and under which draft."""

    key: str
    id: str
    level: Level
    text: str
    drafts: tuple[str, ...] = BOTH
    diff: str | None = None
    counterpart: str | None = None
    capability: str | None = None

    def applies_to(self, draft: str) -> bool:
        """True when this row is judged under ``draft``."""
        return draft in self.drafts

    @property
    def draft_label(self) -> str:
        """``all`` (every v2 draft), ``nov+`` (nov and the Preview), or the one draft this
        row comes from (``v1`` for a v1 row)."""
        if self.drafts == DRAFTS:
            return "all"
        return "nov+" if self.drafts == NOV else self.drafts[0]


M, S, C, INF = Level.MUST, Level.SHOULD, Level.CAP, Level.INFO
#: Aug's rows, and the rows of Nov that the Preview keeps.
AUG, NOV = ("aug",), ("nov", "preview")

_ROWS: Final[tuple[Requirement, ...]] = (
    # -- handshake -----------------------------------------------------------------
    Requirement("IN-03", "IN-03", M, "initialize answers protocolVersion, info and capabilities"),
    Requirement("IN-15", "IN-15", M, "info carries a string name and version (title optional)"),
    Requirement("IN-07", "IN-07", M, "capability markers are objects or null, never booleans"),
    Requirement("IN-10", "IN-10", INF, "advertised capabilities"),
    Requirement("IN-04:2", "IN-04", M, "protocolVersion 2 is echoed"),
    Requirement(
        "IN-04:65535", "IN-04", M, "protocolVersion 65535 gets a result with the agent's newest"
    ),
    Requirement(
        "IN-04:1:aug",
        "IN-04",
        M,
        "protocolVersion 1 gets a result: 1 if supported, else the newest (never an error)",
        AUG,
        "D-05",
        "IN-04:1:nov",
    ),
    Requirement(
        "IN-04:1:nov",
        "IN-04",
        M,
        "protocolVersion 1 gets a version <= 1, or -32022 with data {requested, supported}",
        NOV,
        "D-05",
        "IN-04:1:aug",
    ),
    # -- JSON-RPC hygiene ------------------------------------------------------------
    Requirement("TR-09", "TR-09", M, "every request is answered once, echoing its id and id type"),
    Requirement("TR-08", "TR-08", M, "notifications are never answered (MUST NOT)"),
    Requirement("TR-22", "TR-22", M, "$/cancel_request for an unknown id gets no reply"),
    Requirement("TR-11", "TR-11", S, "unknown and removed v1 methods get -32601"),
    Requirement("EX-04", "EX-04", M, "an unknown `_` extension request gets -32601 with its id"),
    Requirement(
        "EX-04:notes",
        "EX-04",
        INF,
        "notifications the agent sent on its own (never counted as answers)",
    ),
    Requirement("TR-12", "TR-12", M, "error objects carry an integer code and a string message"),
    Requirement("TR-13:json", "TR-13", M, "invalid JSON gets -32700 with id null; link stays up"),
    Requirement(
        "TR-13:request", "TR-13", M, "a non-request object gets -32600, id null; link stays up"
    ),
    Requirement("TR-01:utf8", "TR-01", S, "a line of invalid UTF-8 leaves the link usable"),
    Requirement(
        "TR-14:empty", "TR-14", M, "an empty batch [] gets one -32600 object, not an array"
    ),
    Requirement(
        "TR-14:notifications",
        "TR-14",
        M,
        "a batch of notifications gets no reply at all",
        AUG,
        "D-01",
        "D-01:nov",
    ),
    Requirement(
        "TR-14:mixed",
        "TR-14",
        S,
        "a mixed batch gets one array: a response per request, -32600 for a bad entry",
        AUG,
        "D-01",
        "D-01:nov",
    ),
    Requirement(
        "D-01:nov",
        "TR-14",
        S,
        "a batch gets one -32600 (id null) and nothing in it runs",
        NOV,
        "D-01",
        "TR-14:notifications",
    ),
    # -- stdout and schema -----------------------------------------------------------
    Requirement("TR-03", "TR-03", M, "nothing but JSON-RPC messages on stdout (MUST NOT)"),
    Requirement("TR-01", "TR-01", M, "every stdout line is one UTF-8 JSON-RPC 2.0 message"),
    Requirement(
        "SCHEMA:aug",
        "SCHEMA",
        M,
        "every frame validates against acp-v2-aug.json (a v1 answer: acp-v1.json)",
        AUG,
        "schema",
        "SCHEMA:nov",
    ),
    Requirement(
        "SCHEMA:nov",
        "SCHEMA",
        M,
        "every frame validates against acp-v2-nov.json (a v1 answer: acp-v1.json)",
        ("nov",),
        "schema",
        "SCHEMA:aug",
    ),
    Requirement(
        "SCHEMA:preview",
        "SCHEMA",
        M,
        "every frame validates against acp-v2-preview.json",
        ("preview",),
        "schema",
        "SCHEMA:nov",
    ),
    # -- sessions ----------------------------------------------------------------------
    Requirement(
        "SS-03", "SS-03", C, "session/new returns a unique string sessionId", capability="session"
    ),
    Requirement(
        "SS-18",
        "SS-18",
        C,
        "session/list returns sessions [{sessionId, cwd}]",
        capability="session",
    ),
    Requirement(
        "SS-10", "SS-10", C, "session/resume without replayFrom succeeds", capability="session"
    ),
    Requirement(
        "SS-11",
        "SS-11",
        C,
        "resume without replayFrom sends no history first",
        capability="session",
    ),
    Requirement(
        "SS-12",
        "SS-12",
        C,
        "resume from start replays history (with messageIds) before answering",
        capability="session",
    ),
    Requirement(
        "SS-16:nov",
        "SS-16",
        M,
        "resume sends a state_update before its response",
        NOV,
        "D-14",
    ),
    Requirement("SS-22", "SS-22", C, "session/close answers {}", capability="session"),
    Requirement(
        "SS-23",
        "SS-23",
        C,
        "session/delete answers {} and the session leaves the list",
        capability="session.delete",
    ),
    Requirement("SS-23:again", "SS-23", S, "deleting a deleted session succeeds"),
    # -- the Preview's unstable surface (acp2.check.probes.preview) ----------------------
    Requirement(
        "SS-27",
        "SS-27",
        C,
        "session/fork answers a new sessionId that replays the source's history",
        capability="session.fork",
    ),
    Requirement(
        "SS-28",
        "SS-28",
        C,
        "session/set_title answers the stored title",
        capability="session.title",
    ),
    Requirement(
        "IN-19",
        "IN-19",
        C,
        "providers/list answers providers with ids, protocols and secret-free routing",
        capability="providers",
    ),
    Requirement(
        "SS-29",
        "SS-29",
        M,
        "replay_complete at most once per session per replaying resume, none without replayFrom",
    ),
    Requirement("US-05", "US-05", M, "usage on an idle has non-negative integer token counts"),
    # -- subagents (acp2.check.audit_subagents) ----------------------------------------
    Requirement(
        "SS-30",
        "SS-30",
        M,
        "subagent_update names a child, not its parent, before its updates",
    ),
    Requirement("SS-31", "SS-31", M, "session message chunks carry one block, upserts an array"),
    Requirement("SS-32", "SS-32", M, "session content in a tool call names a known session"),
    # -- prompt lifecycle ----------------------------------------------------------------
    Requirement("PL-03", "PL-03", M, "session/prompt is answered with a result before the idle"),
    Requirement(
        "PL-03:nov", "PL-03", M, "the prompt result carries messageId", NOV, "D-09", "D-09:aug"
    ),
    Requirement(
        "D-09:aug",
        "PL-03",
        INF,
        "the prompt result carries messageId (Nov clients need it)",
        AUG,
        "D-09",
        "PL-03:nov",
    ),
    Requirement("PL-04", "PL-04", M, "the prompt is acknowledged by user_message with messageId"),
    Requirement(
        "PL-04:nov",
        "PL-04",
        M,
        "the user_message id equals the prompt result's messageId",
        NOV,
        "D-09",
    ),
    Requirement("PL-06", "PL-06", M, "state_update running is sent when work starts"),
    Requirement("PL-07", "PL-07", M, "every turn ends with idle carrying a stopReason"),
    Requirement("PL-10", "PL-10", M, "stop reasons are known values or start with `_`"),
    Requirement("PL-24", "PL-24", S, "exactly one idle per turn"),
    Requirement("MU-01", "MU-01", M, "every message update and chunk has a string messageId"),
    Requirement("MU-02", "MU-02", M, "distinct messages of one kind have distinct ids"),
    Requirement(
        "MU-02:aug",
        "MU-02",
        M,
        "user, agent and thought messages never share an id",
        AUG,
        "D-25",
        "D-25:nov",
    ),
    Requirement(
        "D-25:nov",
        "MU-02",
        S,
        "user, agent and thought messages never share an id",
        NOV,
        "D-25",
        "MU-02:aug",
    ),
    Requirement("MU-05", "MU-05", M, "patch shapes: chunks carry one block, upserts an array"),
    Requirement("CO-10", "CO-10", M, "every config option list names each configId once"),
    # -- prompt content ------------------------------------------------------------------
    Requirement(
        "IN-11",
        "IN-11",
        C,
        "text and resource_link prompt blocks are accepted",
        capability="session",
    ),
    Requirement(
        "PL-02:image",
        "PL-02",
        C,
        "an image prompt block is accepted",
        capability="session.prompt.image",
    ),
    Requirement(
        "PL-02:audio",
        "PL-02",
        C,
        "an audio prompt block is accepted",
        capability="session.prompt.audio",
    ),
    Requirement(
        "PL-02:resource",
        "PL-02",
        C,
        "an embedded resource prompt block is accepted",
        capability="session.prompt.embeddedContext",
    ),
    Requirement(
        "PL-02:nov", "PL-02", M, "an unadvertised prompt block type gets -32602", NOV, "D-10"
    ),
    # -- cancel and permission -----------------------------------------------------------
    Requirement("PL-18", "PL-18", M, "session/cancel ends the turn with idle `cancelled`"),
    Requirement("PL-19", "PL-19", M, "a cancel is never reported as an error"),
    Requirement("PL-20", "PL-20", M, "nothing for the turn follows its idle `cancelled`"),
    Requirement("PL-22", "PL-22", S, "the session takes a new prompt after a cancel"),
    Requirement("PR-02", "PR-02", M, "a permission request has a title and options"),
    Requirement("PL-09", "PL-09", S, "requires_action while waiting on permission, then running"),
    Requirement(
        "PL-18:permission", "PL-18", M, "cancel during a permission request ends idle `cancelled`"
    ),
    Requirement(
        "PL-16:nov",
        "PL-16",
        S,
        "on cancel the agent sends $/cancel_request for its permission",
        NOV,
        "D-15",
    ),
    # -- background work (Nov, Preview) ---------------------------------------------
    Requirement(
        "TC-13:unknown",
        "TC-13",
        M,
        "tool_call/cancel of an unknown call gets an error; the link stays up",
        NOV,
        "D-34",
    ),
    Requirement(
        "TM-10:unknown",
        "TM-10",
        M,
        "terminal/cancel of an unknown terminal gets an error; the link stays up",
        NOV,
        "D-34",
    ),
    # -- shutdown ---------------------------------------------------------------------
    Requirement("TR-06", "TR-06", S, "the agent exits promptly when stdin closes while idle"),
    Requirement("TR-06:busy", "TR-06", S, "the agent exits promptly when stdin closes mid-turn"),
)

ONE: Final = (V1,)

#: The rows of an agent judged as ACP v1 (it answered protocol version 1).
_V1_ROWS: Final[tuple[Requirement, ...]] = (
    # -- handshake ---------------------------------------------------------------------
    Requirement(
        "V1-IN-01", "V1-IN-01", M, "initialize answers in v1's shape (agentCapabilities...)", ONE
    ),
    Requirement(
        "V1-IN-02", "V1-IN-02", M, "protocolVersion 1, 2 and 65535 are all answered 1", ONE
    ),
    Requirement("V1-IN-03", "V1-IN-03", INF, "advertised capabilities", ONE),
    # -- JSON-RPC hygiene (the generic probes, see V1_KEYS) ----------------------------
    Requirement(
        "V1-TR-09", "V1-TR-09", M, "every request is answered once, echoing its id and type", ONE
    ),
    Requirement("V1-TR-08", "V1-TR-08", M, "notifications are never answered (MUST NOT)", ONE),
    Requirement("V1-TR-11", "V1-TR-11", S, "an unknown method gets -32601", ONE),
    Requirement(
        "V1-EX-04", "V1-EX-04", M, "an unknown `_` extension request gets -32601 with its id", ONE
    ),
    Requirement("V1-EX-04:notes", "V1-EX-04", INF, "notifications the agent sent on its own", ONE),
    Requirement(
        "V1-TR-12", "V1-TR-12", M, "error objects carry an integer code and a message", ONE
    ),
    Requirement(
        "V1-TR-13:json", "V1-TR-13", M, "invalid JSON gets -32700 with id null; link stays up", ONE
    ),
    Requirement(
        "V1-TR-13:request", "V1-TR-13", M, "a non-request object gets -32600, id null", ONE
    ),
    Requirement(
        "V1-TR-01:utf8", "V1-TR-01", S, "a line of invalid UTF-8 leaves the link usable", ONE
    ),
    Requirement("V1-TR-03", "V1-TR-03", M, "nothing but JSON-RPC messages on stdout", ONE),
    Requirement("V1-TR-01", "V1-TR-01", M, "every stdout line is one JSON-RPC 2.0 message", ONE),
    Requirement("V1-SCHEMA", "SCHEMA", M, "every frame validates against acp-v1.json", ONE),
    # -- sessions and turns ------------------------------------------------------------
    Requirement("V1-SS-01", "V1-SS-01", M, "session/new returns a string sessionId", ONE),
    Requirement(
        "V1-SS-02",
        "V1-SS-02",
        C,
        "session/load replays the conversation, then answers",
        ONE,
        capability="loadSession",
    ),
    Requirement(
        "V1-PL-01",
        "V1-PL-01",
        M,
        "session/prompt is answered when the turn ends, with a stopReason",
        ONE,
    ),
    Requirement(
        "V1-PL-02", "V1-PL-02", M, "a turn's updates all come before its prompt response", ONE
    ),
    Requirement("V1-PL-03", "V1-PL-03", M, "stop reasons are v1's known values", ONE),
    Requirement(
        "V1-PL-04", "V1-PL-04", M, "session/cancel: the held prompt is answered `cancelled`", ONE
    ),
    Requirement("V1-PL-05", "V1-PL-05", M, "a cancel is never answered with an error", ONE),
    Requirement("V1-PL-06", "V1-PL-06", S, "the session takes a new prompt after a cancel", ONE),
    Requirement(
        "V1-PR-01", "V1-PR-01", M, "a permission request names its toolCall and options", ONE
    ),
    Requirement(
        "V1-PL-04:permission",
        "V1-PL-04",
        M,
        "cancel during a permission request: the prompt is answered `cancelled`",
        ONE,
    ),
    Requirement(
        "V1-TR-06", "V1-TR-06", S, "the agent exits promptly when stdin closes while idle", ONE
    ),
)

#: The v1 row each v2 row of the generic probes (and the audit) becomes for a v1 agent.
V1_KEYS: Final = {
    "TR-09": "V1-TR-09",
    "TR-08": "V1-TR-08",
    "TR-22": "V1-TR-08",
    "TR-11": "V1-TR-11",
    "EX-04": "V1-EX-04",
    "EX-04:notes": "V1-EX-04:notes",
    "TR-12": "V1-TR-12",
    "TR-13:json": "V1-TR-13:json",
    "TR-13:request": "V1-TR-13:request",
    "TR-01:utf8": "V1-TR-01:utf8",
    "TR-03": "V1-TR-03",
    "TR-01": "V1-TR-01",
    "TR-06": "V1-TR-06",
    "SS-03": "V1-SS-01",
}

#: Every row, by key, in report order.
REQUIREMENTS: Final[dict[str, Requirement]] = {r.key: r for r in (*_ROWS, *_V1_ROWS)}


def requirement(key: str) -> Requirement:
    """Return the row with this key; raises ``KeyError`` for an unknown key."""
    return REQUIREMENTS[key]
