"""``acp2 check`` judges the official TypeScript SDK 2.4.0 v2 agent (``ts/agent.mjs``).

The SDK speaks the Nov draft, so under ``--draft nov`` the agent must be CONFORMANT
(exit 0); under the Aug draft (`--draft aug`) every failing row must be one the report marks
as a draft difference (``differs``: a D-xx difference between the drafts, listed in
``acp2.check.requirements``) whose Nov counterpart passes.

The checker's invalid-UTF-8 probe (a request with id 77 whose bytes are not UTF-8) once
failed TR-01:utf8 here: the SDK decodes lines leniently, so it dispatches and answers
that request. No page forbids that (the row now asks only that the link stays usable),
so ``from_the_utf8_probe`` should match nothing any more; it stays as a filter.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .peers import ts_agent_argv

pytestmark = pytest.mark.interop

# Prompts in the TS agent's vocabulary (see README.md): a reply, a turn that runs until
# cancelled, a permission-gated tool call.
PROMPTS = ("--prompt", "echo hello", "--cancel-prompt", "wait", "--permission-prompt", "tools")
UTF8_PROBE = "[malformed:invalid UTF-8]"  # the step label on its evidence


def run_check(ts_sdk: Path, tmp_path: Path, draft: str | None) -> tuple[int, dict[str, Any], str]:
    report = tmp_path / f"check-{draft or 'default'}.json"
    argv = [sys.executable, "-m", "acp2", "check", "--plain", "--json", str(report), *PROMPTS]
    if draft is not None:
        argv += ["--draft", draft]
    argv += ["--cwd", str(tmp_path), "--", *ts_agent_argv(ts_sdk)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode in (0, 1), f"acp2 check could not run:\n{done.stderr}"
    return done.returncode, json.loads(report.read_text()), done.stdout


def failing(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [row for row in rows if row["result"] == "FAIL"]


def from_the_utf8_probe(row: dict[str, Any]) -> bool:
    """The SHOULD row the TS SDK fails: it decodes invalid UTF-8 leniently and answers."""
    evidence = row.get("evidence") or []
    return (
        row["key"] == "TR-01:utf8"
        and bool(evidence)
        and all(UTF8_PROBE in line for line in evidence)
    )


@pytest.fixture(scope="module")
def nov(ts_sdk: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any], str]:
    return run_check(ts_sdk, tmp_path_factory.mktemp("check-nov"), "nov")


@pytest.fixture(scope="module")
def aug(ts_sdk: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any], str]:
    return run_check(ts_sdk, tmp_path_factory.mktemp("check-aug"), "aug")


def test_ts_agent_is_conformant_under_nov(nov: tuple[int, dict[str, Any], str]) -> None:
    code, report, stdout = nov

    assert report["draft"] == "nov"
    assert report["agent"]["info"]["name"] == "acp2-interop-ts-agent"
    assert code == 0, stdout
    assert report["conformant"], report["verdict"]
    assert report["verdict"].startswith("CONFORMANT")


def test_ts_agent_fails_no_other_nov_row(nov: tuple[int, dict[str, Any], str]) -> None:
    _code, report, stdout = nov

    unexpected = [r for r in failing(report["rows"]) if not from_the_utf8_probe(r)]
    assert unexpected == [], stdout
    assert report["counts"]["PASS"] > 40


def test_ts_agent_passes_the_preview_schema_in_the_same_run(
    nov: tuple[int, dict[str, Any], str],
) -> None:
    """The Preview (as modelled) keeps every Nov rule and adds only its schema row, which a
    Nov run judges too (every frame is validated under every draft): so the Nov run's
    verdicts are the Preview's, without a third check of the agent."""
    _code, report, stdout = nov

    other = {r["key"]: r["result"] for r in report["other_draft_rows"]}
    assert other.get("SCHEMA:preview") == "PASS", stdout


def test_ts_agent_fails_aug_only_where_the_drafts_differ(
    aug: tuple[int, dict[str, Any], str],
) -> None:
    _code, report, stdout = aug

    assert report["draft"] == "aug"
    rows = [r for r in failing(report["rows"]) if not from_the_utf8_probe(r)]
    assert rows, "the Nov SDK should fail some Aug-only rows (D-01 batches, D-05 versions)"
    not_marked = [r["key"] for r in rows if not r["differs"]]
    assert not_marked == [], stdout
    # ... and under Nov those differences pass.
    nov_side = {r["differs"]: r["result"] for r in report["other_draft_rows"]}
    assert {r["differs"]: nov_side.get(r["differs"]) for r in rows} == {
        r["differs"]: "PASS" for r in rows
    }
    assert len(report["draft_notes"]) >= len({r["key"] for r in rows if r["level"] == "MUST"})
