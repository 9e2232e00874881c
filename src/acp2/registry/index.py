"""Fetching the registry index, with an on-disk cache and an offline fallback.

The index is fetched over HTTPS (plain HTTP only from a loopback address, for tests and
local mirrors) with a timeout and a size cap, and kept in the cache folder as one ``0600``
file per URL. A cached copy younger than the TTL (default one hour) is used without asking
the network; an older one is refreshed, and when the refresh fails the old copy is used
with a note that says how old it is. With no usable copy the error says what to do.
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

from acp2.errors import RegistryError, RegistryUnavailable
from acp2.registry.model import MAX_INDEX_BYTES, Index, decode_index
from acp2.registry.paths import cache_root, private_dir

__all__ = [
    "DEFAULT_TTL",
    "DEFAULT_URL",
    "Loaded",
    "check_url",
    "describe_age",
    "download",
    "fetch_bytes",
    "load_index",
    "registry_url",
]

#: Where the ACP registry publishes its index.
DEFAULT_URL: Final = "https://cdn.agentclientprotocol.com/registry/v1/latest/registry.json"
#: Seconds a cached index is used without asking the network.
DEFAULT_TTL: Final = 3600.0
_TIMEOUT: Final = 15.0


@dataclass(frozen=True)
class Loaded:
    """An index and where it came from: ``note`` is set when a stale cached copy stood in
    for the network (the sentence to show the user)."""

    index: Index
    from_cache: bool
    age: float
    note: str | None = None


def registry_url(explicit: str | None = None) -> str:
    """``explicit``, else ``$ACP2_REGISTRY_URL``, else :data:`DEFAULT_URL`."""
    return explicit or os.environ.get("ACP2_REGISTRY_URL") or DEFAULT_URL


def check_url(url: str) -> str:
    """Return ``url`` if it is ``https://``, or ``http://`` to a loopback address;
    :class:`RegistryError` otherwise (code and indexes are never fetched in the clear)."""
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return url
    if parts.scheme == "http" and _loopback(parts.hostname or ""):
        return url
    raise RegistryError(f"refusing {url!r}: the registry and its archives need https://")


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def load_index(
    url: str | None = None,
    *,
    cache: Path | None = None,
    ttl: float = DEFAULT_TTL,
    refresh: bool = False,
    offline: bool = False,
) -> Loaded:
    """The index at ``url`` (see :func:`registry_url`): from the cache when younger than
    ``ttl`` seconds (unless ``refresh``), else from the network; ``offline`` never asks
    the network. :class:`RegistryUnavailable` when neither gives an index."""
    url = check_url(registry_url(url))
    path = private_dir(cache or cache_root()) / _cache_name(url)
    cached = _read_cache(path)
    if cached is not None and (offline or (not refresh and cached.age < ttl)):
        return cached
    if offline:
        raise RegistryUnavailable(f"offline, and no cached copy of the ACP registry from {url}")
    try:
        data = fetch_bytes(url, MAX_INDEX_BYTES)
        index = decode_index(data)
    except RegistryError as exc:
        if cached is None:
            raise RegistryUnavailable(
                f"{exc}; there is no cached copy either (check the network, or pass "
                "--registry URL / set ACP2_REGISTRY_URL)"
            ) from None
        note = f"{exc}; using the cached index from {describe_age(cached.age)}"
        return Loaded(cached.index, True, cached.age, note)
    _write_cache(path, data)
    return Loaded(index, False, 0.0)


def _cache_name(url: str) -> str:
    return "index-" + hashlib.sha256(url.encode()).hexdigest()[:24] + ".json"


def _read_cache(path: Path) -> Loaded | None:
    try:
        data = path.read_bytes()
        age = max(0.0, time.time() - path.stat().st_mtime)
        return Loaded(decode_index(data), True, age)
    except (OSError, RegistryError):
        return None  # a missing or damaged cache is no cache


def _write_cache(path: Path, data: bytes) -> None:
    """Replace the cached copy in one rename, so a reader never sees half of one."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    os.replace(tmp, path)


def describe_age(seconds: float) -> str:
    """``seconds`` as a person says it: ``5 minutes ago``, ``3 hours ago``, ``2 days ago``."""
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            count = int(seconds // size)
            return f"{count} {unit}{'s' if count != 1 else ''} ago"
    return "less than a minute ago"


def fetch_bytes(url: str, limit: int) -> bytes:
    """GET ``url`` and return its body, at most ``limit`` bytes (see :func:`download`)."""
    chunks: list[bytes] = []
    download(url, limit, chunks.append)
    return b"".join(chunks)


def download(url: str, limit: int, sink: Callable[[bytes], object]) -> int:
    """GET ``url`` (checked by :func:`check_url`, also after redirects), hand each chunk
    of the body to ``sink`` and return the byte count; :class:`RegistryError` for any
    failure (worded for the user), including a body larger than ``limit`` bytes."""
    try:
        import httpx
    except ImportError:
        raise RegistryError("fetching the registry needs httpx: pip install 'acp2[llm]'") from None
    try:
        with (
            httpx.Client(timeout=_TIMEOUT, follow_redirects=True) as client,
            client.stream("GET", check_url(url)) as response,
        ):
            check_url(str(response.url))
            if response.status_code != 200:
                raise RegistryError(f"{url} answered HTTP {response.status_code}")
            return _drain(response.iter_bytes(), url, limit, sink)
    except httpx.HTTPError as exc:
        raise RegistryError(f"could not reach {url}: {type(exc).__name__}: {exc}") from None


def _drain(chunks: Iterator[bytes], url: str, limit: int, sink: Callable[[bytes], object]) -> int:
    total = 0
    for chunk in chunks:
        total += len(chunk)
        if total > limit:
            raise RegistryError(f"{url} is larger than {limit} bytes")
        sink(chunk)
    return total
