"""Stateless conversions of the building blocks both directions share.

Content blocks, config options, commands, MCP servers and diffs, each as a pair of
functions ``*_to_v1`` (a v2 value for a v1 peer) and ``*_from_v1`` (a v1 value lifted to
v2). What a conversion cannot carry is counted in ``dropped`` under the names listed in
``docs/v1-projection.md``; a conversion that drops the whole value returns ``None``.
Unknown v1 variants (``msgspec.Raw``) lift unchanged: v2 keeps unknown variants too.
Unknown v2 variants are not valid v1, so they are dropped and counted.
"""

from __future__ import annotations

import difflib
from collections import Counter
from typing import Any, Final, TypeVar

from msgspec import UNSET, Raw

import acp2.compat.v1.schema as v1
import acp2.schema as v2
from acp2.schema.codec import decode, encode

__all__ = [
    "Drops",
    "block_from_v1",
    "block_to_v1",
    "blocks_from_v1",
    "blocks_to_v1",
    "commands_from_v1",
    "commands_to_v1",
    "config_options_from_v1",
    "config_options_to_v1",
    "diff_from_v1",
    "git_patch",
    "mcp_servers_from_v1",
    "mcp_servers_to_v1",
    "recode",
]

#: Counts of what a translation dropped, by kind (see ``docs/v1-projection.md``).
Drops = Counter[str]

T = TypeVar("T")

_V1_TEXT: Final = v1.TextContent
_V2_TEXT: Final = v2.TextContent


def recode(value: Any, tp: type[T]) -> T:
    """``value`` (a model of one version) re-read as ``tp`` (a model of the other).

    For shapes the versions share; fields ``tp`` does not know are left out and lenient
    fields that do not validate under ``tp`` read as absent.
    """
    result: T = decode(encode(value), tp)
    return result


def block_to_v1(block: Any, dropped: Drops) -> Any:
    """A v2 content block as v1, or ``None`` for an unknown block (``content.unknown``).

    Resource-link ``icons`` have no v1 field (``content.icons``).
    """
    # The hot path of a stream: plain text converts without a round trip.
    if type(block) is _V2_TEXT and block.annotations is UNSET:
        return _V1_TEXT(text=block.text, meta=block.meta)
    if isinstance(block, Raw):
        dropped["content.unknown"] += 1
        return None
    if isinstance(block, v2.ResourceLink) and block.icons not in (UNSET, None):
        dropped["content.icons"] += 1
    return recode(block, v1.ContentBlock)  # type: ignore[arg-type]


def block_from_v1(block: Any) -> Any:
    """A v1 content block as v2 (an unknown one stays ``msgspec.Raw``)."""
    if type(block) is _V1_TEXT and block.annotations is UNSET:
        return _V2_TEXT(text=block.text, meta=block.meta)
    if isinstance(block, Raw):
        return block
    return recode(block, v2.ContentBlock)  # type: ignore[arg-type]


def blocks_to_v1(blocks: list[Any], dropped: Drops) -> list[Any]:
    """v2 content blocks as v1, leaving out the ones v1 cannot carry."""
    return [b for b in (block_to_v1(block, dropped) for block in blocks) if b is not None]


def blocks_from_v1(blocks: list[Any]) -> list[Any]:
    """v1 content blocks as v2 (prompts, message history)."""
    return [block_from_v1(block) for block in blocks]


# -- config options: v2 `configId` / `groupId` <-> v1 `id` / `group` ---------------------


def _select_option_to_v1(option: v2.SessionConfigSelectOption) -> v1.SessionConfigSelectOption:
    if option.group_id is UNSET:
        return v1.SessionConfigSelectOption(
            name=option.name, value=option.value, description=option.description, meta=option.meta
        )
    inner = option.options if option.options is not UNSET else []
    return v1.SessionConfigSelectOption(
        name=option.name,
        group=option.group_id,
        options=[_select_option_to_v1(o) for o in inner],
        description=option.description,
        meta=option.meta,
    )


