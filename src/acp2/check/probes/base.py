"""What every probe shares: options, the :class:`Probe` handle, and protocol helpers.

A probe is an async function taking a :class:`Probe`. It opens one or more agent
processes with :meth:`Probe.link`, drives them, and records findings with
:meth:`Probe.ok` / :meth:`Probe.fail` / :meth:`Probe.skip`. Raising :class:`Abort`
ends the probe early; the runner marks its undecided rows SKIP with the reason.

When the run judges a v1 agent (``Shared.version`` 1), the handshake speaks v1 and every
finding for a v2 row of the generic probes is recorded under its v1 row
(:data:`~acp2.check.requirements.V1_KEYS`), so those probes serve both versions unchanged.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from acp2.check.driver import ClientCore, Sent, open_link
from acp2.check.frames import Frame
from acp2.check.options import CheckOptions
from acp2.check.requirements import V1, V1_KEYS
from acp2.check.results import Findings, Status
from acp2.check.timing import Timing
from acp2.check.versions import CLIENT_INFO, initialize_params
from acp2.compat.v1.methods import AUTHENTICATE
from acp2.errors import ProbeAborted as Abort
from acp2.schema.jsonrpc import AUTH_REQUIRED
from acp2.schema.methods import AUTH_LOGIN, INITIALIZE, SESSION_LIST, SESSION_NEW

__all__ = [
    "CLIENT_INFO",
    "Abort",
    "Probe",
    "ProbeSpec",
    "Shared",
    "has_capability",
]


@dataclass
class Shared:
    """State shared by all probes of one run (single event loop: no locking needed)."""

    options: CheckOptions
    findings: Findings
    session_cwd: str
    timing: Timing
    links: list[ClientCore] = field(default_factory=list)
    agent: dict[str, Any] = field(default_factory=dict)
    #: Probes that stopped because the agent did not answer in time, with the reason.
    stalled: dict[str, str] = field(default_factory=dict)
    #: The protocol version the run judges: 1 when the agent answered the first
    #: ``initialize`` (asking for 2) in v1's shape, else 2.
    version: int = 2
    #: The ``methodId`` of every auth method the agent advertised.
    auth_methods: list[str] = field(default_factory=list)

    @property
    def draft(self) -> str:
        """What the rows are judged under: :data:`~acp2.check.requirements.V1` for a v1
        agent, else the selected draft."""
        return V1 if self.version == 1 else self.options.draft

    def key(self, key: str) -> str:
        """The row a finding for ``key`` belongs to in this run (its v1 row for a v1
        agent, when it has one)."""
        return V1_KEYS.get(key, key) if self.version == 1 else key

    def forget(self, probe: str) -> None:
        """Drop what ``probe`` left behind (its findings and its links, whose frames the
        audit would judge) before it is run again: the audit then sees each probe's
        exchanges once, from its last run."""
        self.findings.forget(probe)
        self.links = [k for k in self.links if k.label.partition(":")[0] != probe]


class Probe:
    """The handle a probe function works with."""

    def __init__(self, name: str, shared: Shared, patience: float = 1.0) -> None:
        self.name = name
        self.shared = shared
        self.options = shared.options
        self.cwd = shared.session_cwd
        #: The bound of every single wait (``patience`` times the run's: longer for a
        #: probe rerun alone), and the grace period, of this run.
        self.timeout = shared.timing.timeout * patience
        self.grace = shared.timing.grace

    @asynccontextmanager
    async def link(self, label: str = "") -> AsyncIterator[ClientCore]:
        """Start a fresh agent process for this probe (stopped and reaped on exit)."""
        async with open_link(
            self.options.argv,
            label=f"{self.name}{':' + label if label else ''}",
            wait_limit=self.timeout,
            env=self.options.env,
            remote=self.options.remote,
        ) as link:
            self.shared.links.append(link)
            yield link

    def record(
        self, key: str, status: Status, reason: str, frames: Iterable[Frame | Sent] = ()
    ) -> None:
        """Record a finding for row ``key`` with evidence (frames received or sent)."""
        evidence = [f.evidence() for f in frames]
        self.shared.findings.add(self.shared.key(key), status, reason, evidence, probe=self.name)

    def ok(self, key: str, reason: str = "") -> None:
        """Record a PASS."""
        self.record(key, Status.PASS, reason)

    def fail(self, key: str, reason: str, frames: Iterable[Frame | Sent] = ()) -> None:
        """Record a FAIL with the offending frames."""
        self.record(key, Status.FAIL, reason, frames)

    def skip(self, key: str, reason: str) -> None:
        """Record a SKIP."""
        self.record(key, Status.SKIP, reason)

    def judge(
        self, key: str, passed: bool, reason: str, frames: Iterable[Frame | Sent] = ()
    ) -> None:
        """PASS or FAIL on ``passed``; evidence is kept for failures only."""
        if passed:
            self.ok(key, reason)
        else:
            self.fail(key, reason, frames)

    # -- protocol helpers ------------------------------------------------------------

    async def initialize(self, link: ClientCore, version: int = 2) -> Frame | None:
        """Send ``initialize`` asking for ``version`` (below 2: valid under v1 and v2, see
        :mod:`acp2.check.versions`); the response frame or None. A result in v1's shape
        sets ``link.version`` to 1 (the link does, when the answer arrives).

        A request for 1 waits the measured start-up time longer: a dual-version agent
        may load its v1 code only now, which can cost as much as starting did."""
        link.step(f"initialize v{version}")
        within = self.timeout + (self.shared.timing.startup if version < 2 else 0.0)
        return await link.call(INITIALIZE.name, initialize_params(version), within=within)

    async def handshake(self, link: ClientCore) -> dict[str, Any]:
        """Initialize (version 2; version 1 when the run judges a v1 agent); return the
        capabilities (v1: ``agentCapabilities``). Raises :class:`Abort`."""
        frame = await self.initialize(link, self.shared.version)
        result = frame.value.get("result") if frame else None
        if not isinstance(result, dict):
            error = frame.value.get("error") if frame else None
            raise Abort(f"initialize failed: {error or 'no answer'}{link.exit_note()}")
        caps = result.get("agentCapabilities" if self.shared.version == 1 else "capabilities")
        caps = caps if isinstance(caps, dict) else {}
        link.capabilities = caps
        self.shared.auth_methods = _method_ids(result.get("authMethods"))
        if self.shared.version == 2 and has_capability(caps, "session"):
            link.ping_call = (SESSION_LIST.name, {})
        if self.shared.options.auth is not None:
            await self.log_in(link, self.shared.options.auth)
        return caps

    async def log_in(self, link: ClientCore, method_id: str) -> None:
        """Log in with ``method_id`` (v2 ``auth/login``, v1 ``authenticate``), as
        ``--auth`` asks. Raises :class:`Abort` when the agent refuses."""
        method = AUTHENTICATE.name if self.shared.version == 1 else AUTH_LOGIN.name
        link.step(f"{method} {method_id}")
        frame = await link.call(method, {"methodId": method_id})
        if frame is None or "result" not in frame.value:
            error = frame.value.get("error") if frame else "no answer"
            raise Abort(f"{method} with {method_id!r} failed: {error}{link.exit_note()}")

    def require_session(self, caps: dict[str, Any], keys: Iterable[str]) -> None:
        """Skip ``keys`` and stop the probe unless ``capabilities.session`` is advertised."""
        if not has_capability(caps, "session"):
            for key in keys:
                self.skip(key, "the agent does not advertise capabilities.session")
            raise Abort("no session capability")

    async def new_session(self, link: ClientCore) -> str:
        """Create a session in the checker's directory; its id. Raises :class:`Abort`
        (also when the handshake showed no ``capabilities.session``)."""
        caps = link.capabilities
        if link.version == 2 and caps is not None and not has_capability(caps, "session"):
            raise Abort("the agent does not advertise capabilities.session")
        link.step(SESSION_NEW.name)
        servers = mcp_servers_for(self.options.mcp_servers, caps, link.version)
        frame = await link.call(SESSION_NEW.name, {"cwd": self.cwd, "mcpServers": servers})
        result = frame.value.get("result") if frame else None
        sid = result.get("sessionId") if isinstance(result, dict) else None
        if not isinstance(sid, str):
            error = frame.value.get("error") if frame else None
            if isinstance(error, dict) and error.get("code") == AUTH_REQUIRED:
                why = self._auth_hint(error)
                self.skip("SS-03", why)
                raise Abort(why)
            why = f"session/new failed: {error or 'no answer'}{link.exit_note()}"
            self.fail("SS-03", why, [frame] if frame else [])  # session is advertised (IN-09)
            raise Abort(why)
        return sid

    def _auth_hint(self, error: dict[str, Any]) -> str:
        """The SKIP reason for a ``session/new`` refused with ``-32000``: not the agent's
        fault -- the checker has not logged in."""
        methods = ", ".join(self.shared.auth_methods) or "none advertised"
        tried = self.shared.options.auth
        done = f" even after logging in with {tried!r}" if tried else ""
        return (
            f"the agent needs authentication{done} ({error.get('message', 'auth required')}); "
            f"rerun with --auth METHOD_ID (advertised: {methods}) and the credentials that "
            "method reads, e.g. an API key in the environment"
        )


def _method_ids(methods: Any) -> list[str]:
    """The ``methodId`` (v1: also ``id``) of each advertised auth method."""
    if not isinstance(methods, list):
        return []
    ids = (m.get("methodId", m.get("id")) for m in methods if isinstance(m, dict))
    return [i for i in ids if isinstance(i, str)]


def mcp_servers_for(
    servers: list[dict[str, Any]], caps: dict[str, Any] | None, version: int
) -> list[dict[str, Any]]:
    """The servers (v2 shape) the agent advertises it takes, in its version's shape: v1
    takes stdio always (untyped, ``args`` / ``env`` required) and http when it says so."""
    kept = []
    for server in servers:
        kind = server.get("type")
        if version == 1:
            mcp = (caps or {}).get("mcpCapabilities") or {}
            if kind == "stdio":
                kept.append(
                    {"args": [], "env": [], **{k: v for k, v in server.items() if k != "type"}}
                )
            elif kind == "http" and mcp.get("http") is True:
                kept.append({"headers": [], **server})
        elif has_capability(caps or {}, f"session.mcp.{kind}"):
            kept.append(server)
    return kept


def has_capability(caps: dict[str, Any], path: str) -> bool:
    """Presence check for a dotted capability path: a non-null value (``{}`` counts, IN-07)."""
    node: Any = caps
    for part in path.split("."):
        if not isinstance(node, dict) or node.get(part) is None:
            return False
        node = node[part]
    return True


ProbeFn = Callable[[Probe], Awaitable[None]]


@dataclass(frozen=True)
class ProbeSpec:
    """A named probe and the rows it decides (undecided ones become SKIP).

    ``timing`` marks a probe whose verdict depends on the agent answering in time (turns,
    cancels, shutdown): when one of its rows fails, it is rerun once alone.
    """

    name: str
    fn: ProbeFn
    rows: tuple[str, ...]
    help: str
    timing: bool = False
