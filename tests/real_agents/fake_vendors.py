"""Fake vendor model APIs on 127.0.0.1 for the v2 adapters: OpenAI's Responses API (Codex,
through ``codex-acp``) and Anthropic's Messages API (Claude Code, through
``claude-agent-acp``). Real HTTP and SSE, no script: each model request is answered by
what its latest user text asks, so ``acp2 check`` (many agents at once, its own prompts)
can run against them.

* A last user text containing :data:`HOLD_MARK` (``acp2 check``'s default cancel prompt
  counts slowly) streams one delta and keeps the response open until the client goes
  away, which is what a cancel does (``disconnected`` is set).
* A last user text containing :data:`TOOL_MARK` (``acp2 check``'s default permission
  prompt names that file) gets a tool call writing it: ``Write`` for Claude Code (when
  the request offers it), ``exec_command`` run outside the sandbox for Codex, which
  needs approval. Both adapters then ask the client with ``session/request_permission``;
  the request after the tool's result gets the reply below.
* A last user text containing :data:`MCP_MARK` gets, from the fake Messages API, a call of
  the first offered MCP tool named ``mcp__<server>__echo`` with ``{"text": MCP_MARK}``
  (Claude Code names the tools of its MCP servers that way).
* Anything else gets :data:`REPLY` as one text delta. Every response and message has an
  id of its own (the adapters use them as ``messageId``).

Every request is kept in ``requests`` (path, body), in arrival order.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from typing import Any

from helpers.http_fake import send_json, serve_on_loopback

__all__ = [
    "HOLD_MARK",
    "MCP_MARK",
    "REPLY",
    "TOOL_MARK",
    "FakeVendor",
    "serve_anthropic",
    "serve_openai",
]

HOLD_MARK = "Count slowly"
#: In ``acp2 check``'s default permission prompt: Claude gets a ``Write`` tool call, Codex
#: an ``exec_command`` that needs approval; both then ask the client for permission.
TOOL_MARK = "acp2-check.txt"
#: In a prompt: the fake Messages API calls the ``echo`` tool of an MCP server.
MCP_MARK = "acp2-mcp-echo"
REPLY = "Hello there."
#: Longest time the server thread keeps a held stream open.
SERVER_WAIT = 60.0


class FakeVendor:
    """The server's state, shared by its request threads."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.disconnected = threading.Event()
        self.port = 0
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        """The server's base URL."""
        return f"http://127.0.0.1:{self.port}"

    def new_id(self, prefix: str) -> str:
        """A fresh id (``msg_7``, ``resp_8``, ...)."""
        with self._lock:
            return f"{prefix}_{next(self._ids)}"


def _texts(node: Any) -> Iterator[str]:
    """Every string under a ``text`` key of a request body, depth first."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "text" and isinstance(value, str):
                yield value
            else:
                yield from _texts(value)
    elif isinstance(node, list):
        for item in node:
            yield from _texts(item)


def _write_call(body: dict[str, Any]) -> dict[str, Any] | None:
    """The input of a ``Write`` of ``TOOL_MARK`` in the session's directory (named by
    Claude Code's system text), when the request offers that tool."""
    tools = _tool_names(body)
    found = re.search(r"Primary working directory: (\S+)", " ".join(_texts(body)))
    if "Write" not in tools or found is None:
        return None
    return {"file_path": f"{found.group(1)}/{TOOL_MARK}", "content": "hello\n"}


def _mcp_echo(body: dict[str, Any]) -> str | None:
    """The name of the first offered MCP ``echo`` tool (``mcp__<server>__echo``)."""
    names = sorted(n for n in _tool_names(body) if isinstance(n, str))
    return next((n for n in names if n.startswith("mcp__") and n.endswith("__echo")), None)


def _tool_names(body: dict[str, Any]) -> set[Any]:
    return {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}


def _asks_for_tool(items: Any) -> bool:
    """True when the last input item is the user's message naming ``TOOL_MARK`` (not the
    output of the call already made for it)."""
    last = items[-1] if isinstance(items, list) and items else None
    return (
        isinstance(last, dict)
        and last.get("role") == "user"
        and TOOL_MARK in _last_user_text([last])
    )


def _last_user_text(messages: Any) -> str:
    """The last text of the last user message: what the user asked last. Not the whole
    message: after a cancelled turn Claude Code sends the interrupted prompt, an
    "[Request interrupted by user]" note and the new prompt as blocks of one user message,
    and holding on the old prompt's mark would hold the new prompt too."""
    users = [m for m in messages or [] if isinstance(m, dict) and m.get("role") == "user"]
    texts = list(_texts(users[-1])) if users else []
    return texts[-1] if texts else ""


