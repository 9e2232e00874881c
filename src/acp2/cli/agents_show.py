"""``acp2 agents show ID``: one registry entry in full, sanitized."""

from __future__ import annotations

import shlex

from acp2 import sanitize
from acp2.registry.model import Entry, PackageDist

__all__ = ["show"]


def show(entry: Entry) -> int:
    """Print ``entry`` (every field acp2 reads, each distribution, and how to start it
    here); return 0."""
    print(f"{sanitize.line(entry.name)} ({entry.id}) {sanitize.line(entry.version)}")
    print(f"  {sanitize.prose(entry.description)}")
    _field("repository", entry.repository)
    _field("authors", ", ".join(entry.authors) if entry.authors else None)
    _field("license", entry.license)
    dist = entry.distribution
    for kind, package in (("npx", dist.npx), ("uvx", dist.uvx)):
        if package is not None:
            _field(kind, _package_line(package))
    for platform, target in sorted(dist.binary.items()):
        checked = "sha256 given" if target.sha256 else "no sha256"
        _field(f"binary {platform}", f"{target.archive} -> {target.cmd} ({checked})")
    print(f"  start with: acp2 chat --agent {entry.id}")
    _print_plan(entry)
    return 0


def _field(label: str, value: str | None) -> None:
    if value:
        print(f"  {label}: {sanitize.line(value)}")


def _package_line(package: PackageDist) -> str:
    words = [package.package, *package.args]
    env = " ".join(f"{k}={v}" for k, v in package.env.items())
    return shlex.join(words) + (f"  (env {env})" if env else "")


def _print_plan(entry: Entry) -> None:
    from acp2.errors import RegistryError
    from acp2.registry.launch import choose, platform_key

    try:
        kind = choose(entry)
    except RegistryError as exc:
        print(f"  here ({platform_key()}): {sanitize.prose(str(exc))}")
        return
    print(f"  here ({platform_key()}): runs with {kind}")
