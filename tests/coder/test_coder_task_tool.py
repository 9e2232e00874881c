"""The coding agent's ``task`` tool (Preview subagents): a sub-task runs in a child
session with a context of its own, named by the task call's ``session`` content; its
report is the tool result the parent's model reads. Driven through the real client
runtime with a scripted fake model (no network)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from coder_helpers import TIMEOUT, coder_session

from acp2.coder import build_coder_agent
from acp2.coder.messages import (
    FINISH_STOP,
    FINISH_TOOL_CALLS,
    ModelReply,
    ModelRequest,
    ToolRequest,
)
from acp2.coder.task_tool import parse_task
from acp2.schema import SessionReference

pytestmark = pytest.mark.anyio


class DelegatingModel:
    """Parent: asks for ``task`` (then, with its result, answers); helper: lists the
    files, then reports. Records every request, to check what each context held."""

    name = "delegating"

    def __init__(self, prompt: str = "count the files") -> None:
        self.prompt = prompt
        self.requests: list[ModelRequest] = []
        self.gate: anyio.Event | None = None

    async def complete(self, request: ModelRequest, sink: Any) -> ModelReply:
        self.requests.append(request)
        messages = request.messages
        system = messages[0].content
        if system.startswith("You are a helper"):
            if self.gate is not None:
                await self.gate.wait()
            if messages[-1].role == "user":
                call = ToolRequest("h1", "list_files", json.dumps({"pattern": "**"}))
                return ModelReply(tool_calls=(call,), finish=FINISH_TOOL_CALLS)
            files = messages[-1].content.split()
            await sink.text(f"I found {len(files)} files.")
            return ModelReply(text=f"I found {len(files)} files.", finish=FINISH_STOP)
        if messages[-1].role == "user":
            args = {"description": "Count files", "prompt": self.prompt}
            call = ToolRequest("p1", "task", json.dumps(args))
            return ModelReply(tool_calls=(call,), finish=FINISH_TOOL_CALLS)
        answer = f"The helper says: {messages[-1].content}"
        await sink.text(answer)
        return ModelReply(text=answer, finish=FINISH_STOP)


def workspace(tmp_path: Path) -> Path:
    (tmp_path / "a.py").write_text("print('a')\n")
    (tmp_path / "b.py").write_text("print('b')\n")
    return tmp_path


async def test_a_task_runs_in_a_child_session_with_its_own_context_and_reports_back(
    tmp_path: Path,
) -> None:
    model = DelegatingModel()
    agent = build_coder_agent(model)
    with anyio.fail_after(TIMEOUT):
        async with coder_session(agent, workspace(tmp_path)) as session:
            work = await session.prompt("How many files are there?")
            assert await work.wait() == "end_turn"
            assert work.text == "The helper says: I found 2 files."
            (child,) = session.children.values()
            assert child.entry.title == "Count files"
            (call,) = [c for c in session.state.tool_calls.values() if c.name == "task"]
            assert call.status == "completed"
            assert call.content[0] == SessionReference(session_id=child.id)
            assert call.content[-1].content.text == "I found 2 files."
            while child.state.foreground != "idle" or len(child.state.messages) < 2:
                await child._wait_change()
            (listed,) = child.state.tool_calls.values()  # the helper's own calls are the child's
            assert listed.kind == "search"
            assert not [c for c in session.state.tool_calls.values() if c.kind == "search"]
    helper = [r for r in model.requests if r.messages[0].content.startswith("You are a helper")]
    # its own context: a system prompt and the task, nothing of the parent's conversation
    assert [m.role for m in helper[0].messages] == ["system", "user"]
    assert helper[0].messages[1].content == "count the files"
    assert "task" not in {t.name for t in helper[0].tools}  # no nesting
    parent = [r for r in model.requests if r not in helper]
    assert "task" in {t.name for t in parent[0].tools}


async def test_cancelling_the_child_fails_the_task_call_and_the_parent_goes_on(
    tmp_path: Path,
) -> None:
    model = DelegatingModel()
    model.gate = anyio.Event()  # the helper waits here until cancelled
    agent = build_coder_agent(model)
    with anyio.fail_after(TIMEOUT):
        async with coder_session(agent, workspace(tmp_path)) as session:
            work = await session.prompt("How many files are there?")
            while not session.children:
                await session._wait_change()
            (child,) = session.children.values()
            while not (child.may_cancel and child.state.foreground == "running"):
                await child._wait_change()
            await child.cancel()
            assert await work.wait() == "end_turn"
            (call,) = [c for c in session.state.tool_calls.values() if c.name == "task"]
            assert call.status == "failed"
            assert "the helper stopped (cancelled)" in work.text


def test_task_arguments_need_a_prompt_and_default_the_description_to_it() -> None:
    assert parse_task('{"prompt": "look  around"}').description == "look around"
    with pytest.raises(ValueError, match="prompt"):
        parse_task('{"description": "x"}')
    with pytest.raises(ValueError, match="JSON"):
        parse_task("{")
