"""``acp2 check --draft preview`` on the official peers: the Preview (as modelled, see
src/acp2/check/schemas/README.md) keeps every Nov rule and adds only its schema, so the
TypeScript SDK 2.4.0 agent stays CONFORMANT and the Python SDK 1.0.0rc3 v2 agent fails
exactly the rows it fails under ``--draft nov`` (its own deviations, pinned there)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .peers import py_agent_argv
from .test_acp2_check_vs_py_agent import PROMPTS as PY_PROMPTS
from .test_acp2_check_vs_py_agent import SDK_FAILURES
from .test_acp2_check_vs_ts_agent import failing, from_the_utf8_probe, run_check

pytestmark = pytest.mark.interop


def test_the_ts_agent_is_conformant_under_the_preview(ts_sdk: Path, tmp_path: Path) -> None:
    code, report, stdout = run_check(ts_sdk, tmp_path, "preview")

    assert report["draft"] == "preview"
    assert report["draft_name"] == "ACP v2 Preview (2026-11-20)"
    assert code == 0, stdout
    assert [r for r in failing(report["rows"]) if not from_the_utf8_probe(r)] == [], stdout
    schema = {r["key"]: r["result"] for r in report["rows"] if r["key"].startswith("SCHEMA:")}
    assert schema == {"SCHEMA:preview": "PASS"}


def test_the_py_agent_fails_under_the_preview_only_where_it_fails_under_nov(
    py_sdk_v2: Path, tmp_path: Path
) -> None:
    report_file = tmp_path / "check.json"
    argv = [sys.executable, "-m", "acp2", "check", "--plain", "--json", str(report_file)]
    argv += [*PY_PROMPTS, "--draft", "preview", "--cwd", str(tmp_path), "--"]
    argv += py_agent_argv(py_sdk_v2)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    report: dict[str, Any] = json.loads(report_file.read_text())
    failed = {r["key"]: r["level"] for r in report["rows"] if r["result"] == "FAIL"}
    assert failed == SDK_FAILURES, done.stdout
