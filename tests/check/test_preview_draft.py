"""``--draft preview``: the ACP v2 Preview (2026-11-20) as modelled in
schemas/acp-v2-preview.json -- the TypeScript SDK 2.4.0 schema with subagents made
baseline v2 ("announcements/subagents-stabilized"; see schemas/README.md)."""

from __future__ import annotations

import glob
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from check_support import REFERENCE, check, failing

from acp2.check.render import render_plain
from acp2.check.validator import SchemaValidator, load_schema
from helpers.timeouts import RUN_TIMEOUT

ROOT = Path(__file__).resolve().parents[2]
SDK_GLOB = "~/.cache/acp2/interop/*/node_modules/@agentclientprotocol/sdk"


def update(body: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s1", "update": body},
    }


def test_the_preview_schema_is_the_nov_schema_plus_the_subagent_definitions() -> None:
    nov, preview = load_schema("nov")["$defs"], load_schema("preview")["$defs"]
    added = sorted(preview.keys() - nov.keys())
    assert added == [
        "BackgroundSubagent",
        "SessionCancelCapabilities",
        "SubagentSessionCapabilities",
        "SubagentUpdate",
    ]
    changed = sorted(k for k in nov if nov[k] != preview[k])
    assert changed == ["BackgroundWork", "SessionUpdate"]


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ({"sessionUpdate": "subagent_update", "title": 7}, "update/title: 7 is not of type"),
        (
            {
                "sessionUpdate": "state_update",
                "state": "running",
                "background": [{"type": "subagent"}],
            },
            "update/background/0: 'sessionId' is a required property",
        ),
    ],
)
def test_a_malformed_subagent_frame_fails_only_under_the_preview(
    body: dict[str, Any], problem: str
) -> None:
    # Under nov (and aug) the tag lands in the schema's "other" fallback and passes.
    frame = update(body)
    assert SchemaValidator("nov").check_frame(frame, None) is None
    assert SchemaValidator("aug").check_frame(frame, None) is None
    found = SchemaValidator("preview").check_frame(frame, None)
    assert found is not None
    assert problem in found


def test_a_well_formed_subagent_update_is_valid_under_the_preview() -> None:
    frame = update({"sessionUpdate": "subagent_update", "sessionId": "child-1", "title": "Explore"})
    assert SchemaValidator("preview").check_frame(frame, None) is None


@pytest.mark.anyio
async def test_a_nov_agent_is_conformant_under_the_preview_and_the_report_names_it() -> None:
    report = await check([*REFERENCE, "--nov"], draft="preview")
    assert report.verdict == "CONFORMANT", failing(report)
    assert "frames valid under acp-v2-preview.json" in report.rows["SCHEMA:preview"].reason
    text = render_plain(report)
    assert "judged against preview: ACP v2 Preview (2026-11-20)" in text
    assert "SCHEMA:preview" in text
    assert "SCHEMA:nov " not in text
    # the same observations under aug: the Nov-family rows differ, as between aug and nov
    assert failing(report.under("aug")) == {"IN-04:1:aug", "TR-14:notifications"}


def test_the_cli_offers_the_preview_draft() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "acp2.cli.check_cmd", "--help"],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=True,
    ).stdout
    assert "{aug,nov,preview}" in out


def test_the_shipped_preview_schema_is_what_the_generator_builds_from_the_sdk() -> None:
    found = sorted(glob.glob(os.path.expanduser(SDK_GLOB)))
    if not found:
        pytest.skip("no @agentclientprotocol/sdk in the interop cache (run the interop tests)")
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_preview_schema.py"), found[-1], "--check"],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    assert result.returncode == 0, result.stdout + result.stderr
