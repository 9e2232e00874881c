"""The benchmark harness (``bench/run.py``) runs end to end on tiny sizes.

The benchmarks themselves are not part of the suite: these tests only check that the
harness runs each implementation's scenarios, prints the table and reports n/a with a
reason when something cannot run. The official SDK baselines need their own environments
(a venv with ``agent-client-protocol==0.12.1``, an ``npm ci`` of the TypeScript SDK); when
those cannot be created here (no network, no node), their tests are skipped with the
reason.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
SCENARIOS = ("stream", "rtt", "replay", "sessions", "startup")


def load_provision() -> ModuleType:
    """Import ``bench/_provision.py`` without putting ``bench/`` on ``sys.path``."""
    spec = importlib.util.spec_from_file_location("acp2_bench_provision", BENCH / "_provision.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_tiny(
    tmp_path: Path, impl: str, *options: str
) -> tuple[subprocess.CompletedProcess[str], Any]:
    """Run ``bench/run.py --tiny --impl IMPL [OPTIONS]``; return the process and its JSON
    results."""
    out = tmp_path / "results.json"
    argv = [sys.executable, str(BENCH / "run.py"), "--tiny", "--impl", impl, *options]
    done = subprocess.run(
        [*argv, "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    assert "| metric" in done.stdout
    return done, json.loads(out.read_text())["results"][impl]


def provisioned(name: str) -> None:
    """Create a baseline's environment, or skip the test with the reason it cannot be."""
    provision = load_provision()
    ensure = {
        "py-sdk": provision.ensure_sdk_venv,
        "py-sdk2": provision.ensure_sdk2_venv,
        "ts-sdk": provision.ensure_ts_peers,
    }[name]
    try:
        ensure()
    except provision.Unavailable as exc:
        pytest.skip(f"the {name} baseline cannot be set up here: {exc}")


def test_raw_baselines_run_and_print_the_table(tmp_path: Path) -> None:
    done, results = run_tiny(tmp_path, "raw")
    assert results["stream"]["status"] == "ok"
    assert results["stream"]["metrics"]["updates_per_s"] > 0
    assert results["stream"]["metrics"]["client_cpu_us_per_update"] > 0
    assert results["rtt"]["metrics"]["ping_p50_us"] > 0
    assert results["replay"]["status"] == "-"  # no raw counterpart
    assert results["bridge"]["status"] == "-"  # the bridge scenario holds its own baselines
    assert results["timeline"]["status"] == "-"  # acp2 only
    assert "stream: updates/s" in done.stdout
    assert "round trip: ping p50" in done.stdout


def test_acp2_hooks_run_or_skip_with_a_reason(tmp_path: Path) -> None:
    _, results = run_tiny(tmp_path, "acp2")
    for scenario in SCENARIOS:
        outcome = results[scenario]
        assert outcome["status"] in ("ok", "skip"), (scenario, outcome["reason"])
        if outcome["status"] == "skip":
            assert outcome["reason"].endswith("not available yet")
    assert results["startup"]["metrics"]["import_ms"] > 0
    assert results["startup"]["metrics"]["import_connect_ms"] > 0
    timeline = results["timeline"]
    assert timeline["status"] == "ok", timeline["reason"]
    stages = timeline["metrics"]
    # the stages of one prompt, in the order they happen
    order = ("c_write_prompt", "a_handler", "a_response", "a_write_idle", "c_idle", "total")
    times = [stages[f"{stage}_us"] for stage in order]
    assert times == sorted(times)
    remote = results["remote"]
    assert remote["status"] == "ok", remote["reason"]
    for key in ("ws", "sse"):
        assert remote["metrics"][f"{key}_updates_per_s"] > 0
        assert remote["metrics"][f"{key}_reconnect_p50_ms"] > 0
    assert remote["metrics"]["idle_conn_kib"] > 0
    bridge = results["bridge"]
    assert bridge["status"] == "ok", bridge["reason"]
    for side in ("front", "back"):
        assert bridge["metrics"][f"{side}_bridged_rtt_p50_us"] > 0
        assert f"{side}_rtt_delta_us" in bridge["metrics"]


def test_official_python_sdk_baseline_runs(tmp_path: Path) -> None:
    provisioned("py-sdk")
    _, results = run_tiny(tmp_path, "py-sdk")
    for scenario in SCENARIOS:
        assert results[scenario]["status"] == "ok", results[scenario]["reason"]
    assert results["stream"]["metrics"]["updates_per_s"] > 0
    assert results["rtt"]["metrics"]["prompt_p50_us"] > 0
    assert results["startup"]["metrics"]["import_ms"] > 0


def test_official_python_sdk_v2_baseline_runs_every_scenario(tmp_path: Path) -> None:
    provisioned("py-sdk2")
    _, results = run_tiny(tmp_path, "py-sdk2")
    for scenario in SCENARIOS:
        assert results[scenario]["status"] == "ok", results[scenario]["reason"]
    assert results["rtt"]["metrics"]["prompt_p50_us"] > 0
    assert results["replay"]["metrics"]["seconds"] > 0
    assert results["startup"]["metrics"]["spawn_init_ms"] > 0


def test_official_typescript_sdk_baseline_runs(tmp_path: Path) -> None:
    provisioned("ts-sdk")
    _, results = run_tiny(tmp_path, "ts-sdk")
    for scenario in SCENARIOS:
        assert results[scenario]["status"] == "ok", results[scenario]["reason"]
    assert results["stream"]["metrics"]["updates_per_s"] > 0
    assert results["replay"]["metrics"]["seconds"] > 0


def test_repetitions_of_the_implementations_are_interleaved() -> None:
    argv = [sys.executable, str(BENCH / "run.py"), "--tiny", "--only", "stream", "--reps", "2"]
    done = subprocess.run(
        [*argv, "--impl", "acp2,raw"], capture_output=True, text=True, timeout=240, check=True
    )
    order = [line.split()[1:3] for line in done.stderr.splitlines() if line.startswith("stream")]
    assert order == [["acp2", "1/2"], ["raw", "1/2"], ["acp2", "2/2"], ["raw", "2/2"]]
