"""acp2's client against claude-agent-acp 0.23.1 (``@zed-industries/claude-agent-acp``,
the last ACP v1 Claude Code adapter), installed from ``npm-claude-v1/package-lock.json``
and pointed at the fake Messages API on 127.0.0.1 (:mod:`fake_vendors`).

What it does here: it answers ``session/new`` with session ``modes`` *and* config
options of its own, one of them with id ``mode`` (issue 26: acp2 listed ``mode`` twice).
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from acp2.client import connect

from . import fake_vendors
from .agents import RUN_TIMEOUT, claude_v1

pytestmark = pytest.mark.real_agents


@pytest.mark.anyio
async def test_each_config_option_id_is_listed_once(claude_v1_js: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with fake_vendors.serve_anthropic() as fake:
        agent = claude_v1(claude_v1_js, fake.url, tmp_path)
        with anyio.fail_after(RUN_TIMEOUT):
            async with connect(
                agent.argv, cwd=project, env=agent.env, initialize_timeout=RUN_TIMEOUT
            ) as client:
                session = await client.new_session()
                ids = [option.config_id for option in session.state.config_options]
                (mode,) = [o for o in session.state.config_options if o.config_id == "mode"]
                other = next(c.value for c in mode.options if c.value != mode.current_value)
                # Setting it is the agent's own set_config_option (its option, its ids).
                await session.set_config_option("mode", other)
                after = [(o.config_id, o.current_value) for o in session.state.config_options]
    assert "mode" in ids
    assert len(ids) == len(set(ids)), ids
    assert [value for config_id, value in after if config_id == "mode"] == [other]
