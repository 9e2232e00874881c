"""v2 -> v1 tool calls, display terminals and permission requests, for :class:`V1Projector`.

v1 creates a tool call with ``tool_call`` and patches it with ``tool_call_update``; v2 has
one upsert. :class:`ToolProjector` remembers which ids it announced and each call's
current v2 content, so that ``tool_call_content_chunk`` can be sent as the full
``content`` list v1 expects and a v2 display terminal (which v1 cannot show: v1 terminals
belong to the client) can be rendered as text into the content of every tool call that
shows it, again on each output change.

v1 reads ``null`` in a tool call patch as "unchanged", so a v2 scalar clear cannot be
expressed (``tool_call.clear``); a collection clear is sent as ``[]``.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from typing import Any, Final

import msgspec
from msgspec import UNSET, Raw

import acp2.compat.v1.schema as v1
import acp2.schema as v2
from acp2 import sanitize
from acp2.compat.v1.convert import Drops, block_to_v1, recode
from acp2.compat.v1.diff_texts import native_diffs

__all__ = ["MAX_ASKED_CALLS", "MAX_TERMINAL_BYTES", "MAX_TERMINAL_TEXT", "ToolProjector"]

#: How much of a display terminal's output (characters, the end kept) is rendered.
MAX_TERMINAL_TEXT: Final = 32_000
#: How many bytes of a terminal's output are kept for rendering (the end).
MAX_TERMINAL_BYTES: Final = 4 * MAX_TERMINAL_TEXT

_STATUS_FALLBACK: Final = {"cancelled": "failed", "paused": "in_progress"}
#: How many calls first named by a permission request are remembered until announced.
MAX_ASKED_CALLS: Final = 64
#: The fields a call's permission request showed that its first ``tool_call`` restates.
_RESTATED: Final = ("title", "kind", "status", "content", "locations", "raw_input", "raw_output")
_SAFE_OPTION_KIND: Final = "reject_once"
#: Diffs whose native form is remembered (the content of the calls being shown).
_NATIVE_CACHE: Final = 64


@dataclass(slots=True)
class _Terminal:
    data: bytearray = field(default_factory=bytearray)
    command: str | None = None
    exit: v2.TerminalExitStatus | None = None


class ToolProjector:
    """The tool-call state of one session as a v1 client has been shown it."""

    def __init__(self, dropped: Drops) -> None:
        self.dropped = dropped
        #: Announced tool call ids -> their current v2 content items.
        self.content: dict[str, list[Any]] = {}
        self._terminals: dict[str, _Terminal] = {}
        #: Calls a permission request named before any update did: what it showed.
        self._asked: dict[str, v2.ToolCallFields] = {}
        #: id -> (the v2 diff, its native v1 form): see :meth:`_native`.
        self._natives: dict[int, tuple[v2.Diff, list[v1.Diff] | None]] = {}
        self._synthetic = 0

    # -- updates ------------------------------------------------------------------------

    def tool_call(self, update: v2.ToolCallFields) -> list[Any]:
        """v1 updates for a v2 ``tool_call_update``: a ``tool_call`` the first time."""
        self._count_unsupported(update)
        if update.tool_call_id not in self.content:
            return [self._create(self._restate_asked(update))]
        patch = self._patch(update)
        return [patch] if patch is not None else []

    def content_chunk(self, update: v2.ToolCallContentChunk) -> list[Any]:
        """A v1 update carrying the full content after a v2 ``tool_call_content_chunk``."""
        call_id = update.tool_call_id
        if call_id not in self.content:
            asked = self._asked.get(call_id)
            shown = asked.content if asked is not None and isinstance(asked.content, list) else []
            fields = v2.ToolCallFields(tool_call_id=call_id, content=[*shown, update.content])
            return [self._create(self._restate_asked(fields))]
        self.content[call_id].append(update.content)
        return [self._content_update(call_id)]

    def terminal(self, update: v2.TerminalUpdate) -> list[Any]:
        """Re-render the tool calls showing a terminal after a v2 ``terminal_update``."""
        term = self._terminals.setdefault(update.terminal_id, _Terminal())
        if update.command is not UNSET:
            term.command = update.command
        if update.output is not UNSET:
            term.data = bytearray(self._b64(update.output.data if update.output else ""))
        if update.exit_status is not UNSET:
            term.exit = update.exit_status
        for name in ("size", "capabilities", "cwd"):
            if getattr(update, name) not in (UNSET, None):
                self.dropped[f"terminal.{name}"] += 1
        return self._rerender(update.terminal_id)

    def terminal_chunk(self, update: v2.TerminalOutputChunk) -> list[Any]:
        """Re-render the tool calls showing a terminal after a ``terminal_output_chunk``."""
        term = self._terminals.setdefault(update.terminal_id, _Terminal())
        term.data += self._b64(update.data)
        if len(term.data) > MAX_TERMINAL_BYTES:
            # Only the end is ever rendered; a long-running command must not grow memory.
            del term.data[:-MAX_TERMINAL_BYTES]
        return self._rerender(update.terminal_id)

    # -- permission ---------------------------------------------------------------------

    def permission(self, request: v2.RequestPermissionRequest) -> v1.RequestPermissionRequest:
        """A v2 permission request in v1 shape (see ``docs/v1-projection.md``).

        The prompt's ``title`` / ``description`` go into ``_meta["acp2"]`` (v1 has no
        field; folding them into the tool call's title would change the tool call's
        display); a subject that is not a tool call becomes a synthesized tool call. A
        ``tool_call`` subject's fields all go into the v1 ``toolCall``; for a call already
        shown it also carries the call's current content when the subject sets none.
        """
        call = self._permission_call(request)
        meta = dict(request.meta) if isinstance(request.meta, dict) else {}
        extra = {"title": request.title}
        if isinstance(request.description, str):
            extra["description"] = request.description
        meta["acp2"] = extra
        return v1.RequestPermissionRequest(
            session_id=request.session_id,
            tool_call=call,
            options=[self._option(option) for option in request.options],
            meta=meta,
        )

    def _permission_call(self, request: v2.RequestPermissionRequest) -> v1.ToolCallUpdate:
        subject = request.subject
        if isinstance(subject, v2.ToolCallPermissionSubject):
            call_id = subject.tool_call.tool_call_id
            known = call_id in self.content
            if known and isinstance(subject.tool_call.content, list):
                # The subject patches the call (v2), so later chunks append to this content.
                self.content[call_id] = list(subject.tool_call.content)
            fields = self._fields(subject.tool_call)
            if not known:
                self._remember_asked(subject.tool_call)
            elif "content" not in fields and self.content[call_id]:
                # acp2 agents name an announced call by id alone; a v1 client that shows
                # only the request must still see what it approves (the diff).
                fields["content"] = self._render(call_id)
            if fields.get("title", UNSET) is UNSET and not known:
                fields["title"] = request.title
            return v1.ToolCallUpdate(tool_call_id=call_id, **fields)
        if isinstance(subject, v2.CommandPermissionSubject):
            self.dropped["permission.command"] += 1
            named = subject.tool_call_id if isinstance(subject.tool_call_id, str) else None
            if named is not None and named in self.content:
                # A shown call keeps its title and kind: only the command is added.
                return v1.ToolCallUpdate(
                    tool_call_id=named, raw_input={"command": subject.command, "cwd": subject.cwd}
                )
            return v1.ToolCallUpdate(
                tool_call_id=named or self._synthetic_id(),
                title=request.title,
                kind="execute",
                raw_input={"command": subject.command, "cwd": subject.cwd},
            )
        self.dropped["permission.unknown" if isinstance(subject, Raw) else "permission.none"] += 1
        return v1.ToolCallUpdate(tool_call_id=self._synthetic_id(), title=request.title)

    def _remember_asked(self, call: v2.ToolCallFields) -> None:
        # The v1 client makes the call from the request; its first v1 `tool_call` will
        # restate the call whole, so it must carry what the request (or requests) showed.
        before = self._asked.pop(call.tool_call_id, None)
        if len(self._asked) >= MAX_ASKED_CALLS:
            del self._asked[next(iter(self._asked))]
        self._asked[call.tool_call_id] = call if before is None else _over(before, call)

    def _restate_asked(self, update: v2.ToolCallFields) -> v2.ToolCallFields:
        """An unannounced call's first update over what its permission request showed."""
        asked = self._asked.pop(update.tool_call_id, None)
        return update if asked is None else _over(asked, update)

    def _option(self, option: v2.PermissionOption) -> v1.PermissionOption:
        kind = option.kind
        if kind not in v1.PERMISSION_OPTION_KINDS:
            # The kind is only a display hint; never let an unknown one look like "allow".
            self.dropped["permission.option_kind"] += 1
            kind = _SAFE_OPTION_KIND
        return v1.PermissionOption(
            option_id=option.option_id, name=option.name, kind=kind, meta=option.meta
        )

    def _synthetic_id(self) -> str:
        self._synthetic += 1
        return f"acp2-permission-{self._synthetic}"

    # -- building v1 tool calls ---------------------------------------------------------

    def _create(self, update: v2.ToolCallFields) -> v1.ToolCall:
        call_id = update.tool_call_id
        self.content[call_id] = list(update.content) if isinstance(update.content, list) else []
        fields = self._fields(update, creating=True)
        title = fields.pop("title", UNSET)
        if not isinstance(title, str):
            title = update.name if isinstance(update.name, str) else "Tool call"
        return v1.ToolCall(tool_call_id=call_id, title=title, **fields)

    def _patch(self, update: v2.ToolCallFields) -> v1.SessionToolCallUpdate | None:
        if isinstance(update.content, list):
            self.content[update.tool_call_id] = list(update.content)
        elif update.content is None:
            self.content[update.tool_call_id] = []
        fields = self._fields(update)
        if not fields:
            return None
        return v1.SessionToolCallUpdate(tool_call_id=update.tool_call_id, **fields)

    def _content_update(self, call_id: str) -> v1.SessionToolCallUpdate:
        return v1.SessionToolCallUpdate(tool_call_id=call_id, content=self._render(call_id))

    def _fields(self, update: v2.ToolCallFields, *, creating: bool = False) -> dict[str, Any]:
        """The v1 patch fields of a v2 tool call patch (absent ones left out).

        ``null`` on a new tool call is just "no value"; on a known one it is a clear.
        """
        out: dict[str, Any] = {}
        for name in ("title", "kind", "status", "raw_input", "raw_output"):
            value = getattr(update, name)
            if value is None:
                if not creating:
                    self.dropped["tool_call.clear"] += 1
            elif value is not UNSET:
                out[name] = value
        if "kind" in out and out["kind"] not in v1.TOOL_KINDS:
            self.dropped["tool_call.kind"] += 1
            out["kind"] = "other"
        if "status" in out:
            self._status(out)
        if update.content is not UNSET:
            out["content"] = [] if update.content is None else self._convert(update.content)
        if update.locations is not UNSET:
            out["locations"] = [recode(loc, v1.ToolCallLocation) for loc in update.locations or []]
        if update.meta is not UNSET:
            out["meta"] = update.meta
        return out

    def _status(self, out: dict[str, Any]) -> None:
        status = out["status"]
        if status in v1.TOOL_CALL_STATUSES:
            return
        fallback = _STATUS_FALLBACK.get(status)
        self.dropped[f"tool_call.status.{status if fallback else 'unknown'}"] += 1
        if fallback is None:
            del out["status"]
        else:
            out["status"] = fallback

    def _count_unsupported(self, update: v2.ToolCallFields) -> None:
        for name in ("name", "capabilities"):
            if getattr(update, name) not in (UNSET, None):
                self.dropped[f"tool_call.{name}"] += 1

    # -- content ------------------------------------------------------------------------

    def _render(self, call_id: str) -> list[Any]:
        return self._convert(self.content[call_id])

    def _convert(self, items: list[Any]) -> list[Any]:
        out: list[Any] = []
        for item in items:
            native = self._native(item) if isinstance(item, v2.Diff) else None
            if native is not None:
                # v1's diff is baseline: every v1 client takes it, Zed renders it natively.
                out += native
                continue
            converted = self._item(item)
            if converted is not None:
                out.append(converted)
        return out

    def _native(self, diff: v2.Diff) -> list[v1.Diff] | None:
        """:func:`native_diffs` of ``diff``, read once: a tool call's content is sent
        again on every output change of a terminal it shows."""
        found = self._natives.get(id(diff))
        if found is not None and found[0] is diff:
            return found[1]
        if len(self._natives) >= _NATIVE_CACHE:
            self._natives.clear()
        native = native_diffs(diff)
        self._natives[id(diff)] = (diff, native)
        return native

    def _item(self, item: Any) -> Any:
        if isinstance(item, v2.Content):
            block = block_to_v1(item.content, self.dropped)
            return None if block is None else v1.Content(content=block, meta=item.meta)
        if isinstance(item, v2.Terminal):
            return _text(self._terminal_text(item.terminal_id))
        if isinstance(item, v2.Diff):
            self.dropped["tool_call.diff"] += 1
            return _text(_diff_text(item))
        self.dropped["tool_call.content.unknown"] += 1
        return None

    def _terminal_text(self, terminal_id: str) -> str:
        term = self._terminals.get(terminal_id) or _Terminal()
        output = sanitize.terminal(term.data.decode("utf-8", errors="replace")).rstrip("\n")
        if len(output) > MAX_TERMINAL_TEXT:
            output = "…" + output[-MAX_TERMINAL_TEXT:]
        head = f"$ {sanitize.line(term.command)}\n" if term.command else ""
        fence = "~~~~" if "```" in output else "```"
        text = f"{fence}\n{head}{output}\n{fence}"
        if term.exit is not None:
            text += f"\n{_exit_text(term.exit)}"
        return text

    def _rerender(self, terminal_id: str) -> list[Any]:
        return [
            self._content_update(call_id)
            for call_id, items in self.content.items()
            if any(isinstance(i, v2.Terminal) and i.terminal_id == terminal_id for i in items)
        ]

    def _b64(self, data: str) -> bytes:
        try:
            return base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            self.dropped["terminal.bad_base64"] += 1
            return b""


