"""From a registry entry to the command that starts the agent.

The first distribution that can run here wins, in this order: ``npx`` (when ``npx`` is on
``PATH``): ``npx -y PACKAGE@VERSION ARGS``; ``uvx`` (when ``uvx`` is on ``PATH``):
``uvx PACKAGE@VERSION ARGS``; ``binary`` for this platform: the archive is fetched into
the cache (see :mod:`acp2.registry.archive`) and its ``cmd`` run from there, after
checking the place is private. A package that already names a version keeps it. The
entry's ``env`` is returned for the caller to add to the agent's environment.
"""

from __future__ import annotations

import platform
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from acp2.errors import RegistryError, UnsafeDownload
from acp2.registry.model import BinaryTarget, Entry, PackageDist
from acp2.registry.paths import cache_root, check_runnable_place

__all__ = ["Launch", "choose", "platform_key", "resolve"]

_MACHINES: Final = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}
_HAS_NPM_VERSION: Final = re.compile(r"(@[^/]+/)?[^@]+@.+\Z")
_HAS_PY_VERSION: Final = re.compile(r".*[@=<>~!]")


@dataclass(frozen=True)
class Launch:
    """What to run: ``argv`` (absolute program first), extra ``env``, and which
    distribution ``kind`` (``npx``, ``uvx`` or ``binary``) it came from."""

    argv: list[str]
    kind: str
    env: dict[str, str] = field(default_factory=dict)


def platform_key() -> str:
    """This machine in the registry's words, e.g. ``linux-x86_64`` or ``darwin-aarch64``."""
    system = {"Darwin": "darwin", "Linux": "linux", "Windows": "windows"}.get(
        platform.system(), platform.system().lower()
    )
    machine = platform.machine().lower()
    return f"{system}-{_MACHINES.get(machine, machine)}"


def choose(entry: Entry) -> str:
    """The distribution kind :func:`resolve` will use for ``entry`` here (npx and uvx
    when on ``PATH``); :class:`RegistryError` saying what is missing when none can run."""
    dist = entry.distribution
    if dist.npx is not None and shutil.which("npx"):
        return "npx"
    if dist.uvx is not None and shutil.which("uvx"):
        return "uvx"
    if platform_key() in dist.binary:
        return "binary"
    needs = [k if k != "binary" else f"a {platform_key()} binary" for k in dist.kinds()]
    raise RegistryError(
        f"agent {entry.id!r} cannot run here: it is published as {', '.join(needs)}"
        " (install Node.js for npx, or uv for uvx)"
    )


def resolve(entry: Entry, *, cache: Path | None = None) -> Launch:
    """The command that starts ``entry`` here (downloading a binary archive if needed).

    Raises :class:`RegistryError` (nothing can run here, download failed) or
    :class:`UnsafeDownload` (bad checksum or archive, unsafe place).
    """
    kind = choose(entry)
    dist = entry.distribution
    if kind == "npx" and dist.npx is not None:
        return _package(entry, dist.npx, "npx", ["-y"], _HAS_NPM_VERSION)
    if kind == "uvx" and dist.uvx is not None:
        return _package(entry, dist.uvx, "uvx", [], _HAS_PY_VERSION)
    return _binary(entry, dist.binary[platform_key()], cache or cache_root())


def _package(
    entry: Entry, dist: PackageDist, tool: str, options: list[str], versioned: re.Pattern[str]
) -> Launch:
    program = shutil.which(tool) or tool
    package = dist.package if versioned.match(dist.package) else f"{dist.package}@{entry.version}"
    return Launch([program, *options, package, *dist.args], tool, dict(dist.env))


def _binary(entry: Entry, target: BinaryTarget, root: Path) -> Launch:
    from acp2.registry.archive import fetch_archive, safe_member_path

    folder = root / "agents" / entry.id / _safe_version(entry.version) / platform_key()
    unpacked = fetch_archive(target, folder)
    try:
        program = safe_member_path(unpacked, target.cmd)
    except UnsafeDownload:
        raise UnsafeDownload(f"agent {entry.id!r} names an unsafe command {target.cmd!r}") from None
    if not program.is_file():
        raise RegistryError(f"agent {entry.id!r}: its archive has no {target.cmd!r}")
    check_runnable_place(program, root)
    program.chmod(0o700)
    return Launch([str(program), *target.args], "binary", dict(target.env))


def _safe_version(version: str) -> str:
    """The version as one folder name (the index is a peer: no separators, no ``..``)."""
    cleaned = re.sub(r"[^A-Za-z0-9.+_-]", "_", version)[:64]
    return cleaned if cleaned.strip(".") else "_"
