"""The coding agent driven by a fake OpenAI-compatible server, for a real ``acp2 serve``:
``acp2 serve --app mcp_servers.served_coder:agent`` with ``MCP_TEST_MODEL_URL`` set to the
fake's base URL (and ``tests/`` on ``PYTHONPATH``)."""

from __future__ import annotations

import os
from typing import Any

from acp2.coder import build_coder_agent
from acp2.coder.providers.openai import OpenAIConfig, OpenAIModel


def agent() -> Any:
    """The coding agent with the model at ``$MCP_TEST_MODEL_URL`` (history in memory)."""
    config = OpenAIConfig(model="fake", base_url=os.environ["MCP_TEST_MODEL_URL"], api_key="sk-x")
    return build_coder_agent(OpenAIModel(config), store=":memory:")
