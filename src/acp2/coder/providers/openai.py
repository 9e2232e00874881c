"""OpenAI-compatible chat completions over httpx: streaming SSE, tool calls, usage, retries.

Works with hosted APIs and local servers (vLLM, Ollama, llama.cpp): set the base URL
(``--base-url`` / ``OPENAI_BASE_URL``), the model name and, when the server wants one, the
API key (``--api-key`` / ``OPENAI_API_KEY`` / ``ACP2_API_KEY``). HTTP 429 and 5xx answers
and connection failures are retried with exponential backoff and jitter, honouring
``Retry-After``, at most ``max_retries`` times; once output has streamed nothing is retried.
Cancelling the calling task closes the HTTP stream.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import anyio
import httpx

from acp2.coder.messages import ModelReply, ModelRequest
from acp2.coder.providers.base import ModelError, StreamSink
from acp2.coder.providers.chat_format import ChunkAssembler, SSEDecoder, request_body

__all__ = ["DEFAULT_BASE_URL", "DEFAULT_MODEL", "OpenAIConfig", "OpenAIModel"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "gpt-4o-mini"
_RETRY_STATUS = frozenset({408, 409, 425, 429})


@dataclass(frozen=True)
class OpenAIConfig:
    """Where and how to reach the model. Delays are in seconds."""

    model: str = DEFAULT_MODEL
    base_url: str = DEFAULT_BASE_URL
    # Secrets never in a repr (so never in a log line or a traceback's locals).
    api_key: str | None = field(default=None, repr=False)
    #: Extra request headers (a client's ``providers/set`` routing headers).
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    max_tokens: int | None = None
    temperature: float | None = None
    max_retries: int = 4
    backoff: float = 0.5
    backoff_cap: float = 30.0
    connect_timeout: float = 15.0
    read_timeout: float = 300.0

    @classmethod
    def from_env(
        cls,
        *,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        env: Mapping[str, str] | None = None,
        **options: Any,
    ) -> OpenAIConfig:
        """Fill the gaps from the environment: ``OPENAI_API_KEY`` then ``ACP2_API_KEY``,
        ``OPENAI_BASE_URL``, ``ACP2_MODEL_NAME`` then ``OPENAI_MODEL``."""
        env = os.environ if env is None else env
        return cls(
            model=model or env.get("ACP2_MODEL_NAME") or env.get("OPENAI_MODEL") or DEFAULT_MODEL,
            base_url=base_url or env.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL,
            api_key=api_key or env.get("OPENAI_API_KEY") or env.get("ACP2_API_KEY") or None,
            **options,
        )

    @property
    def url(self) -> str:
        """The chat-completions endpoint."""
        return self.base_url.rstrip("/") + "/chat/completions"


class _Retry(Exception):
    def __init__(self, reason: str, wait: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.wait = wait


class OpenAIModel:
    """A :class:`~acp2.coder.providers.base.ChatModel` speaking chat completions."""

    def __init__(
        self,
        config: OpenAIConfig,
        *,
        rng: random.Random | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.config = config
        self.name = f"{config.model} at {config.base_url}"
        self._rng = rng or random.Random()
        self._transport = transport

    async def complete(self, request: ModelRequest, sink: StreamSink) -> ModelReply:
        """Stream one exchange; raise ModelError when it fails (after any retries)."""
        cfg = self.config
        body = request_body(
            request, cfg.model, max_tokens=cfg.max_tokens, temperature=cfg.temperature
        )
        for attempt in range(cfg.max_retries + 1):
            try:
                return await self._attempt(body, sink)
            except _Retry as retry:
                if attempt == cfg.max_retries:
                    raise ModelError(
                        f"The model server at {cfg.base_url} failed {attempt + 1} times; "
                        f"giving up. Last failure: {retry.reason}"
                    ) from None
                await anyio.sleep(self._delay(attempt, retry.wait))
        raise AssertionError("unreachable")

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        cap = self.config.backoff_cap
        if retry_after is not None:
            return min(max(retry_after, 0.0), cap)
        base: float = min(self.config.backoff * 2**attempt, cap)
        return base * (0.5 + self._rng.random() / 2)

    def _headers(self) -> dict[str, str]:
        headers = dict(self.config.headers)
        headers["Accept"] = "text/event-stream"
        if self.config.api_key:
            headers["Authorization"] = f"Bearer {self.config.api_key}"
        return headers

    async def _attempt(self, body: dict[str, Any], sink: StreamSink) -> ModelReply:
        cfg = self.config
        timeout = httpx.Timeout(cfg.read_timeout, connect=cfg.connect_timeout)
        async with httpx.AsyncClient(timeout=timeout, transport=self._transport) as client:
            try:
                async with client.stream(
                    "POST", cfg.url, json=body, headers=self._headers()
                ) as response:
                    if response.status_code >= 400:
                        await _refuse(response, cfg)
                    return await _consume(response, sink)
            except httpx.TransportError as exc:
                # Only failures before any output get here: _consume maps its own.
                reason = str(exc) or type(exc).__name__
                raise _Retry(f"cannot reach {cfg.url} ({reason})") from None


async def _consume(response: httpx.Response, sink: StreamSink) -> ModelReply:
    decoder, assembler = SSEDecoder(), ChunkAssembler()
    try:
        async for line in response.aiter_lines():
            data = decoder.feed(line)
            if data is not None and await _apply(data, assembler, sink):
                break
        else:
            tail = decoder.flush()
            if tail is not None:
                await _apply(tail, assembler, sink)
    except httpx.TransportError as exc:
        raise ModelError(f"The connection to the model server broke: {exc or exc!r}") from None
    return assembler.reply()


async def _apply(data: str, assembler: ChunkAssembler, sink: StreamSink) -> bool:
    """Feed one SSE payload; return True at ``[DONE]``."""
    if data.strip() == "[DONE]":
        return True
    try:
        chunk = json.loads(data)
    except json.JSONDecodeError:
        raise ModelError(f"The model server sent invalid JSON: {data[:200]!r}") from None
    text, reasoning = assembler.feed(chunk)
    if reasoning:
        await sink.reasoning(reasoning)
    if text:
        await sink.text(text)
    return False


async def _refuse(response: httpx.Response, cfg: OpenAIConfig) -> None:
    """Raise _Retry for retryable statuses, ModelError with a useful message otherwise."""
    await response.aread()
    status = response.status_code
    detail = f"HTTP {status} {response.reason_phrase}: {_message(response)}"
    if status in _RETRY_STATUS or status >= 500:
        raise _Retry(detail, _retry_after(response.headers.get("retry-after")))
    hint = ""
    if status in (401, 403):
        hint = " Set OPENAI_API_KEY (or pass --api-key-file)."
    elif status == 404:
        hint = f" Check the base URL ({cfg.base_url}) and the model name ({cfg.model})."
    raise ModelError(f"The model server refused the request ({detail}).{hint}")


def _message(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text.strip()[:300] or "(no body)"
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])[:300]
    return (str(error) if error else response.text.strip())[:300]


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return (when - datetime.now(UTC)).total_seconds()
