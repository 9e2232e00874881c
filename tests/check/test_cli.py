"""``acp2 check`` on the command line: exit codes, the JSON report, clear errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from check_support import REFERENCE

from acp2.cli.check_cmd import run

QUICK = ["--timeout", "3", "--plain", "--only", "handshake", "--only", "jsonrpc"]


PARTIAL = "VERDICT: no failures in the probes run (handshake, jsonrpc; a partial check)"


def test_a_partial_run_without_failures_exits_0_and_is_never_called_conformant(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report.json"
    assert run([*QUICK, "--json", str(out), "--", *REFERENCE]) == 0
    text = capsys.readouterr().out
    assert text.rstrip().endswith(PARTIAL)
    assert "CONFORMANT" not in text
    assert "partial check: only handshake, jsonrpc (--only)" in text
    data = json.loads(out.read_text())
    assert data["verdict"] == PARTIAL.removeprefix("VERDICT: ")
    assert data["partial"] is True
    assert data["probes_run"] == ["handshake", "jsonrpc"]
    assert data["agent"]["info"]["name"] == "reference-agent"
    rows = {r["key"]: r for r in data["rows"]}
    assert rows["TR-09"]["result"] == "PASS"
    assert rows["PL-07"]["result"] == "SKIP"  # not probed with --only


def test_a_broken_agent_exits_1_and_the_table_names_the_requirement(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run([*QUICK, "--", *REFERENCE, "--break", "stdout-logs"]) == 1
    out = capsys.readouterr().out
    assert "[reference-agent] reference agent starting" in out
    assert out.rstrip().endswith("VERDICT: NOT CONFORMANT (1 MUST failure)")


def test_the_nov_draft_is_chosen_with_a_flag(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--timeout", "3", "--plain", "--only", "version-1", "--draft", "nov"]
    assert run([*args, "--", *REFERENCE]) == 1
    out = capsys.readouterr().out
    assert "judged against nov" in out
    assert "IN-04:1:nov: the drafts differ here (D-05); under aug (IN-04:1:aug) it is PASS" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "give the agent command after --"),
        (["--"], "give the agent command after --"),
        (["--", "/nonexistent/agent"], "command not found: /nonexistent/agent"),
    ],
)
def test_a_check_that_cannot_run_exits_2_with_a_message(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["--timeout", "2", *argv]) == 2
    assert message in capsys.readouterr().err


def test_without_jsonschema_the_check_explains_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "jsonschema", None)
    assert run(["--", *REFERENCE]) == 2
    assert "pip install -e '.[check]' in the acp2 checkout" in capsys.readouterr().err


def test_the_acp2_entry_point_runs_the_check_subcommand(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from acp2.cli.main import main

    assert main(["check", "--plain", "--only", "handshake", "--", *REFERENCE]) == 0
    assert "VERDICT: no failures in the probes run (handshake" in capsys.readouterr().out
