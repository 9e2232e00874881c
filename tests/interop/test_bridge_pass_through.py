"""``acp2 bridge`` between two peers of the same version is transparent: the official
SDKs' v1 pair and v2 pair, with the wire tapped on both sides of the bridge, see the
same frames byte for byte, in the same order, in both directions."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from helpers.timeouts import RUN_TIMEOUT as TIMEOUT

from . import expectations, v1_expectations
from .peers import py_agent_argv, run_py_client, run_ts_client, tap_argv, ts_agent_argv
from .wire import Frame, read_log

pytestmark = pytest.mark.interop


def bridged(log: Path, agent_argv: list[str]) -> list[str]:
    return [sys.executable, "-m", "acp2", "bridge", "--", *tap_argv(log, agent_argv)]


def lines(frames: list[Frame], direction: str) -> list[str]:
    return [f.line for f in frames if f.direction == direction]


def assert_same_wire(outer: Path, inner: Path) -> None:
    client_side, agent_side = read_log(outer), read_log(inner)
    for direction in ("client->agent", "agent->client"):
        assert lines(client_side, direction) == lines(agent_side, direction), direction
    assert len(client_side) > 4


def test_the_py_v1_pair_through_acp2_bridge_sees_the_same_frames(
    py_sdk_v1: Path, tmp_path: Path
) -> None:
    outer, inner = tmp_path / "client.jsonl", tmp_path / "agent.jsonl"
    agent = bridged(inner, py_agent_argv(py_sdk_v1, "v1"))

    report = run_py_client(
        py_sdk_v1,
        "tools-allow",
        agent,
        tap_log=outer,
        version="v1",
        cwd=tmp_path,
        timeout=TIMEOUT,
    )

    v1_expectations.check_v1_report(report)
    assert_same_wire(outer, inner)


def test_the_ts_v2_pair_through_acp2_bridge_sees_the_same_frames(
    ts_sdk: Path, tmp_path: Path
) -> None:
    outer, inner = tmp_path / "client.jsonl", tmp_path / "agent.jsonl"
    agent = bridged(inner, ts_agent_argv(ts_sdk))

    report = run_ts_client(
        ts_sdk, "tools-allow", agent, tap_log=outer, cwd=tmp_path, timeout=TIMEOUT
    )

    expectations.check_report(report)
    assert_same_wire(outer, inner)
