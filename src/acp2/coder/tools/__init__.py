"""The coding agent's tools: files, search, edits and commands, confined to the session's
roots. See :class:`Toolbox` (checks and runs calls) and :class:`Sandbox` (confinement)."""

from acp2.coder.tools.errors import ToolError
from acp2.coder.tools.limits import DEFAULT_LIMITS, FileLimits
from acp2.coder.tools.sandbox import DEFAULT_PROTECTED, Sandbox, SandboxError, SandboxPath
from acp2.coder.tools.specs import EDIT, EXECUTE, TOOL_SPECS
from acp2.coder.tools.toolbox import Prepared, Toolbox, ToolContext, ToolRun

__all__ = [
    "DEFAULT_LIMITS",
    "DEFAULT_PROTECTED",
    "EDIT",
    "EXECUTE",
    "TOOL_SPECS",
    "FileLimits",
    "Prepared",
    "Sandbox",
    "SandboxError",
    "SandboxPath",
    "ToolContext",
    "ToolError",
    "ToolRun",
    "Toolbox",
]