def _over(base: v2.ToolCallFields, update: v2.ToolCallFields) -> v2.ToolCallFields:
    """``update`` with the fields it leaves out (UNSET) taken from ``base``."""
    shown = {
        name: getattr(base, name)
        for name in _RESTATED
        if getattr(update, name) is UNSET and getattr(base, name) not in (UNSET, None)
    }
    return msgspec.structs.replace(update, **shown) if shown else update


def _text(text: str) -> v1.Content:
    return v1.Content(content=v1.TextContent(text=text))


def _exit_text(status: v2.TerminalExitStatus) -> str:
    if isinstance(status.signal, str):
        return f"(exited: {sanitize.line(status.signal)})"
    code = status.exit_code if isinstance(status.exit_code, int) else "unknown"
    return f"(exit code {code})"


def _diff_text(diff: v2.Diff) -> str:
    if diff.patch is not UNSET and diff.patch is not None:
        return f"```diff\n{diff.patch.text.rstrip()}\n```"
    lines = []
    for change in diff.changes:
        if isinstance(change, Raw):
            lines.append("- (changed)")
        else:
            old = getattr(change, "old_path", None)
            source = f"{old} -> " if old else ""
            lines.append(f"- {change.__struct_config__.tag}: {source}{change.path}")
    return "\n".join(lines)
