"""The toolbox: turns a model's tool request into a checked, described, runnable call.

:meth:`Toolbox.prepare` validates the arguments, confines every path (see
:mod:`acp2.coder.tools.sandbox`) and, for writes, computes the change so the diff can be
shown before the user is asked. :meth:`Prepared.execute` then does the work.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

import anyio

from acp2.coder.diffs import file_diff
from acp2.coder.tools import files, search, shell
from acp2.coder.tools.confine import CommandPolicy
from acp2.coder.tools.errors import ToolError
from acp2.coder.tools.limits import DEFAULT_LIMITS, FileLimits
from acp2.coder.tools.sandbox import Sandbox
from acp2.coder.tools.specs import TOOL_SPECS
from acp2.coder.tools.stopping import Stop, run_stoppable
from acp2.schema import Content, Diff, TextContent

__all__ = ["Prepared", "ToolContext", "ToolRun", "Toolbox"]


class ToolContext(Protocol):
    """What a running tool may use from the turn."""

    async def open_terminal(self, command: str, cwd: str) -> shell.OutputSink:
        """Open a display-only terminal for ``command`` and show it on the tool call."""


@dataclass(frozen=True)
class ToolRun:
    """A finished tool run: ``ok``, ``output`` for the model, ``content`` to display
    (ToolCallContent items, replacing the call's content) and ``raw_output``."""

    ok: bool
    output: str
    content: list[Any] = field(default_factory=list)
    raw_output: Any = None


Execute = Callable[[ToolContext], Awaitable[ToolRun]]


@dataclass(frozen=True)
class Prepared:
    """A checked tool call: how to show it, how to ask about it, and how to run it.

    ``locations`` are absolute paths; ``preview`` is the diff a write would make;
    ``command`` is set for commands (the permission request's subject).
    """

    title: str
    kind: str
    execute: Execute
    locations: tuple[str, ...] = ()
    preview: Diff | None = None
    command: str | None = None


class Toolbox:
    """The tools of one session, confined to its root set, within ``limits``."""

    def __init__(
        self,
        sandbox: Sandbox,
        *,
        command_timeout: float = 120.0,
        limits: FileLimits = DEFAULT_LIMITS,
        command_policy: CommandPolicy | None = None,
    ) -> None:
        self.sandbox = sandbox
        self.command_timeout = command_timeout
        self.limits = limits
        self.command_policy = command_policy or CommandPolicy()
        self.specs = TOOL_SPECS
        #: Told of every file change once written (the session's edit journal).
        self.on_change: Callable[[files.FileChange], None] | None = None

    async def prepare_async(self, name: str, arguments: str) -> Prepared:
        """:meth:`prepare` in a worker thread, so reading and diffing a file never holds up
        the event loop; a cancelled turn does not wait for it (preparing changes nothing)."""
        call = partial(self.prepare, name, arguments)
        result: Prepared = await anyio.to_thread.run_sync(call, abandon_on_cancel=True)
        return result

    def prepare(self, name: str, arguments: str) -> Prepared:
        """Check a request; raise ToolError (unknown tool, bad arguments, bad path...)."""
        args = _parse(arguments)
        method = getattr(self, "_prep_" + name, None)
        if method is None or name not in {s.name for s in self.specs}:
            raise ToolError(f"unknown tool {name!r}")
        result: Prepared = method(args)
        return result

    # -- read-only tools ------------------------------------------------------------

    def _prep_read_file(self, args: dict[str, Any]) -> Prepared:
        target = self.sandbox.resolve(_str(args, "path"))
        offset, limit = _int(args, "offset", 1), _opt_int(args, "limit")

        def run(stop: Stop) -> ToolRun:
            text = files.read_file(self.sandbox, target.shown, offset, limit, self.limits, stop)
            return ToolRun(True, text)

        return Prepared(f"Read {target.relative}", "read", _threaded(run), (target.shown,))

    def _prep_list_files(self, args: dict[str, Any]) -> Prepared:
        pattern = _str(args, "pattern", "**")
        base = self.sandbox.resolve(_str(args, "path", "."))

        def run(stop: Stop) -> ToolRun:
            found = files.list_files(self.sandbox, pattern, base.shown, self.limits, stop)
            more = "\n[list truncated]" if len(found) >= self.limits.list_max else ""
            return _text_run("\n".join(found) + more if found else "No files match.")

        title = f"List {pattern} in {base.relative}"
        return Prepared(title, "search", _threaded(run), (base.shown,))

    def _prep_search(self, args: dict[str, Any]) -> Prepared:
        pattern = _str(args, "pattern")
        base = self.sandbox.resolve(_str(args, "path", "."))
        glob, nocase = _str(args, "glob", "") or None, bool(args.get("ignore_case", False))

        search.compile_pattern(pattern, nocase)  # a bad pattern fails now, not later

        async def execute(_: ToolContext) -> ToolRun:
            hits = await search.search_async(
                self.sandbox, pattern, base.shown, glob, nocase, self.limits
            )
            return _text_run("\n".join(hits) if hits else "No matches.")

        title = f"Search /{pattern}/ in {base.relative}"
        return Prepared(title, "search", execute, (base.shown,))

    # -- writes and commands ---------------------------------------------------------

    def _prep_write_file(self, args: dict[str, Any]) -> Prepared:
        path, content = _str(args, "path"), _str(args, "content")
        change = files.prepare_write(self.sandbox, path, content, self.limits)
        verb = "Create" if change.old is None else "Write"
        return self._change(f"{verb} {change.path.relative}", change)

    def _prep_edit_file(self, args: dict[str, Any]) -> Prepared:
        change = files.prepare_edit(
            self.sandbox,
            _str(args, "path"),
            _str(args, "old_string"),
            _str(args, "new_string", ""),
            bool(args.get("replace_all", False)),
            self.limits,
        )
        return self._change(f"Edit {change.path.relative}", change)

    def _change(self, title: str, change: files.FileChange) -> Prepared:
        diff = file_diff(change.path.real, change.old, change.new, self.limits.diff_lines)

        async def execute(_: ToolContext) -> ToolRun:
            apply = partial(files.apply_change, self.sandbox, change, self.limits)
            await anyio.to_thread.run_sync(apply)
            if self.on_change is not None:
                self.on_change(change)
            return ToolRun(True, f"{title}: done.", [diff])

        return Prepared(title, "edit", execute, (change.path.shown,), preview=diff)

    def _prep_run_command(self, args: dict[str, Any]) -> Prepared:
        command = _str(args, "command")
        timeout = float(_int(args, "timeout", int(self.command_timeout)))
        cwd = self.sandbox.cwd

        async def execute(context: ToolContext) -> ToolRun:
            sink = await context.open_terminal(command, cwd)
            result = await shell.run_command(
                command,
                cwd=cwd,
                time_limit=timeout,
                sink=sink,
                policy=self.command_policy,
                roots=self.sandbox.roots,
            )
            return _command_run(result, timeout)

        return Prepared(command, "execute", execute, command=command)


def _command_run(result: shell.CommandResult, timeout: float) -> ToolRun:
    if result.timed_out:
        status = f"timed out after {timeout:g}s and was stopped"
    elif result.signal is not None:
        status = f"was killed by {result.signal}"
    else:
        status = f"exited with status {result.exit_code}"
    raw = {"exitCode": result.exit_code, "signal": result.signal}
    return ToolRun(result.ok, f"The command {status}.\n{result.output}", [], raw)


def _text_run(text: str) -> ToolRun:
    return ToolRun(True, text, [Content(content=TextContent(text=text))])


def _threaded(fn: Callable[[Stop], ToolRun]) -> Execute:
    """Run ``fn`` in a worker thread that stops soon after the turn stops waiting."""

    async def execute(_: ToolContext) -> ToolRun:
        return await run_stoppable(fn)

    return execute


def _parse(arguments: str) -> dict[str, Any]:
    try:
        args = json.loads(arguments or "{}")
    except json.JSONDecodeError as exc:
        raise ToolError(f"the arguments are not valid JSON ({exc.msg})") from None
    if not isinstance(args, dict):
        raise ToolError("the arguments must be a JSON object")
    return args


def _str(args: dict[str, Any], name: str, default: str | None = None) -> str:
    value = args.get(name, default)
    if not isinstance(value, str):
        raise ToolError(f"`{name}` must be a string")
    return value


def _int(args: dict[str, Any], name: str, default: int) -> int:
    value = _opt_int(args, name)
    return default if value is None else value


def _opt_int(args: dict[str, Any], name: str) -> int | None:
    value = args.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ToolError(f"`{name}` must be an integer")
    return int(value)
