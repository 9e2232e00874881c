"""The harness itself: the wire tap, the log reader, the install cache, the skip rule."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import timeouts

from . import node_env
from .conftest import REQUIRE_ENV, skip_or_fail
from .peers import tap_argv
from .wire import AGENT_TO_CLIENT, CLIENT_TO_AGENT, read_log

# An "agent" that answers each line with the line upper-cased, then exits.
UPPER = [
    sys.executable,
    "-c",
    "import sys\nfor l in sys.stdin.buffer: sys.stdout.buffer.write(l.upper()); sys.stdout.flush()",
]


def run_tap(log: Path, data: bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        tap_argv(log, UPPER), input=data, capture_output=True, timeout=timeouts.SCENARIO_TIMEOUT
    )


def test_the_tap_forwards_bytes_unchanged_and_logs_each_line(tmp_path: Path) -> None:
    log = tmp_path / "wire.jsonl"
    data = b'{"a":1}\n{"b":"\xc3\xa9"}\r\n\xff\xfe raw\n'

    done = run_tap(log, data)

    assert done.returncode == 0, done.stderr
    assert done.stdout == data.upper()
    frames = read_log(log)
    assert sorted(f.direction for f in frames) == [AGENT_TO_CLIENT] * 3 + [CLIENT_TO_AGENT] * 3
    sent = [f for f in frames if f.direction == CLIENT_TO_AGENT]
    assert [f.message for f in sent[:2]] == [{"a": 1}, {"b": "é"}]
    assert sent[2].message is None
    assert sent[2].line.endswith(" raw")
    assert [f.seq for f in frames] == list(range(6))


def test_the_tap_logs_a_final_line_without_newline_as_partial(tmp_path: Path) -> None:
    log = tmp_path / "wire.jsonl"

    done = run_tap(log, b'{"x":1}\n{"tail"')

    assert done.stdout == b'{"X":1}\n{"TAIL"'
    partial = [f for f in read_log(log) if f.partial]
    assert {f.direction for f in partial} == {CLIENT_TO_AGENT, AGENT_TO_CLIENT}


def test_the_tap_exits_with_the_agent_exit_code(tmp_path: Path) -> None:
    argv = tap_argv(tmp_path / "wire.jsonl", [sys.executable, "-c", "raise SystemExit(3)"])

    done = subprocess.run(argv, input=b"", capture_output=True, timeout=timeouts.SCENARIO_TIMEOUT)

    assert done.returncode == 3


def test_missing_node_skips_with_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "")
    monkeypatch.delenv(REQUIRE_ENV, raising=False)

    with pytest.raises(node_env.NodeUnavailable, match="node") as exc:
        node_env.ensure_installed()
    with pytest.raises(pytest.skip.Exception, match="node"):
        skip_or_fail(str(exc.value))


def test_missing_node_fails_when_interop_is_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(REQUIRE_ENV, "1")

    with pytest.raises(pytest.fail.Exception, match="forbids skipping"):
        skip_or_fail("`node` is not on PATH")


def test_the_cache_folder_is_named_by_the_lockfile(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ACP2_INTEROP_CACHE", str(tmp_path))

    assert node_env.install_dir() == tmp_path / node_env.lockfile_digest()
    assert len(node_env.lockfile_digest()) == 64


@pytest.mark.interop
def test_an_installed_sdk_is_reused(ts_sdk: Path) -> None:
    stamp = (ts_sdk / node_env.STAMP).stat().st_mtime_ns

    assert node_env.ensure_installed() == ts_sdk
    assert (ts_sdk / node_env.STAMP).stat().st_mtime_ns == stamp


@pytest.mark.interop
@pytest.mark.slow
def test_concurrent_installs_share_one_folder(ts_sdk: Path, tmp_path: Path) -> None:
    del ts_sdk  # only for the skip rule: node and npm work here
    env = {**os.environ, "ACP2_INTEROP_CACHE": str(tmp_path)}
    code = "from interop import node_env; print(node_env.ensure_installed())"
    tests_dir = Path(__file__).resolve().parents[1]
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", code], cwd=tests_dir, env=env, stdout=subprocess.PIPE, text=True
        )
        for _ in range(3)
    ]
    outputs = [racer.communicate(timeout=600)[0].strip() for racer in racers]

    assert [racer.returncode for racer in racers] == [0, 0, 0]
    assert len(set(outputs)) == 1
    folder = Path(outputs[0])
    assert node_env.is_installed(folder)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [folder.name, f"{folder.name}.lock"]
    )
    assert json.loads((folder / "package.json").read_text())["dependencies"]