def _select_option_from_v1(option: v1.SessionConfigSelectOption) -> v2.SessionConfigSelectOption:
    if option.group is UNSET:
        return v2.SessionConfigSelectOption(
            name=option.name, value=option.value, description=option.description, meta=option.meta
        )
    inner = option.options if option.options is not UNSET else []
    return v2.SessionConfigSelectOption(
        name=option.name,
        group_id=option.group,
        options=[_select_option_from_v1(o) for o in inner],
        description=option.description,
        meta=option.meta,
    )


def _config_option_to_v1(option: Any, booleans: bool, dropped: Drops) -> Any:
    if isinstance(option, v2.SessionConfigSelect):
        return v1.SessionConfigSelect(
            id=option.config_id,
            name=option.name,
            description=option.description,
            category=option.category,
            current_value=option.current_value,
            options=[_select_option_to_v1(o) for o in option.options],
            meta=option.meta,
        )
    if isinstance(option, v2.SessionConfigBoolean) and booleans:
        return v1.SessionConfigBoolean(
            id=option.config_id,
            name=option.name,
            description=option.description,
            category=option.category,
            current_value=option.current_value,
            meta=option.meta,
        )
    kind = "boolean" if isinstance(option, v2.SessionConfigBoolean) else "unknown"
    dropped[f"config_option.{kind}"] += 1
    return None


def config_options_to_v1(options: list[Any], *, booleans: bool, dropped: Drops) -> list[Any]:
    """v2 config options as v1: ``configId`` -> ``id``, ``groupId`` -> ``group``.

    Boolean options go only to a client that advertised
    ``session.configOptions.boolean`` (``booleans``), else ``config_option.boolean``;
    unknown option types are ``config_option.unknown``.
    """
    converted = (_config_option_to_v1(option, booleans, dropped) for option in options)
    return [option for option in converted if option is not None]


def _config_option_from_v1(option: Any) -> Any:
    if isinstance(option, v1.SessionConfigSelect):
        return v2.SessionConfigSelect(
            config_id=option.id,
            name=option.name,
            description=option.description,
            category=option.category,
            current_value=option.current_value,
            options=[_select_option_from_v1(o) for o in option.options],
            meta=option.meta,
        )
    if isinstance(option, v1.SessionConfigBoolean):
        return v2.SessionConfigBoolean(
            config_id=option.id,
            name=option.name,
            description=option.description,
            category=option.category,
            current_value=option.current_value,
            meta=option.meta,
        )
    return option  # an unknown type stays raw, as v2 keeps it


def config_options_from_v1(options: list[Any]) -> list[Any]:
    """v1 config options as v2: ``id`` -> ``configId``, ``group`` -> ``groupId``."""
    return [_config_option_from_v1(option) for option in options]


# -- slash commands ---------------------------------------------------------------------


def _command_to_v1(command: v2.AvailableCommand, dropped: Drops) -> v1.AvailableCommand | None:
    if command.type != "command":
        dropped["command.unknown"] += 1
        return None
    hint: Any = UNSET
    if isinstance(command.input, v2.TextCommandInput):
        hint = v1.UnstructuredCommandInput(hint=command.input.hint, meta=command.input.meta)
    elif command.input not in (UNSET, None):
        dropped["command.input"] += 1
    return v1.AvailableCommand(
        name=command.name, description=command.description, input=hint, meta=command.meta
    )


def commands_to_v1(commands: list[v2.AvailableCommand], dropped: Drops) -> list[Any]:
    """v2 commands as v1: ``type`` dropped; a non-text input spec is ``command.input``
    (the command is kept without it); a non-``command`` kind is ``command.unknown``."""
    converted = (_command_to_v1(command, dropped) for command in commands)
    return [command for command in converted if command is not None]


def commands_from_v1(commands: list[v1.AvailableCommand]) -> list[v2.AvailableCommand]:
    """v1 commands as v2: ``type:"command"`` added, ``input {hint}`` -> ``{type:"text"}``."""
    return [
        v2.AvailableCommand(
            name=command.name,
            description=command.description,
            input=(
                v2.TextCommandInput(hint=command.input.hint, meta=command.input.meta)
                if isinstance(command.input, v1.UnstructuredCommandInput)
                else UNSET
            ),
            meta=command.meta,
        )
        for command in commands
    ]


