"""acp2's own ``agent.json`` (docs/registry/acp2/agent.json), the entry that lists the
built-in coding agent in the ACP registry: it has what the registry's schema requires
(the rules are written out here), acp2 reads it, and it starts ``acp2 agent --model
openai`` through uvx, which advertises the terminal login (tests/cli/test_agent_login.py)."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from acp2.registry.launch import resolve
from acp2.registry.model import decode_index

ROOT = Path(__file__).resolve().parents[2]
ENTRY = ROOT / "docs" / "registry" / "acp2" / "agent.json"

# The registry's agent schema, as rules: required fields and their patterns, the
# distribution kinds, and the fields a package distribution may have.
REQUIRED = {"id", "name", "version", "description", "distribution"}
OPTIONAL = {"repository", "authors", "license", "icon"}
PACKAGE_FIELDS = {"package", "args", "env"}


@pytest.fixture
def entry() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(ENTRY.read_text())
    return data


def test_the_entry_has_exactly_the_fields_the_registry_schema_allows(entry: dict[str, Any]) -> None:
    assert REQUIRED <= set(entry) <= REQUIRED | OPTIONAL
    assert re.fullmatch(r"[a-z][a-z0-9-]*", entry["id"])
    assert re.match(r"[0-9]+\.[0-9]+\.[0-9]+", entry["version"])
    assert entry["name"]
    assert entry["description"]
    dist = entry["distribution"]
    assert set(dist) == {"uvx"}
    assert set(dist["uvx"]) <= PACKAGE_FIELDS
    assert dist["uvx"]["package"]
    assert all(isinstance(a, str) for a in dist["uvx"]["args"])


def test_the_entry_names_the_projects_version(entry: dict[str, Any]) -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert entry["version"] == project["version"]
    assert entry["distribution"]["uvx"]["package"] == f"acp2[llm]@{project['version']}"


def test_acp2_reads_its_own_entry_and_starts_the_openai_agent_with_uvx(
    entry: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "uvx").write_text("#!/bin/sh\nexit 0\n")
    (tmp_path / "uvx").chmod(0o700)
    monkeypatch.setenv("PATH", str(tmp_path))
    index = json.dumps({"version": "1.0.0", "agents": [entry], "extensions": []}).encode()
    (own,) = decode_index(index).agents
    started = resolve(own)
    assert started.kind == "uvx"
    assert started.argv[1:] == ["acp2[llm]@0.1.0", "agent", "--model", "openai"]
