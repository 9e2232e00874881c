"""The remote scenario's TypeScript baseline runs, and the table judges acp2 against it.

The TS SDK pair (its ws-client / http-client against its experimental server,
``bench/ts_remote.py``) runs at tiny sizes when its environment can be set up here; the
rows and their targets are checked on given values, without running anything.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from .test_harness import BENCH, provisioned, run_tiny


def load_table() -> ModuleType:
    """Import ``bench/_table.py`` without putting ``bench/`` on ``sys.path``."""
    spec = importlib.util.spec_from_file_location("acp2_bench_table", BENCH / "_table.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while decorating
    spec.loader.exec_module(module)
    return module


def remote_lines(
    values: dict[str, dict[str, float]], absent: dict[str, dict[str, str]]
) -> dict[str, list[str]]:
    table = load_table()
    lines = table.table_rows(values, absent, ("acp2", "ts-sdk"), ("remote",))
    return {line[0]: line[1:] for line in lines[1:]}


def test_the_ts_sdk_remote_pair_runs_and_reports_no_resume(tmp_path: Path) -> None:
    provisioned("ts-sdk")
    done, results = run_tiny(tmp_path, "ts-sdk", "--only", "remote")
    remote = results["remote"]
    assert remote["status"] == "ok", remote["reason"]
    metrics = remote["metrics"]
    for key in ("ws", "sse"):
        assert metrics[f"{key}_updates_per_s"] > 0
        assert metrics[f"{key}_client_cpu_us"] > 0
        assert metrics[f"{key}_prompt_p50_ms"] > 0
        assert f"{key}_reconnect_p50_ms" in remote["skipped"]
    assert metrics["idle_conn_kib"] > 0
    assert "remote.ws_reconnect_p50_ms skipped: the TS SDK 2.4.0" in done.stdout


def test_acp2_throughput_is_judged_against_five_times_the_ts_pair() -> None:
    values = {
        "acp2": {"remote.ws_updates_per_s": 60.0, "remote.sse_updates_per_s": 40.0},
        "ts-sdk": {"remote.ws_updates_per_s": 10.0, "remote.sse_updates_per_s": 10.0},
    }
    lines = remote_lines(values, {})
    assert lines["remote WebSocket: updates/s"][2:] == ["6.00x", ">= 5x ts-sdk pair", "met"]
    assert lines["remote SSE: updates/s"][2:] == ["4.00x", ">= 5x ts-sdk pair", "NOT MET"]


def test_plain_links_are_compared_with_the_ts_pair_for_information_only() -> None:
    values = {
        "acp2": {"remote.ws_plain_updates_per_s": 30.0},
        "ts-sdk": {"remote.ws_updates_per_s": 10.0},
    }
    cells = remote_lines(values, {})["remote WebSocket plain: updates/s"]
    assert cells == ["30", "-", "3.00x", "info: >= 5x ts-sdk pair", "info"]


def test_a_metric_the_baseline_skipped_reads_n_a() -> None:
    values = {
        "acp2": {"remote.ws_reconnect_p50_ms": 12.0},
        "ts-sdk": {"remote.ws_prompt_p50_ms": 1.0},
    }
    absent = {"ts-sdk": {"remote.ws_reconnect_p50_ms": "n/a"}}
    cells = remote_lines(values, absent)["remote WebSocket: cut -> prompt answered p50 ms"]
    assert cells[:2] == ["12.00", "n/a"]


def test_acp2_reports_how_long_each_side_of_a_link_was_idle(tmp_path: Path) -> None:
    if not Path("/proc/self/schedstat").exists():
        pytest.skip("this kernel keeps no /proc/<pid>/schedstat")
    _, results = run_tiny(tmp_path, "acp2", "--only", "remote")
    remote = results["remote"]
    assert remote["status"] == "ok", remote["reason"]
    for key in ("ws", "sse", "ws_plain", "sse_plain"):
        for side in ("client", "server"):
            assert remote["metrics"][f"{key}_{side}_idle_us"] >= 0


def test_the_idle_time_of_both_sides_is_shown_for_each_durable_link() -> None:
    values = {"acp2": {"remote.ws_client_idle_us": 0.31, "remote.sse_server_idle_us": 3.0}}
    lines = remote_lines(values, {})
    assert lines["remote WebSocket: client idle µs/update"][0] == "0.3"
    assert lines["remote SSE: server idle µs/update"][0] == "3.0"
