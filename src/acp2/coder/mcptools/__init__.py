"""The coding agent's side of the MCP servers a client gives a session.

The runtime connects them (:mod:`acp2.agent.mcp`); this package offers their tools to the
model under ``mcp__<server>__<tool>`` names (no built-in tool starts with ``mcp__``), runs
each call as an ACP tool call gated by a permission request per server and tool
(:mod:`.toolbox`), turns MCP results into tool-call content (:mod:`.results`) and puts
stdio servers in the command sandbox (:mod:`.sandbox`, :mod:`.jail`).
"""

from acp2.coder.mcptools.sandbox import sandbox_launcher
from acp2.coder.mcptools.toolbox import MCP_PREFIX, McpToolbox, with_mcp

__all__ = ["MCP_PREFIX", "McpToolbox", "sandbox_launcher", "with_mcp"]
