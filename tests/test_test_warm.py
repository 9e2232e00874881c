"""Warm interpreters for the SDK peers (tests/helpers/warm.py): a launched script behaves
as the same script started cold, and the launcher's exit and signals are the child's."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.timeouts import PROCESS_TIMEOUT
from helpers.warm import WarmPython, warm_python

pytestmark = pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="Linux only")

PYTHON = Path(sys.executable)
SCRIPT = """\
import json, os, signal, sys, time
def term(*_):
    os.write(1, b"term\\n")  # not print: the signal may come during a write to stdout
    os._exit(7)
signal.signal(signal.SIGTERM, term)
sys.stdout.write(json.dumps({
    "argv": sys.argv, "cwd": os.getcwd(), "env": os.environ.get("WARM_PROBE"),
    "path0": sys.path[0], "stdin": sys.stdin.readline(), "pid": os.getpid(),
    "warm": "fractions" in sys.modules,
}) + "\\n")
sys.stdout.flush()
print("to stderr", file=sys.stderr)
if sys.argv[1:] == ["hang"]:
    time.sleep(60)
sys.exit(int(sys.argv[1]) if sys.argv[1:] and sys.argv[1].isdigit() else 0)
"""


@pytest.fixture(scope="module")
def warm() -> Iterator[WarmPython]:
    # fractions stands for the SDK: imported by the server (a cold interpreter does not),
    # so a child from the server has it.
    with warm_python(PYTHON, ["json", "fractions"]) as server:
        assert server is not None
        assert server.listening(PROCESS_TIMEOUT)
        yield server


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "probe" / "script.py"
    path.parent.mkdir()
    path.write_text(SCRIPT)
    return path


def hanging(warm: WarmPython, script: Path) -> tuple[subprocess.Popen[str], int]:
    """The script launched to hang, once it runs; and the pid of its (forked) child."""
    process = subprocess.Popen(
        warm.argv([str(PYTHON), str(script), "hang"]),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.write("x\n")
    process.stdin.flush()
    return process, json.loads(process.stdout.readline())["pid"]


def test_a_launched_script_gets_the_launchers_argv_cwd_env_stdio_and_exit_code(
    warm: WarmPython, script: Path, tmp_path: Path
) -> None:
    env = {**os.environ, "WARM_PROBE": "yes"}
    command = warm.argv([str(PYTHON), str(script), "3"])
    assert command[0] == str(PYTHON)
    assert str(script) in command

    done = subprocess.run(
        command, input="hello\n", capture_output=True, text=True, cwd=tmp_path, env=env,
        timeout=PROCESS_TIMEOUT,
    )  # fmt: skip

    seen = json.loads(done.stdout)
    assert done.returncode == 3
    assert seen["warm"], "the child did not come from the warm server"
    assert seen["argv"] == [str(script), "3"]
    assert (seen["cwd"], seen["env"], seen["stdin"]) == (str(tmp_path), "yes", "hello\n")
    assert seen["path0"] == str(script.parent)
    assert done.stderr == "to stderr\n"


def test_a_signal_to_the_launcher_reaches_the_child_whose_exit_it_reports(
    warm: WarmPython, script: Path
) -> None:
    process, _ = hanging(warm, script)

    process.terminate()

    assert process.wait(timeout=PROCESS_TIMEOUT) == 7  # the child's handler chose 7
    assert process.communicate()[0] == "term\n"


def test_a_child_killed_by_a_signal_makes_the_launcher_end_by_that_signal(
    warm: WarmPython, script: Path
) -> None:
    process, child = hanging(warm, script)

    os.kill(child, signal.SIGKILL)

    assert process.wait(timeout=PROCESS_TIMEOUT) == -signal.SIGKILL


def test_killing_the_launcher_kills_the_child(warm: WarmPython, script: Path) -> None:
    process, _ = hanging(warm, script)

    process.kill()  # the launcher only

    assert process.wait(timeout=PROCESS_TIMEOUT) == -signal.SIGKILL
    assert process.communicate()[0] == ""  # EOF: the child, which held it too, died


def test_without_a_server_the_launcher_runs_the_script_cold(script: Path, tmp_path: Path) -> None:
    absent = WarmPython(PYTHON, tmp_path / "no-socket", subprocess.Popen(["true"]))
    done = subprocess.run(
        absent.argv([str(PYTHON), str(script), "4"]), input="cold\n", capture_output=True,
        text=True, timeout=PROCESS_TIMEOUT,
    )  # fmt: skip

    assert done.returncode == 4
    seen = json.loads(done.stdout)
    assert (seen["stdin"], seen["warm"]) == ("cold\n", False)


def test_only_a_script_run_by_the_servers_interpreter_is_rewritten(warm: WarmPython) -> None:
    assert warm.argv(["node", "agent.mjs"]) == ["node", "agent.mjs"]
    assert warm.argv([str(PYTHON), "-c", "pass"]) == [str(PYTHON), "-c", "pass"]