# -- MCP servers ------------------------------------------------------------------------


def _server_from_v1(server: v1.McpServer, dropped: Drops) -> Any:
    if server.type is UNSET:
        return v2.McpServerStdio(
            name=server.name,
            command=server.command if server.command is not UNSET else "",
            args=server.args,
            env=[recode(e, v2.EnvVariable) for e in server.env or []] or UNSET,
            meta=server.meta,
        )
    if server.type == "http":
        return v2.McpServerHttp(
            name=server.name,
            url=server.url if server.url is not UNSET else "",
            headers=[recode(h, v2.HttpHeader) for h in server.headers or []] or UNSET,
            meta=server.meta,
        )
    dropped[f"mcp_server.{server.type}"] += 1
    return None


def mcp_servers_from_v1(servers: list[v1.McpServer], dropped: Drops) -> list[Any]:
    """v1 MCP servers as v2: untyped stdio gets ``type:"stdio"``; ``sse`` has no v2 form
    (``mcp_server.sse``)."""
    converted = (_server_from_v1(server, dropped) for server in servers)
    return [server for server in converted if server is not None]


def _server_to_v1(server: Any, dropped: Drops) -> v1.McpServer | None:
    if isinstance(server, v2.McpServerStdio):
        return v1.McpServer(
            name=server.name,
            command=server.command,
            args=list(server.args or []),
            env=[recode(e, v1.EnvVariable) for e in server.env or []],
            meta=server.meta,
        )
    if isinstance(server, v2.McpServerHttp):
        return v1.McpServer(
            name=server.name,
            type="http",
            url=server.url,
            headers=[recode(h, v1.HttpHeader) for h in server.headers or []],
            meta=server.meta,
        )
    dropped["mcp_server.unknown"] += 1
    return None


def mcp_servers_to_v1(servers: list[Any] | Any, dropped: Drops) -> list[v1.McpServer]:
    """v2 MCP servers as v1: stdio untyped with ``args`` / ``env`` always present (v1
    requires them); an unknown transport is ``mcp_server.unknown``. ``UNSET`` -> ``[]``."""
    if servers is UNSET:
        return []
    converted = (_server_to_v1(server, dropped) for server in servers)
    return [server for server in converted if server is not None]


# -- diffs ------------------------------------------------------------------------------


def git_patch(path: str, old_text: str | None, new_text: str) -> str:
    """A ``git_patch`` of one text file: Nov style (absolute paths, no ``a/`` / ``b/``
    prefixes, ``/dev/null`` for a new file's missing side)."""
    old = "" if old_text is None else old_text
    head = [f"diff --git {path} {path}\n"]
    if old_text is None:
        head.append("new file mode 100644\n")
    body = difflib.unified_diff(
        old.splitlines(keepends=True),
        new_text.splitlines(keepends=True),
        fromfile="/dev/null" if old_text is None else path,
        tofile=path,
    )
    lines = [
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in body
    ]
    return "".join(head + lines)


def diff_from_v1(diff: v1.Diff) -> v2.Diff:
    """A v1 ``{path, oldText?, newText}`` diff as v2: one ``add`` or ``modify`` change,
    plus the ``git_patch`` of the two texts (``/dev/null`` before an ``add``).

    It is an ``add`` when ``oldText`` is absent or ``null`` (v1's new file), or empty
    with ``_meta.kind: "add"`` (Gemini CLI's new file: ``oldText: ""``)."""
    old = diff.old_text if isinstance(diff.old_text, str) else None
    if old == "" and isinstance(diff.meta, dict) and diff.meta.get("kind") == "add":
        old = None
    change: Any = (
        v2.DiffAddChange(path=diff.path, file_type="text")
        if old is None
        else v2.DiffModifyChange(path=diff.path, file_type="text")
    )
    patch = v2.DiffPatch(format="git_patch", text=git_patch(diff.path, old, diff.new_text))
    return v2.Diff(changes=[change], patch=patch, meta=diff.meta)
