"""The OpenAI chat-completions wire format, without IO: request bodies, SSE decoding,
and the assembly of streamed chunks into a :class:`ModelReply`.

Assembly follows what OpenAI-compatible servers send: text in ``delta.content``;
reasoning in ``delta.reasoning_content`` (vLLM, DeepSeek) or ``delta.reasoning``
(Ollama, OpenRouter); tool calls as fragments keyed by ``index`` whose ``arguments``
strings concatenate; ``finish_reason`` on the last choice chunk; ``usage`` on a final
chunk without choices (``stream_options.include_usage``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from acp2.coder.messages import (
    FINISH_LENGTH,
    FINISH_REFUSAL,
    FINISH_STOP,
    FINISH_TOOL_CALLS,
    Message,
    ModelReply,
    ModelRequest,
    ToolRequest,
    Usage,
)
from acp2.coder.providers.base import ModelError

__all__ = ["ChunkAssembler", "SSEDecoder", "request_body", "wire_message"]

_FINISH = {
    "length": FINISH_LENGTH,
    "content_filter": FINISH_REFUSAL,
    "tool_calls": FINISH_TOOL_CALLS,
    "function_call": FINISH_TOOL_CALLS,
}


def wire_message(message: Message) -> dict[str, Any]:
    """One message as the chat-completions API expects it."""
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    if message.role == "assistant" and message.tool_calls:
        calls = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments or "{}"},
            }
            for c in message.tool_calls
        ]
        return {"role": "assistant", "content": message.content or None, "tool_calls": calls}
    return {"role": message.role, "content": message.content}


def request_body(
    request: ModelRequest, model: str, *, max_tokens: int | None, temperature: float | None
) -> dict[str, Any]:
    """The JSON body of a streaming chat-completions request."""
    body: dict[str, Any] = {
        "model": model,
        "messages": [wire_message(m) for m in request.messages],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if request.tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": dict(t.parameters),
                },
            }
            for t in request.tools
        ]
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    if temperature is not None:
        body["temperature"] = temperature
    return body


class SSEDecoder:
    """Server-sent events, line by line: returns each event's data when it completes."""

    def __init__(self) -> None:
        self._data: list[str] = []

    def feed(self, line: str) -> str | None:
        """Take one line (without its newline); return the event data on a blank line."""
        if not line:
            return self.flush()
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        if name == "data":
            self._data.append(value[1:] if value.startswith(" ") else value)
        return None

    def flush(self) -> str | None:
        """Return the pending event's data, if any (at a blank line or the stream's end)."""
        if not self._data:
            return None
        data, self._data = "\n".join(self._data), []
        return data


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class ChunkAssembler:
    """Collects streamed chunks into one reply."""

    def __init__(self) -> None:
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._calls: dict[int, _PartialCall] = {}
        self._finish: str | None = None
        self._refused = False
        self._usage: Usage | None = None

    def feed(self, chunk: Any) -> tuple[str, str]:
        """Apply one decoded chunk; return its ``(text, reasoning)`` deltas.

        Raises ModelError when the chunk is an error object.
        """
        if not isinstance(chunk, dict):
            return "", ""
        if chunk.get("error"):
            raise ModelError(f"The model server reported an error: {_error_text(chunk)}")
        if isinstance(chunk.get("usage"), dict):
            self._usage = _usage(chunk["usage"])
        text = reasoning = ""
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            if choice.get("finish_reason"):
                self._finish = str(choice["finish_reason"])
            delta = choice.get("delta") or {}
            text, reasoning = self._delta(delta if isinstance(delta, dict) else {})
        return text, reasoning

    def _delta(self, delta: dict[str, Any]) -> tuple[str, str]:
        text = delta.get("content") or ""
        refusal = delta.get("refusal") or ""
        if refusal:
            self._refused = True
            text += str(refusal)
        reasoning = delta.get("reasoning_content") or delta.get("reasoning") or ""
        for position, fragment in enumerate(delta.get("tool_calls") or ()):
            self._call_fragment(position, fragment)
        text, reasoning = str(text), str(reasoning)
        self._text.append(text)
        self._reasoning.append(reasoning)
        return text, reasoning

    def _call_fragment(self, position: int, fragment: Any) -> None:
        if not isinstance(fragment, dict):
            return
        index = fragment.get("index")
        key = index if isinstance(index, int) else len(self._calls) + position
        call = self._calls.setdefault(key, _PartialCall())
        call.id = call.id or str(fragment.get("id") or "")
        function = fragment.get("function") or {}
        call.name = call.name or str(function.get("name") or "")
        arguments = function.get("arguments")
        if isinstance(arguments, dict):  # some servers send the object itself
            arguments = json.dumps(arguments)
        if arguments:
            call.arguments.append(str(arguments))

    def reply(self) -> ModelReply:
        """The assembled reply (finish reason normalised, see :mod:`acp2.coder.messages`)."""
        calls = tuple(
            ToolRequest(c.id or f"call_{key}", c.name, "".join(c.arguments))
            for key, c in sorted(self._calls.items())
        )
        finish = _FINISH.get(self._finish or "", FINISH_STOP)
        if self._refused:
            finish = FINISH_REFUSAL
        elif calls and finish == FINISH_STOP:
            finish = FINISH_TOOL_CALLS
        return ModelReply(
            text="".join(self._text),
            reasoning="".join(self._reasoning),
            tool_calls=calls,
            finish=finish,
            usage=self._usage,
        )


def _usage(raw: dict[str, Any]) -> Usage:
    def count(name: str) -> int:
        value = raw.get(name)
        return value if isinstance(value, int) and value >= 0 else 0

    return Usage(
        count("prompt_tokens"),
        count("completion_tokens"),
        count("total_tokens"),
        cached_tokens=_detail(raw, "prompt_tokens_details", "cached_tokens"),
        reasoning_tokens=_detail(raw, "completion_tokens_details", "reasoning_tokens"),
    )


def _detail(raw: dict[str, Any], group: str, name: str) -> int | None:
    """``raw[group][name]`` when it is a count, else None (the server did not say)."""
    details = raw.get(group)
    value = details.get(name) if isinstance(details, dict) else None
    return value if type(value) is int and value >= 0 else None


def _error_text(body: Any) -> str:
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        return str(error.get("message") or error)
    return str(error or body)[:300]
