"""The registry index: decoded from the real format, fetched from a fixture registry on
127.0.0.1, cached 0600 with a TTL, and used offline with its age said."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest

from acp2.errors import RegistryError, RegistryUnavailable
from acp2.registry.index import check_url, describe_age, load_index
from acp2.registry.model import decode_index
from acp2.registry.search import search
from helpers.registry_fake import entry, index, serve_registry, unreachable_url

pytest.importorskip("httpx")

INDEX = index(entry("alpha"), entry("beta-coder", description="Writes code in Rust"))


def test_the_index_is_fetched_decoded_and_cached_privately(tmp_path: Path) -> None:
    with serve_registry({"/registry.json": INDEX}) as fake:
        loaded = load_index(fake.url(), cache=tmp_path / "cache")
    assert [e.id for e in loaded.index.agents] == ["alpha", "beta-coder"]
    assert not loaded.from_cache
    assert loaded.note is None
    (cached,) = (tmp_path / "cache").iterdir()
    assert stat.S_IMODE(cached.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "cache").stat().st_mode) == 0o700


def test_a_fresh_cache_is_used_without_asking_the_network(tmp_path: Path) -> None:
    with serve_registry({"/registry.json": INDEX}) as fake:
        load_index(fake.url(), cache=tmp_path)
        again = load_index(fake.url(), cache=tmp_path)
        assert fake.requests == ["/registry.json"]
    assert again.from_cache
    assert again.note is None


def test_a_stale_cache_or_refresh_fetches_again(tmp_path: Path) -> None:
    with serve_registry({"/registry.json": INDEX}) as fake:
        load_index(fake.url(), cache=tmp_path)
        load_index(fake.url(), cache=tmp_path, refresh=True)
        load_index(fake.url(), cache=tmp_path, ttl=0)
        assert len(fake.requests) == 3


def test_when_the_network_fails_a_stale_cache_is_used_and_its_age_said(tmp_path: Path) -> None:
    with serve_registry({"/registry.json": INDEX}) as fake:
        load_index(fake.url(), cache=tmp_path)
    # The server is gone now: its URL refuses connections.
    (cached,) = tmp_path.iterdir()
    two_hours_ago = time.time() - 7200
    os.utime(cached, (two_hours_ago, two_hours_ago))
    loaded = load_index(fake.url(), cache=tmp_path)
    assert loaded.from_cache
    assert [e.id for e in loaded.index.agents] == ["alpha", "beta-coder"]
    assert loaded.note is not None
    assert "could not reach" in loaded.note
    assert "2 hours ago" in loaded.note


def test_offline_without_a_cache_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(RegistryUnavailable, match="no cached copy"):
        load_index(unreachable_url(), cache=tmp_path)
    with pytest.raises(RegistryUnavailable, match="offline"):
        load_index(unreachable_url(), cache=tmp_path, offline=True)


def test_only_https_or_loopback_http_is_fetched() -> None:
    assert check_url("https://cdn.example.invalid/r.json")
    assert check_url("http://127.0.0.1:9/r.json")
    assert check_url("http://[::1]:9/r.json")
    for url in ("http://example.invalid/r.json", "file:///etc/passwd", "ftp://127.0.0.1/x"):
        with pytest.raises(RegistryError, match="https"):
            check_url(url)


def test_malformed_entries_are_dropped_and_counted_the_rest_kept() -> None:
    bad = [
        {"id": "no-distribution", "name": "x", "version": "1.0.0", "description": "x"},
        entry("Upper-Case"),
        entry("option-package", distribution={"npx": {"package": "--exec=evil"}}),
        entry("bad-env", distribution={"uvx": {"package": "x", "env": {"A B": "1"}}}),
        "not an object",
        entry("good"),
        entry("good", name="a second entry with the same id"),
    ]
    decoded = decode_index(index(*bad))  # type: ignore[arg-type]
    assert [e.id for e in decoded.agents] == ["good"]
    assert decoded.agents[0].name == "Good"
    assert decoded.dropped == 6


def test_a_document_that_is_not_an_index_is_an_error() -> None:
    with pytest.raises(RegistryError, match="not valid"):
        decode_index(b'{"agents": 3}')


def test_search_matches_every_word_in_id_name_or_description() -> None:
    agents = decode_index(INDEX).agents
    assert [e.id for e in search(agents, "")] == ["alpha", "beta-coder"]
    assert [e.id for e in search(agents, "RUST code")] == ["beta-coder"]
    assert search(agents, "rust alpha") == []


def test_ages_read_as_a_person_says_them() -> None:
    assert describe_age(30) == "less than a minute ago"
    assert describe_age(61) == "1 minute ago"
    assert describe_age(3 * 86400) == "3 days ago"
