"""The ACP registry index as typed values, decoded defensively.

The index (``registry.json``) is ``{"version", "agents": [entry...], "extensions": [...]}``
and each entry is an ``agent.json``: ``id``, ``name``, ``version``, ``description``,
optional ``repository`` / ``authors`` / ``license`` / ``icon``, and a ``distribution`` with
any of ``npx`` / ``uvx`` (``package``, ``args``, ``env``) and ``binary`` (a map from a
platform such as ``linux-x86_64`` to ``archive``, ``cmd``, ``args``, ``env``). acp2 also
reads an optional ``sha256`` (hex digest of the archive) on a binary target; the registry
does not publish one yet, so an archive without it is only checked for safety.

The index comes from the network, so every entry is checked on its own: an entry that is
malformed or unsafe (an id outside ``[a-z][a-z0-9-]*``, a package name that could be read
as an option, a NUL byte, an environment name that is not a name or that would change
which code runs -- ``PATH``, ``LD_*``, ``NODE_OPTIONS``, ``npm_config_*`` and the like --,
more arguments than :data:`MAX_ARGS`) is dropped and counted, never fatal for the others.
"""

from __future__ import annotations

import re
from typing import Final

import msgspec

from acp2.errors import RegistryError

__all__ = [
    "MAX_AGENTS",
    "MAX_ARGS",
    "MAX_INDEX_BYTES",
    "BinaryTarget",
    "Distribution",
    "Entry",
    "Index",
    "PackageDist",
    "decode_index",
]

#: The largest index acp2 reads (the real one is tens of KiB).
MAX_INDEX_BYTES: Final = 4 * 1024 * 1024
#: The most entries kept from one index (the real one has a few dozen).
MAX_AGENTS: Final = 2000
#: The most arguments one distribution may add to a command line.
MAX_ARGS: Final = 64

_ID: Final = re.compile(r"[a-z][a-z0-9-]{0,99}\Z")
# An npm name (optionally scoped) or a PyPI requirement (optionally with extras), with an
# optional version: never starting with "-" (it would be an option of npx / uvx), no
# spaces, no path separators beyond the npm scope's one.
_PACKAGE: Final = re.compile(
    r"(@[a-z0-9][\w.-]*/)?[A-Za-z0-9][\w.-]*(\[[\w,.-]+\])?([@=<>~!]=?[\w.+!*-]+)?\Z"
)
_ENV_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_SHA256: Final = re.compile(r"[0-9a-fA-F]{64}\Z")
# Variables that would change which code runs rather than how the agent behaves: the
# loader's, the interpreters', the package managers' (a registry URL would bypass the
# curated package name) and acp2's own. An entry setting one is dropped.
_RESERVED_ENV: Final = re.compile(
    r"(?:(?:LD_|DYLD_|PYTHON|NODE_|NPM_CONFIG_|UV_|PIP_|ACP2_).*|PATH|HOME|BASH_ENV|ENV)\Z",
    re.IGNORECASE,
)


class PackageDist(msgspec.Struct, frozen=True):
    """An ``npx`` or ``uvx`` distribution: the package (maybe with ``@version``), the
    arguments after it and environment variables for the agent."""

    package: str
    args: list[str] = []
    env: dict[str, str] = {}


class BinaryTarget(msgspec.Struct, frozen=True):
    """One platform's archive: its URL, the command inside it (relative to the unpacked
    folder), arguments, environment and, when the entry gives one, the archive's sha256."""

    archive: str
    cmd: str
    args: list[str] = []
    env: dict[str, str] = {}
    sha256: str | None = None


class Distribution(msgspec.Struct, frozen=True):
    """How an agent is started: any of the three kinds, at least one present."""

    npx: PackageDist | None = None
    uvx: PackageDist | None = None
    binary: dict[str, BinaryTarget] = {}

    def kinds(self) -> list[str]:
        """The kinds present, in acp2's order of preference: npx, uvx, binary."""
        present = [("npx", self.npx), ("uvx", self.uvx), ("binary", self.binary or None)]
        return [name for name, value in present if value is not None]


class Entry(msgspec.Struct, frozen=True):
    """One agent of the registry, as published (text fields are the peer's: sanitize
    them before showing them)."""

    id: str
    name: str
    version: str
    description: str
    distribution: Distribution
    repository: str | None = None
    authors: list[str] = []
    license: str | None = None
    icon: str | None = None


class Index(msgspec.Struct, frozen=True):
    """A decoded index: the usable agents and how many entries were dropped."""

    version: str
    agents: list[Entry]
    dropped: int = 0

    def find(self, agent_id: str) -> Entry:
        """The entry with ``agent_id``; :class:`RegistryError` if there is none."""
        for entry in self.agents:
            if entry.id == agent_id:
                return entry
        raise RegistryError(f"no agent {agent_id!r} in the registry (acp2 agents lists them)")


class _RawIndex(msgspec.Struct):
    version: str
    agents: list[msgspec.Raw] = []


_RAW: Final = msgspec.json.Decoder(_RawIndex)
_ENTRY: Final = msgspec.json.Decoder(Entry)


def decode_index(data: bytes) -> Index:
    """Decode ``registry.json`` bytes; :class:`RegistryError` if the whole document is not
    an index or is larger than :data:`MAX_INDEX_BYTES`. Bad entries are dropped, counted
    in :attr:`Index.dropped`; a repeated id keeps its first entry."""
    if len(data) > MAX_INDEX_BYTES:
        raise RegistryError(f"the registry index is larger than {MAX_INDEX_BYTES} bytes")
    try:
        raw = _RAW.decode(data)
    except msgspec.DecodeError as exc:
        raise RegistryError(f"the registry index is not valid: {exc}") from None
    agents: list[Entry] = []
    seen: set[str] = set()
    for item in raw.agents[:MAX_AGENTS]:
        entry = _entry(item)
        if entry is not None and entry.id not in seen:
            seen.add(entry.id)
            agents.append(entry)
    return Index(version=raw.version, agents=agents, dropped=len(raw.agents) - len(agents))


def _entry(item: msgspec.Raw) -> Entry | None:
    try:
        entry = _ENTRY.decode(item)
    except msgspec.DecodeError:
        return None
    return entry if _entry_problem(entry) is None else None


def _entry_problem(entry: Entry) -> str | None:
    """Why ``entry`` cannot be used, or None."""
    if not _ID.match(entry.id):
        return "id"
    if not entry.distribution.kinds():
        return "no distribution"
    texts = [entry.name, entry.version, entry.description]
    if any("\0" in text for text in texts):
        return "NUL"
    for dist in (entry.distribution.npx, entry.distribution.uvx):
        if dist is not None and (not _PACKAGE.match(dist.package) or _launch_problem(dist)):
            return "package"
    for target in entry.distribution.binary.values():
        if _launch_problem(target) or (target.sha256 and not _SHA256.match(target.sha256)):
            return "binary"
    return None


def _launch_problem(dist: PackageDist | BinaryTarget) -> bool:
    """True when the arguments or environment could not be passed to a process as given."""
    if len(dist.args) > MAX_ARGS or len(dist.env) > MAX_ARGS:
        return True
    if any("\0" in arg for arg in dist.args):
        return True
    return any(
        not _ENV_NAME.match(k) or _RESERVED_ENV.match(k) or "\0" in v for k, v in dist.env.items()
    )
