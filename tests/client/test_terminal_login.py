"""Terminal login (AU-05, AU-06): the agent's own login command, run in the user's
terminal with the method's args and env, its exit status the outcome."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import anyio
import pytest

from acp2.client.terminal_login import (
    MAX_ARGS,
    login_argv,
    login_env,
    run_terminal_login,
    terminal_login_capabilities,
    terminal_methods,
)
from acp2.errors import LocalProtocolError
from acp2.schema import AuthMethodAgent, AuthMethodTerminal, ClientCapabilities
from acp2.schema.mcp import EnvVariable
from helpers.timeouts import SCENARIO_TIMEOUT

pytestmark = pytest.mark.anyio

PY = [sys.executable, "-c"]


def method(args: list[str] | None = None, env: dict[str, str] | None = None) -> AuthMethodTerminal:
    variables = [EnvVariable(name=k, value=v) for k, v in (env or {}).items()]
    return AuthMethodTerminal(method_id="t", name="T", args=args or [], env=variables)


def test_au05_the_capability_says_the_client_can_run_a_terminal_login() -> None:
    caps = terminal_login_capabilities()
    assert caps.auth is not None
    assert caps.auth.terminal is not None  # type: ignore[union-attr]
    kept = terminal_login_capabilities(ClientCapabilities())
    assert kept.auth.terminal is not None  # type: ignore[union-attr]


def test_only_terminal_methods_are_picked_in_the_agents_order() -> None:
    agent = AuthMethodAgent(method_id="a", name="A")
    first, second = method(["1"]), method(["2"])
    assert terminal_methods([first, agent, second]) == [first, second]


def test_au06_the_login_is_the_agents_argv_with_the_methods_args_appended() -> None:
    assert login_argv(["agent", "--x"], method(["--login", "now"])) == [
        "agent",
        "--x",
        "--login",
        "now",
    ]


def test_au06_the_methods_env_overrides_same_named_variables() -> None:
    env = login_env({"A": "1", "B": "2"}, method(env={"B": "3", "C": "4"}))
    assert env == {"A": "1", "B": "3", "C": "4"}


@pytest.mark.parametrize(
    ("args", "env", "why"),
    [
        (["x"] * (MAX_ARGS + 1), {}, "arguments"),
        (["a\0b"], {}, "NUL"),
        ([], {"BAD-NAME": "x"}, "name"),
        ([], {"A": "x\0y"}, "NUL"),
    ],
)
def test_a_hostile_method_is_refused_before_anything_runs(
    args: list[str], env: dict[str, str], why: str
) -> None:
    m = method(args, env)

    def check() -> None:
        login_argv(["agent"], m)
        login_env({}, m)

    with pytest.raises(LocalProtocolError, match=why):
        check()


def test_au06_a_variable_given_twice_is_refused() -> None:
    twice = AuthMethodTerminal(
        method_id="t",
        name="T",
        env=[EnvVariable(name="A", value="1"), EnvVariable(name="A", value="2")],
    )
    with pytest.raises(LocalProtocolError, match="twice"):
        login_env({}, twice)


async def test_au06_exit_status_zero_is_success_and_the_env_and_cwd_reach_the_login(
    tmp_path: Path,
) -> None:
    script = (
        "import os,sys,pathlib; pathlib.Path('seen').write_text(os.environ['TOKEN']); "
        "sys.exit(0 if sys.argv[1:] == ['--login'] else 5)"
    )
    m = method(["--login"], {"TOKEN": "abc"})
    with anyio.fail_after(SCENARIO_TIMEOUT):
        assert await run_terminal_login([*PY, script], m, cwd=tmp_path)
    assert (tmp_path / "seen").read_text() == "abc"


async def test_au06_a_non_zero_status_or_a_signal_is_failure() -> None:
    with anyio.fail_after(SCENARIO_TIMEOUT):
        assert not await run_terminal_login([*PY, "import sys; sys.exit(3)"], method())
        kill = "import os,signal; os.kill(os.getpid(), signal.SIGTERM)"
        assert not await run_terminal_login([*PY, kill], method())


async def test_ctrl_c_would_reach_the_login_and_the_clients_handler_comes_back() -> None:
    before = signal.getsignal(signal.SIGINT)
    # While it runs SIGINT does nothing here, by a handler: an ignored SIGINT would stay
    # ignored in the login across exec (Python keeps SIG_IGN at start-up).
    script = "import signal,sys; sys.exit(signal.getsignal(signal.SIGINT) is signal.SIG_IGN)"
    with anyio.fail_after(SCENARIO_TIMEOUT):
        assert await run_terminal_login([*PY, script], method())
    assert signal.getsignal(signal.SIGINT) is before


async def test_a_cancelled_wait_kills_the_login(tmp_path: Path) -> None:
    script = (
        "import os,time,pathlib; pathlib.Path('pid').write_text(str(os.getpid())); time.sleep(60)"
    )
    with anyio.move_on_after(2):
        await run_terminal_login([*PY, script], method(), cwd=tmp_path)
    pid = int((tmp_path / "pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
