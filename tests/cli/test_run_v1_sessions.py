"""``acp2 run`` against a v1 agent's sessions (issue 26, fault 3 and fault 5's first
point): ``--resume`` works with an agent that only advertises ``loadSession``, and what
cannot work is one error line that says why -- never a traceback, never a log line
besides (real processes: acp2 run and ``v1_sessions_agent.py``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from cli_helpers import isolated_env, run_acp2

from helpers.timeouts import RUN_TIMEOUT

AGENT = [sys.executable, str(Path(__file__).with_name("v1_sessions_agent.py"))]


def _run(
    tmp_path: Path, prompt: str, *flags: str, agent: tuple[str, ...] = ()
) -> tuple[int, list[dict[str, object]], str]:
    state = tmp_path / "state"
    state.mkdir(exist_ok=True)
    done = run_acp2(
        "run",
        "--json",
        "--permission",
        "deny",
        *flags,
        prompt,
        "--",
        *AGENT,
        str(state),
        *agent,
        stdin="",
        env=isolated_env(tmp_path / "data"),
        cwd=tmp_path,
        timeout=RUN_TIMEOUT,
    )
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    return done.returncode, lines, done.stderr


def _one_error_line(stderr: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    assert lines[0].startswith("acp2 run: error: ")
    return lines[0]


def test_run_resume_continues_a_session_of_a_v1_agent_that_only_loads(tmp_path: Path) -> None:
    code, lines, stderr = _run(tmp_path, "first", agent=("--load",))
    assert code == 0, stderr
    session_id = str(lines[-1]["sessionId"])
    code, lines, stderr = _run(tmp_path, "second", "--resume", session_id, agent=("--load",))
    assert code == 0, stderr
    assert lines[-1] == {"sessionId": session_id, "stopReason": "end_turn", "text": "echo: second"}
    # session/load stood in for the resume: its replay of "first" was not shown as new.
    shown = json.dumps(lines[:-1])
    assert "first" not in shown
    state = tmp_path / "state" / f"{session_id}.json"
    assert json.loads(state.read_text()) == ["first", "echo: first", "second", "echo: second"]


def test_run_resume_of_an_agent_without_load_or_resume_says_what_it_lacks(
    tmp_path: Path,
) -> None:
    code, _, stderr = _run(tmp_path, "again", "--resume", "s-any")
    assert code != 0
    line = _one_error_line(stderr)
    assert "session/resume is not available" in line
    assert "v1-sessions-agent does not advertise loadSession or sessionCapabilities.resume" in line


def test_a_failed_load_prints_the_agents_reason(tmp_path: Path) -> None:
    flags = ("--fail-load", "the session file is corrupt")
    code, _, stderr = _run(tmp_path, "again", "--resume", "s-any", agent=flags)
    assert code != 0
    assert _one_error_line(stderr) == (
        "acp2 run: error: Internal error: the session file is corrupt"
    )


def test_a_null_answer_is_one_line_naming_the_agent_and_the_method(tmp_path: Path) -> None:
    code, _, stderr = _run(tmp_path, "hello", agent=("--null", "session/new"))
    assert code != 0
    line = _one_error_line(stderr)
    assert line.startswith(
        "acp2 run: error: the ACP v1 agent v1-sessions-agent answered session/new with a "
        "malformed result"
    )


def test_a_null_answer_to_an_advertised_resume_is_one_line(tmp_path: Path) -> None:
    flags = ("--load", "--advertise", "resume", "--null", "session/resume")
    code, _, stderr = _run(tmp_path, "again", "--resume", "s-any", agent=flags)
    assert code != 0
    assert "answered session/resume with a malformed result" in _one_error_line(stderr)
