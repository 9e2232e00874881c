"""The scenario test agent, behind an ``agent``-type auth method ``key``: sessions are
refused with -32000 until the client logs in (``acp2 check --auth key``)."""

from __future__ import annotations

from acp2.agent.settings import AuthMethodSpec
from acp2.testing.scenarios import build_test_agent


async def _login() -> None:
    return None


if __name__ == "__main__":
    agent = build_test_agent()
    agent.auth_methods = [AuthMethodSpec("key", "API key", login=_login)]
    agent.run()