class _Handler(BaseHTTPRequestHandler):
    """What both APIs share: the body, the SSE writer, the hold."""

    fake: FakeVendor
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            body = {}
        self.fake.requests.append((self.path, body))
        try:
            self.answer(body)
        except (BrokenPipeError, ConnectionResetError):
            self.fake.disconnected.set()
        finally:
            self.close_connection = True

    def do_GET(self) -> None:
        self.send_error(404, f"no route {self.path}")

    def answer(self, body: dict[str, Any]) -> None:
        raise NotImplementedError

    def send_json(self, body: Any) -> None:
        send_json(self, body)

    def start_events(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()

    def event(self, type: str, **fields: Any) -> None:
        """One SSE event named ``type``, its data ``{"type": type, **fields}``."""
        data = json.dumps({"type": type, **fields})
        self.wfile.write(f"event: {type}\ndata: {data}\n\n".encode())
        self.wfile.flush()

    def hold(self) -> None:
        """Keep the stream open until the client closes it (its whole request is read, so
        the next read returns only then)."""
        self.connection.settimeout(SERVER_WAIT)
        if self.rfile.read(1) == b"":
            self.fake.disconnected.set()


class _Responses(_Handler):
    """``POST .../responses`` with ``stream: true``, as Codex sends it."""

    def answer(self, body: dict[str, Any]) -> None:
        if not self.path.rstrip("/").endswith("/responses"):
            self.send_error(404, f"no route {self.path}")
            return
        holding = HOLD_MARK in _last_user_text(body.get("input"))
        rid, mid = self.fake.new_id("resp"), self.fake.new_id("msg")
        response = {"id": rid, "object": "response", "status": "in_progress", "output": []}
        self.start_events()
        self.event("response.created", response=response)
        if _asks_for_tool(body.get("input")) and "exec_command" in _tool_names(body):
            self._exec(response)
            return
        item = {"type": "message", "id": mid, "role": "assistant", "content": []}
        self.event("response.output_item.added", output_index=0, item=item)
        where = {"item_id": mid, "output_index": 0, "content_index": 0}
        delta = "1\n" if holding else REPLY
        self.event("response.output_text.delta", **where, delta=delta)
        if holding:
            self.hold()
            return
        part = {"type": "output_text", "text": REPLY, "annotations": []}
        done_item = item | {"status": "completed", "content": [part]}
        self.event("response.output_item.done", output_index=0, item=done_item)
        usage = {
            "input_tokens": 10,
            "output_tokens": 3,
            "total_tokens": 13,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        }
        completed = response | {"status": "completed", "usage": usage}
        self.event("response.completed", response=completed)

    def _exec(self, response: dict[str, Any]) -> None:
        """An ``exec_command`` call that writes ``TOOL_MARK``, run outside the sandbox
        (``require_escalated``), so Codex asks for approval: the client's permission."""
        arguments = json.dumps(
            {
                "cmd": f"printf 'hello\\n' > {TOOL_MARK}",
                "sandbox_permissions": "require_escalated",
                "justification": f"Create {TOOL_MARK}?",
            }
        )
        call_id, item_id = self.fake.new_id("call"), self.fake.new_id("fc")
        item = {"type": "function_call", "id": item_id, "call_id": call_id, "name": "exec_command"}
        self.event("response.output_item.added", output_index=0, item=item | {"arguments": ""})
        delta = {"item_id": item_id, "output_index": 0, "delta": arguments}
        self.event("response.function_call_arguments.delta", **delta)
        done = item | {"arguments": arguments, "status": "completed"}
        self.event("response.output_item.done", output_index=0, item=done)
        usage = {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}
        self.event(
            "response.completed", response=response | {"status": "completed", "usage": usage}
        )


class _Messages(_Handler):
    """``POST /v1/messages`` (streamed or not) and ``count_tokens``, as Claude Code sends."""

    def answer(self, body: dict[str, Any]) -> None:
        if "count_tokens" in self.path:
            self.send_json({"input_tokens": 10})
            return
        if not self.path.split("?")[0].rstrip("/").endswith("/v1/messages"):
            self.send_error(404, f"no route {self.path}")
            return
        last = _last_user_text(body.get("messages"))
        holding = HOLD_MARK in last
        message = {
            "id": self.fake.new_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "fake"),
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1},
        }
        if not body.get("stream"):
            text = [{"type": "text", "text": REPLY}]
            self.send_json(message | {"content": text, "stop_reason": "end_turn"})
            return
        write = _write_call(body) if TOOL_MARK in last else None
        if write is not None:
            self._tool_use(message, write)
            return
        echo = _mcp_echo(body) if MCP_MARK in last else None
        if echo is not None:
            self._tool_use(message, {"text": MCP_MARK}, echo)
            return
        self._stream(message, holding)

    def _tool_use(self, message: dict[str, Any], call: dict[str, Any], name: str = "Write") -> None:
        self.start_events()
        self.event("message_start", message=message)
        block = {"type": "tool_use", "id": self.fake.new_id("toolu"), "name": name, "input": {}}
        self.event("content_block_start", index=0, content_block=block)
        delta = {"type": "input_json_delta", "partial_json": json.dumps(call)}
        self.event("content_block_delta", index=0, delta=delta)
        self.event("content_block_stop", index=0)
        end = {"stop_reason": "tool_use", "stop_sequence": None}
        self.event("message_delta", delta=end, usage={"output_tokens": 5})
        self.event("message_stop")

    def _stream(self, message: dict[str, Any], holding: bool) -> None:
        self.start_events()
        self.event("message_start", message=message)
        block = {"type": "text", "text": ""}
        self.event("content_block_start", index=0, content_block=block)
        delta = {"type": "text_delta", "text": "1\n" if holding else REPLY}
        self.event("content_block_delta", index=0, delta=delta)
        if holding:
            self.hold()
            return
        self.event("content_block_stop", index=0)
        end = {"stop_reason": "end_turn", "stop_sequence": None}
        self.event("message_delta", delta=end, usage={"output_tokens": 3})
        self.event("message_stop")


@contextmanager
def serve_openai() -> Iterator[FakeVendor]:
    """A fake Responses API (base URL ``<url>/v1``) for the block."""
    with serve_on_loopback(FakeVendor(), _Responses) as fake:
        yield fake


@contextmanager
def serve_anthropic() -> Iterator[FakeVendor]:
    """A fake Messages API (base URL ``<url>``) for the block."""
    with serve_on_loopback(FakeVendor(), _Messages) as fake:
        yield fake
