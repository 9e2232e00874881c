"""``--mcp`` and ``--mcp-config``: MCP servers a client passes to any agent, from flags and
from the config file editors use, with ``${ENV}`` secrets and capability filtering."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from acp2.check.probes.base import mcp_servers_for
from acp2.client.mcp_config import load_mcp_config, parse_mcp_flag
from acp2.errors import McpConfigError
from acp2.schema import McpServerHttp, McpServerStdio
from helpers.processes import ACP2, isolated_env
from helpers.timeouts import PROCESS_TIMEOUT
from mcp_servers.mcp_helpers import SERVER, http_server

AGENT = Path(__file__).resolve().parents[1] / "mcp_servers" / "mcp_agent.py"


def test_a_flag_with_a_url_is_an_http_server_and_one_with_a_command_is_stdio() -> None:
    web = parse_mcp_flag("web=https://example.invalid/mcp")
    assert isinstance(web, McpServerHttp)
    assert web.url == "https://example.invalid/mcp"
    local = parse_mcp_flag("files=npx -y 'some server' /tmp", which=lambda _: "/usr/bin/npx")
    assert isinstance(local, McpServerStdio)
    assert (local.command, local.args) == ("/usr/bin/npx", ["-y", "some server", "/tmp"])


@pytest.mark.parametrize("value", ["noequals", "=cmd", "name=", "x=/bin/a 'unclosed"])
def test_a_malformed_flag_is_a_clear_error(value: str) -> None:
    with pytest.raises(McpConfigError):
        parse_mcp_flag(value)


def test_a_config_file_in_the_editors_shape_is_read_with_env_expanded(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "files": {"command": "/bin/srv", "args": ["--root", "${HOME_X}"]},
                    "web": {
                        "type": "http",
                        "url": "https://h.invalid/${PATH_X}",
                        "headers": {"Authorization": "Bearer ${TOKEN_X}"},
                    },
                }
            }
        )
    )
    env = {"HOME_X": "/h", "PATH_X": "mcp", "TOKEN_X": "s3cret"}
    files, web = load_mcp_config(config, env)
    assert files.args == ["--root", "/h"]
    assert web.url == "https://h.invalid/mcp"
    assert web.headers[0].value == "Bearer s3cret"


def test_a_missing_variable_is_named_and_no_value_is_printed(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps({"mcpServers": {"a": {"command": "/bin/a", "env": {"K": "${NOPE_X}"}}}})
    )
    with pytest.raises(McpConfigError, match=r"\$\{NOPE_X\}, which is not set"):
        load_mcp_config(config, {"OTHER": "s3cret"})


def test_an_sse_server_is_refused_since_acp_v2_has_no_such_transport(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"old": {"type": "sse", "url": "http://x"}}}))
    with pytest.raises(McpConfigError, match="not in ACP v2"):
        load_mcp_config(config, {})


def _run(args: list[str], tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*ACP2, "run", "hi", *args],
        capture_output=True,
        text=True,
        timeout=PROCESS_TIMEOUT,
        cwd=tmp_path,
        env={**isolated_env(tmp_path), **env},
        check=False,
    )


def test_acp2_run_passes_servers_from_a_config_file_and_flags_to_the_agent(
    tmp_path: Path,
) -> None:
    config = tmp_path / "mcp.json"
    entry = {"command": "${PY_X}", "args": [str(SERVER)]}
    config.write_text(json.dumps({"mcpServers": {"py": entry}}))
    with http_server() as web:
        flags = ["--mcp-config", str(config), "--mcp", f"web={web.url}"]
        done = _run([*flags, "--", sys.executable, str(AGENT)], tmp_path, PY_X=sys.executable)
    assert done.returncode == 0, done.stderr
    assert "py: echo: hi" in done.stdout
    assert "web: echo: hi" in done.stdout


def test_servers_the_agent_cannot_take_are_left_out_with_a_warning(tmp_path: Path) -> None:
    with http_server() as web:
        flags = ["--mcp", f"py={sys.executable} {SERVER}", "--mcp", f"web={web.url}"]
        command = ["--", sys.executable, str(AGENT), "--stdio-only"]
        done = _run([*flags, *command], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "py: echo: hi" in done.stdout
    assert "web:" not in done.stdout
    assert "MCP server 'web' not sent: the agent takes no http MCP servers" in done.stderr


def test_a_bad_mcp_flag_is_a_usage_error_before_any_agent_starts(tmp_path: Path) -> None:
    done = _run(["--mcp", "broken", "--", "/nonexistent/agent"], tmp_path)
    assert done.returncode == 2
    assert "--mcp wants NAME=COMMAND or NAME=URL" in done.stderr


def test_acp2_check_sends_only_what_the_agent_takes_in_its_versions_shape() -> None:
    stdio = {"type": "stdio", "name": "s", "command": "/bin/s"}
    web = {"type": "http", "name": "w", "url": "http://127.0.0.1:1/mcp"}
    v2_stdio_only = {"session": {"mcp": {"stdio": {}}}}
    assert mcp_servers_for([stdio, web], v2_stdio_only, 2) == [stdio]
    v1_http = {"mcpCapabilities": {"http": True}}
    v1 = mcp_servers_for([stdio, web], v1_http, 1)
    assert v1 == [
        {"args": [], "env": [], "name": "s", "command": "/bin/s"},
        {"headers": [], **web},
    ]
    assert mcp_servers_for([stdio, web], {}, 1) == [v1[0]]


def test_acp2_chat_passes_servers_and_notes_the_ones_left_out(tmp_path: Path) -> None:
    with http_server() as web:
        flags = ["--mcp", f"py={sys.executable} {SERVER}", "--mcp", f"web={web.url}"]
        command = ["--", sys.executable, str(AGENT), "--stdio-only"]
        done = subprocess.run(
            [*ACP2, "chat", *flags, *command],
            input="hi\n",
            capture_output=True,
            text=True,
            timeout=PROCESS_TIMEOUT,
            cwd=tmp_path,
            env=isolated_env(tmp_path),
            check=False,
        )
    assert done.returncode == 0, done.stderr
    shown = done.stdout + done.stderr
    assert "py: echo: hi" in shown
    assert "MCP server 'web' not sent: the agent takes no http MCP servers" in shown
