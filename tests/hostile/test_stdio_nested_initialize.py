"""Attack: a first line nested too deeply, read before the rpc reader (issue 24, item 5).

``acp2 agent`` and ``acp2 test-agent`` answer a v2 ``initialize`` before the rpc layer
is loaded (``agent.early``), and ``acp2 bridge`` reads the client's ``initialize`` to
choose between passing through and translating (``bridge.hello``). Both decoded the line
with msgspec and caught only ``DecodeError``: an ``initialize`` whose params nest 5,000
deep (10 KB) raised ``RecursionError`` and each exited with "This is a bug in acp2". Now
that line is answered ``-32600`` and the ``initialize`` after it is answered normally.
Real subprocesses over real pipes.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from helpers.processes import ACP2, isolated_env
from helpers.timeouts import RUN_TIMEOUT

DEEP = "[" * 5_000 + "]" * 5_000
INIT = {"protocolVersion": 2, "capabilities": {}, "info": {"name": "t", "version": "0"}}
COMMANDS = {
    "agent": ["agent", "--model", "scripted"],
    "test-agent": ["test-agent"],
    "bridge": ["bridge", "--", *ACP2, "test-agent"],
}


def lines() -> str:
    nested = '{"protocolVersion":2,"x":' + DEEP + "}"
    first = '{"jsonrpc":"2.0","id":1,"method":"initialize","params":' + nested + "}"
    second = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": INIT})
    return first + "\n" + second + "\n"


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_deeply_nested_first_initialize_is_refused_and_the_next_answered(
    name: str, tmp_path: Path
) -> None:
    done = subprocess.run(
        [*ACP2, *COMMANDS[name]],
        input=lines(),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=isolated_env(tmp_path / "data"),
        timeout=RUN_TIMEOUT,
        check=False,
    )
    assert "bug in acp2" not in done.stderr, done.stderr[-2000:]
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    refused = [a for a in answers if "error" in a]
    assert refused, done.stdout[-2000:]
    assert refused[0]["error"]["code"] == -32600
    assert "nested too deeply" in refused[0]["error"]["message"]
    assert any(a.get("id") == 2 and a["result"]["protocolVersion"] == 2 for a in answers)
