"""What the model is told about each tool: name, description, JSON Schema, kind, permission."""

from __future__ import annotations

from typing import Any

from acp2.coder.messages import ToolSpec

__all__ = ["EDIT", "EXECUTE", "TOOL_SPECS"]

#: Permission categories ("always" answers are remembered per category).
EDIT = "edit"
EXECUTE = "execute"


def _schema(required: list[str], **properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required}


_STR = {"type": "string"}
_INT = {"type": "integer"}
_BOOL = {"type": "boolean"}

TOOL_SPECS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "read_file",
        "Read a UTF-8 text file. Paths are relative to the workspace root. Optional "
        "offset (first line, 1-based) and limit (number of lines); long files are shown "
        "in parts, so use offset/limit to page through them.",
        _schema(["path"], path=_STR, offset=_INT, limit=_INT),
        kind="read",
    ),
    ToolSpec(
        "list_files",
        "List files matching a glob (e.g. '**/*.py'; '**' = everything) under a directory "
        "(default: the workspace root). Files ignored by .gitignore are skipped.",
        _schema([], pattern=_STR, path=_STR),
        kind="search",
    ),
    ToolSpec(
        "search",
        "Search files for a regular expression (Python syntax); returns 'path:line: text' "
        "lines. Optional path (file or directory), glob filter and ignore_case. Respects "
        ".gitignore. Slow patterns are stopped after a time limit.",
        _schema(["pattern"], pattern=_STR, path=_STR, glob=_STR, ignore_case=_BOOL),
        kind="search",
    ),
    ToolSpec(
        "write_file",
        "Create a file or replace its whole content. The user is asked first. Files under "
        ".git (and other version-control or editor configuration) cannot be written.",
        _schema(["path", "content"], path=_STR, content=_STR),
        kind="edit",
        permission=EDIT,
    ),
    ToolSpec(
        "edit_file",
        "Replace an exact string in a file by another. old_string must occur exactly once "
        "(include surrounding lines to make it unique) unless replace_all is true. "
        "The user is asked first. Files under .git (and other version-control or editor "
        "configuration) cannot be edited.",
        _schema(
            ["path", "old_string", "new_string"],
            path=_STR,
            old_string=_STR,
            new_string=_STR,
            replace_all=_BOOL,
        ),
        kind="edit",
        permission=EDIT,
    ),
    ToolSpec(
        "run_command",
        "Run a shell command in the workspace root and return its exit status and output "
        "(stdout and stderr together). Optional timeout in seconds. The user is asked first.",
        _schema(["command"], command=_STR, timeout=_INT),
        kind="execute",
        permission=EXECUTE,
    ),
)
