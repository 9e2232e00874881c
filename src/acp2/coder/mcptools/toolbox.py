"""MCP tools next to the built-in ones: named, described, permission-gated and run.

A tool ``t`` of server ``s`` is offered as ``mcp__s__t`` (characters a provider refuses
become ``_``; 64 characters at most; a clash gets a numeric suffix). Its permission
category is ``mcp:<server>/<tool>``, so "always allow" covers that tool of that server
only. A call is an ordinary ACP tool call titled ``<tool> (MCP server <server>)``; a
failure of the server (:class:`~acp2.errors.McpServerError`) fails that call only, with
one line the user and the model both read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from acp2 import sanitize
from acp2.coder.mcptools.results import convert_result
from acp2.coder.messages import ToolSpec
from acp2.coder.tools import Prepared, Toolbox
from acp2.coder.tools.errors import ToolError
from acp2.coder.tools.toolbox import ToolContext, ToolRun
from acp2.errors import McpServerError
from acp2.schema import Content, TextContent

if TYPE_CHECKING:
    from acp2.agent import Turn
    from acp2.agent.mcp import McpServerClient

__all__ = ["MCP_PREFIX", "McpTool", "McpToolbox", "with_mcp"]

#: The prefix of every MCP tool's name (no built-in tool has it).
MCP_PREFIX = "mcp__"
_NAME_LIMIT = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
#: Characters of a server's tool description the model reads.
_DESCRIPTION_LIMIT = 2000
#: Characters of a tool's JSON Schema sent to the model; a larger one becomes "any object".
_SCHEMA_LIMIT = 32_000
_ANY_OBJECT: dict[str, Any] = {"type": "object", "properties": {}}


@dataclass(frozen=True)
class McpTool:
    """One offered MCP tool: the model's ``spec``, its ``server`` and the ``tool`` name there."""

    spec: ToolSpec
    server: McpServerClient
    tool: str


class McpToolbox(Toolbox):
    """The built-in tools of ``base`` plus ``tools`` (offered name -> :class:`McpTool`)."""

    def __init__(self, base: Toolbox, tools: Mapping[str, McpTool]) -> None:
        super().__init__(
            base.sandbox,
            command_timeout=base.command_timeout,
            limits=base.limits,
            command_policy=base.command_policy,
        )
        self.mcp = dict(tools)
        self.specs = (*base.specs, *(t.spec for t in self.mcp.values()))

    async def prepare_async(self, name: str, arguments: str) -> Prepared:
        """An MCP call is checked here (arguments must be a JSON object); others as before."""
        if name in self.mcp:
            return self.prepare(name, arguments)
        return await super().prepare_async(name, arguments)

    def prepare(self, name: str, arguments: str) -> Prepared:
        """Check a request; raise ToolError (unknown tool, bad arguments...)."""
        found = self.mcp.get(name)
        if found is None:
            return super().prepare(name, arguments)
        args = _object(arguments)

        async def execute(_: ToolContext) -> ToolRun:
            return await _call(found, args)

        title = f"{found.tool} (MCP server {found.server.name})"
        return Prepared(sanitize.line(title), found.spec.kind, execute)


async def _call(found: McpTool, args: dict[str, Any]) -> ToolRun:
    try:
        result = await found.server.call_tool(found.tool, args)
    except McpServerError as exc:
        return ToolRun(False, str(exc), [_text(str(exc))])
    text, content = convert_result(result)
    raw = {"server": found.server.name, "tool": found.tool, "isError": result.is_error}
    return ToolRun(not result.is_error, text, content, raw)


async def with_mcp(turn: Turn, base: Toolbox, reported: set[str]) -> Toolbox:
    """``base`` plus the tools of the session's connected MCP servers. A server that is
    unusable is said once per session (``reported`` remembers which), in one line."""
    servers = await turn.mcp.servers()
    for server in servers:
        if server.error is not None and server.name not in reported:
            reported.add(server.name)
            await turn.say(f"MCP server {server.name!r} is unavailable: {server.error}\n\n")
    usable = [s for s in servers if s.error is None]
    return McpToolbox(base, offered_tools(usable)) if usable else base


def offered_tools(servers: list[McpServerClient]) -> dict[str, McpTool]:
    """Every tool of ``servers`` under a unique, provider-safe ``mcp__`` name."""
    offered: dict[str, McpTool] = {}
    for server in servers:
        for tool in server.tools:
            name = _unique(f"{MCP_PREFIX}{_safe(server.name)}__{_safe(tool.name)}", offered)
            offered[name] = McpTool(_spec(name, server, tool), server, tool.name)
    return offered


def _spec(name: str, server: McpServerClient, tool: Any) -> ToolSpec:
    about = (tool.description or tool.title or tool.name)[:_DESCRIPTION_LIMIT]
    read_only = bool(getattr(tool.annotations, "read_only_hint", False))
    schema = tool.input_schema or _ANY_OBJECT
    if len(json.dumps(schema)) > _SCHEMA_LIMIT:
        schema = _ANY_OBJECT  # a hostile server cannot fill the model's context this way
    return ToolSpec(
        name,
        f"{about}\n(Tool {tool.name!r} of the MCP server {server.name!r}.)",
        schema,
        kind="read" if read_only else "other",
        permission=f"mcp:{server.name}/{tool.name}",
    )


def _safe(text: str) -> str:
    return _UNSAFE.sub("_", text) or "_"


def _unique(name: str, taken: Mapping[str, object]) -> str:
    name = name[:_NAME_LIMIT]
    index = 2
    candidate = name
    while candidate in taken:
        suffix = f"_{index}"
        candidate = name[: _NAME_LIMIT - len(suffix)] + suffix
        index += 1
    return candidate


def _object(arguments: str) -> dict[str, Any]:
    try:
        args = json.loads(arguments or "{}")
    except json.JSONDecodeError as exc:
        raise ToolError(f"the arguments are not valid JSON ({exc.msg})") from None
    if not isinstance(args, dict):
        raise ToolError("the arguments must be a JSON object")
    return args


def _text(text: str) -> Content:
    return Content(content=TextContent(text=text))
