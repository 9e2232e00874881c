"""The real agents under test, each pointed at a fake model server on 127.0.0.1, and
``acp2 run`` driving them (a real subprocess on real pipes, its agent's wire tapped).

:func:`gemini` and :func:`fast_agent` give an :class:`Agent` (argv + environment): a
private ``HOME`` with no account, telemetry off, the model endpoint on the fake server.
:func:`run` runs ``acp2 run --json --permission allow`` on it and returns the parsed
output and the tapped wire (``tests/interop/tap.py``).
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from helpers.processes import ACP2, isolated_env
from helpers.timeouts import PROCESS_TIMEOUT, SCENARIO_TIMEOUT
from interop.v1_schema import validate_v1_log
from interop.wire import Frame, read_log

__all__ = [
    "RUN_TIMEOUT",
    "Agent",
    "Run",
    "claude",
    "claude_v1",
    "codex",
    "fast_agent",
    "gemini",
    "need_run_options",
    "requests_of",
    "run",
    "run_flags",
    "tapped",
]

TAP = Path(__file__).resolve().parents[1] / "interop" / "tap.py"
#: One ``acp2 run`` against a real agent: its start-up (10-40 s on a busy machine) and a
#: few model turns.
RUN_TIMEOUT = 2 * SCENARIO_TIMEOUT + PROCESS_TIMEOUT
#: The Gemini model the fake serves; naming one skips the CLI's model router, which
#: asks the model to classify every prompt first.
GEMINI_MODEL = "gemini-2.5-flash"


@dataclass
class Agent:
    """How to start one agent: ``argv`` with environment ``env``."""

    name: str
    argv: list[str]
    env: dict[str, str]


def _home(root: Path) -> Path:
    home = root / "home"
    (home / ".gemini").mkdir(parents=True, exist_ok=True)
    # No usage statistics: nothing but the fake server is reachable here anyway.
    settings = {"privacy": {"usageStatisticsEnabled": False}}
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings))
    return home


def gemini(gemini_js: Path, base_url: str, root: Path) -> Agent:
    """Gemini CLI in ACP mode against the fake Gemini API at ``base_url``."""
    env = isolated_env(root / "acp2-data") | {
        "HOME": str(_home(root)),
        "GEMINI_API_KEY": "fake-key",
        "GOOGLE_GEMINI_BASE_URL": base_url,
        # One process instead of a launcher that re-spawns node with a bigger heap (and
        # ignores SIGTERM): half the start-up time.
        "GEMINI_CLI_NO_RELAUNCH": "true",
    }
    argv = ["node", str(gemini_js), "--acp", "--model", GEMINI_MODEL]
    return Agent("gemini-cli", argv, env)


def fast_agent(command: list[str], base_url: str, root: Path, *, shell: bool = False) -> Agent:
    """fast-agent in ACP mode with its OpenAI-compatible "generic" provider at
    ``base_url``; ``shell`` enables its ``bash`` tool (on the client's terminals when
    the client offers them)."""
    env = isolated_env(root / "acp2-data") | {
        "HOME": str(_home(root)),
        "GENERIC_BASE_URL": base_url,
        "GENERIC_API_KEY": "fake-key",
    }
    argv = [*command, "acp", "--model", "generic.fake-model", *(["--shell"] if shell else [])]
    return Agent("fast-agent", argv, env)


def codex(adapters: Path, base_url: str, root: Path) -> Agent:
    """Codex through ``codex-acp`` (ACP v2), its model provider the fake Responses API at
    ``base_url`` (``.../v1``): a ``config.toml`` in a private ``CODEX_HOME`` names it, so no
    login is needed and nothing else is contacted (WebSockets to the model are off)."""
    home = _home(root)
    codex_home = home / ".codex"
    codex_home.mkdir(exist_ok=True)
    config = (
        'model = "gpt-fake"\nmodel_provider = "fake"\n[model_providers.fake]\n'
        f'name = "fake"\nbase_url = "{base_url}"\nenv_key = "OPENAI_API_KEY"\n'
        'wire_api = "responses"\nsupports_websockets = false\n'
    )
    (codex_home / "config.toml").write_text(config)
    env = isolated_env(root / "acp2-data") | {
        "HOME": str(home),
        "CODEX_HOME": str(codex_home),
        "OPENAI_API_KEY": "fake-key",
        # The "Workspace access" mode: approvals go to the user (the ACP client), not to
        # the default mode's model-run auto review, so a command that needs approval
        # asks the client and the permission rows are judged.
        "INITIAL_AGENT_MODE": "workspace-write",
    }
    argv = ["node", str(adapters / "node_modules/@agentclientprotocol/codex-acp/dist/index.js")]
    return Agent("codex-acp", argv, env)


def claude(adapters: Path, base_url: str, root: Path) -> Agent:
    """Claude Code through ``claude-agent-acp`` (ACP v2) against the fake Messages API at
    ``base_url``. ``IS_SANDBOX=1``: Claude Code refuses its permission bypass as root
    otherwise (this machine's tests run as root); non-essential traffic and updates off."""
    env = isolated_env(root / "acp2-data") | {
        "HOME": str(_home(root)),
        "ANTHROPIC_API_KEY": "fake-key",
        "ANTHROPIC_BASE_URL": base_url,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "IS_SANDBOX": "1",
    }
    # Manual permission mode (the adapter's default here is "auto", which writes without
    # asking): a tool call then asks the client, so the permission rows are judged.
    claude_dir = Path(env["HOME"]) / ".claude"
    claude_dir.mkdir(exist_ok=True)
    settings = {"permissions": {"defaultMode": "default"}}
    (claude_dir / "settings.json").write_text(json.dumps(settings))
    js = adapters / "node_modules/@agentclientprotocol/claude-agent-acp/dist/index.js"
    return Agent("claude-agent-acp", ["node", str(js)], env)


@functools.cache
def run_flags() -> frozenset[str]:
    """The options ``acp2 run --help`` lists (``--fs`` / ``--terminal`` come with the
    v1 file and terminal serving)."""
    out = subprocess.run(
        [*ACP2, "run", "--help"], capture_output=True, text=True, timeout=PROCESS_TIMEOUT
    ).stdout
    return frozenset(word.strip("[],") for word in out.split() if word.startswith("--"))


def need_run_options(*options: str) -> None:
    """Skip the calling test unless ``acp2 run --help`` lists every one of ``options``
    (asked only when a selected test runs, never at collection)."""
    import pytest

    missing = [option for option in options if option not in run_flags()]
    if missing:
        pytest.skip(f"acp2 run has no {' / '.join(missing)} option here")


@dataclass
class Run:
    """What one ``acp2 run --json`` printed, the agent's tapped wire, and the frames of
    that wire the vendored v1 schema rejects (both directions)."""

    returncode: int
    lines: list[dict[str, Any]]
    stderr: str
    wire: list[Frame]
    schema_errors: list[Any]

    @property
    def summary(self) -> dict[str, Any]:
        """The last line: ``{"sessionId", "stopReason", "text"}``."""
        return self.lines[-1]

    def updates(self, kind: str) -> list[dict[str, Any]]:
        """The ``session/update`` objects of ``sessionUpdate`` ``kind``."""
        return [line for line in self.lines if line.get("sessionUpdate") == kind]

    def permissions(self) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """(request, answer) of each permission request, in order."""
        asked = [line["permissionRequest"] for line in self.lines if "permissionRequest" in line]
        key = "permissionResponse"
        answers = [line[key] for line in self.lines if key in line]
        return list(zip(asked, answers, strict=True))


def tapped(agent: Agent, log: Path) -> list[str]:
    """``agent.argv`` behind the wire tap writing ``log``."""
    return [sys.executable, str(TAP), "--log", str(log), "--", *agent.argv]


def run(agent: Agent, prompt: str, cwd: Path, *options: str) -> Run:
    """``acp2 run --json --permission allow OPTIONS PROMPT -- AGENT`` in ``cwd``."""
    log = cwd.parent / f"wire-{agent.name}.jsonl"
    log.unlink(missing_ok=True)
    argv = [*ACP2, "run", "--json", "--permission", "allow", "--timeout", str(RUN_TIMEOUT)]
    done = subprocess.run(
        [*argv, *options, prompt, "--", *tapped(agent, log)],
        capture_output=True,
        text=True,
        env=agent.env,
        cwd=cwd,
        timeout=RUN_TIMEOUT + PROCESS_TIMEOUT,
        check=False,
    )
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    if not log.exists():
        return Run(done.returncode, lines, done.stderr, [], [])
    return Run(done.returncode, lines, done.stderr, read_log(log), validate_v1_log(log))


def requests_of(wire: list[Frame], method: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(params, answer message) of each request ``method`` the agent sent its client."""
    asked = [f.message for f in wire if f.sender == "agent" and f.method == method]
    answers = {
        f.message["id"]: f.message for f in wire if f.sender == "client" and f.kind == "response"
    }
    return [(m["params"], answers.get(m["id"], {})) for m in asked if "id" in m]


def claude_v1(js: Path, base_url: str, root: Path) -> Agent:
    """claude-agent-acp 0.23.1 (ACP v1, ``js`` its ``dist/index.js``) with the
    environment :func:`claude` gives the v2 adapter: the fake Messages API at
    ``base_url``, manual permission mode."""
    env = claude(root, base_url, root).env  # only the environment: the argv is v2's
    return Agent("claude-agent-acp-v1", ["node", str(js)], env)
