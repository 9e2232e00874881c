"""The scripted model: an offline, deterministic stand-in for an LLM (the default).

It drives the real loop with real tools on the real workspace, deciding each step from
the conversation so far (the results of its own tool calls), like a model would:

1. list the files;
2. with Python tests: read the tests and the code; otherwise read the README and stop
   with a summary;
3. give a plan and propose an ``edit_file`` fixing the slip it found (or, if it found
   none, run the tests);
4. after the edit, run the tests with ``run_command``;
5. report the verdict, mark the plan done, and end the turn.

Text is streamed word by word (``pace`` seconds apart) after a short reasoning, and each
reply carries an estimated token usage.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import sys
from collections.abc import Sequence
from typing import Any

import anyio

from acp2.coder.messages import (
    FINISH_STOP,
    FINISH_TOOL_CALLS,
    Message,
    ModelReply,
    ModelRequest,
    ToolRequest,
    Usage,
)
from acp2.coder.providers.base import StreamSink
from acp2.coder.providers.scripted_steps import Step, next_step

__all__ = ["ScriptedModel", "stream_words"]


class ScriptedModel:
    """A :class:`~acp2.coder.providers.base.ChatModel` that needs no network."""

    name = "scripted"

    def __init__(self, *, pace: float = 0.0, python: str | None = None) -> None:
        self.pace = pace
        self.python = python or _python()

    async def complete(self, request: ModelRequest, sink: StreamSink) -> ModelReply:
        """Decide the next step from ``request.messages`` and stream it."""
        step = next_step(request.messages, test_command=f"{self.python} -m unittest -v")
        await stream_words(step.reasoning, sink.reasoning, self.pace)
        await stream_words(step.text, sink.text, self.pace)
        number = sum(1 for m in request.messages if m.role == "assistant") + 1
        calls = tuple(
            ToolRequest(f"call_{number}_{i}", name, json.dumps(args))
            for i, (name, args) in enumerate(step.calls)
        )
        return ModelReply(
            text=step.text,
            reasoning=step.reasoning,
            tool_calls=calls,
            finish=FINISH_TOOL_CALLS if calls else FINISH_STOP,
            usage=_estimate(request.messages, step),
        )


async def stream_words(text: str, send: Any, pace: float) -> None:
    """Send ``text`` to the async callable ``send`` a word at a time."""
    for piece in re.findall(r"\s*\S+", text):
        await send(piece)
        if pace > 0:
            await anyio.sleep(pace)
        else:
            await anyio.lowlevel.checkpoint()


def _estimate(messages: Sequence[Message], step: Step) -> Usage:
    # About four characters per token: enough to show a moving context meter.
    prompt = sum(len(m.content) + sum(len(c.arguments) for c in m.tool_calls) for m in messages)
    reply = len(step.text) + len(step.reasoning) + len(json.dumps(step.calls))
    prompt_tokens, completion_tokens = prompt // 4 + 1, reply // 4 + 1
    return Usage(prompt_tokens, completion_tokens, prompt_tokens + completion_tokens)


def _python() -> str:
    return "python3" if shutil.which("python3") else shlex.quote(sys.executable)
