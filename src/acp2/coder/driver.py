"""Drives the model loop generator with a real :class:`~acp2.agent.Turn`.

Each effect becomes protocol traffic: a model exchange streams ``agent_message_chunk`` /
``agent_thought_chunk`` (one new message per exchange); a tool call is reported
``pending`` (with its diff preview for edits; for commands, whether and how they are
sandboxed, also said in the permission request's description), may ask permission
(``requires_action``), runs ``in_progress`` (commands show a display-only terminal) and
ends ``completed`` / ``failed``; plans and usage become ``plan_update`` / ``usage_update``.

Cancellation (``session/cancel``) cancels the task running :meth:`Driver.run`: the HTTP
stream closes, a running command's process group is killed, the generator is closed
(completing the conversation), and the runtime marks unfinished tool calls ``cancelled``
before the single idle.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import anyio
from msgspec import UNSET

from acp2.agent.steering import take_steering
from acp2.coder.effects import (
    AskPermission,
    CallModel,
    Effect,
    Event,
    FinishTool,
    PermissionAnswer,
    ReportUsage,
    RunTool,
    Say,
    ShowPlan,
    StartTool,
    TakeSteering,
    ToolOutcome,
)
from acp2.coder.loop import LoopGen
from acp2.coder.messages import ModelReply, ModelRequest, ToolRequest
from acp2.coder.providers.base import ChatModel
from acp2.coder.tools import Prepared, Toolbox, ToolError
from acp2.coder.tools.command_env import redact
from acp2.coder.tools.confine import choose
from acp2.coder.tools.shell import OutputSink
from acp2.schema import Content, PlanEntry, TextContent, ToolCallLocation

if TYPE_CHECKING:
    from acp2.agent import ToolCallHandle, Turn
    from acp2.coder.task_tool import TaskRunner

__all__ = ["Driver"]


class _TurnSink:
    """Streams an exchange's text and reasoning into the turn as chunks."""

    def __init__(self, turn: Turn) -> None:
        self._turn = turn

    async def text(self, delta: str) -> None:
        await self._turn.say(delta)

    async def reasoning(self, delta: str) -> None:
        await self._turn.think(delta)


class _ToolContext:
    """What a running tool may use: a display-only terminal shown on its call."""

    def __init__(self, turn: Turn, handle: ToolCallHandle) -> None:
        self._turn = turn
        self._handle = handle

    async def open_terminal(self, command: str, cwd: str) -> OutputSink:
        terminal = await self._turn.terminal(command, cwd=cwd)
        await self._handle.show_terminal(terminal)
        return terminal


class Driver:
    """Performs the loop's effects for one turn.

    ``context_window`` is the ``size`` of every ``usage_update``; ``tasks`` reports and
    runs the ``task`` calls (:mod:`acp2.coder.task_tool`; None: the tool is not offered).
    """

    def __init__(
        self,
        turn: Turn,
        model: ChatModel,
        toolbox: Toolbox,
        *,
        context_window: int,
        tasks: TaskRunner | None = None,
    ) -> None:
        self.turn = turn
        self.model = model
        self.toolbox = toolbox
        self.context_window = context_window
        self.tasks = tasks
        self._handles: dict[str, ToolCallHandle] = {}
        self._prepared: dict[str, Prepared] = {}

    async def run(self, loop: LoopGen) -> str:
        """Drive ``loop`` to its end and return its stop reason.

        Whatever ends the drive (return, failure, cancellation), the generator is closed.
        """
        outcome: Any = None
        try:
            while True:
                try:
                    effect = loop.send(outcome)
                except StopIteration as stop:
                    reason: str = stop.value
                    return reason
                outcome = await self.perform(effect)
        finally:
            loop.close()

    async def perform(self, effect: Effect) -> Any:
        """Carry out one effect and return its outcome (see :mod:`acp2.coder.loop`)."""
        if isinstance(effect, CallModel):
            return await self._call_model(effect.request)
        if isinstance(effect, StartTool):
            return await self._start_tool(effect.call)
        if isinstance(effect, AskPermission):
            return await self._ask(effect.call)
        if isinstance(effect, RunTool):
            return await self._run_tool(effect.call)
        if isinstance(effect, TakeSteering):
            return self._steering()
        await self._emit(effect.event)
        return None

    def _steering(self) -> tuple[str, ...]:
        """What the user steered into this work (``_acp2/session/steer``), as prompt text."""
        from acp2.coder.agent import prompt_text

        return tuple(prompt_text(blocks) for blocks in take_steering(self.turn.session))

    async def _call_model(self, request: ModelRequest) -> ModelReply:
        self.turn.new_message()
        reply = await self.model.complete(request, _TurnSink(self.turn))
        usage = reply.usage
        if usage is not None:  # summed into the idle's usage (Preview)
            self.turn.tokens(
                usage.prompt_tokens,
                usage.completion_tokens,
                thought=usage.reasoning_tokens,
                cached_read=usage.cached_tokens,
            )
        return reply

    async def _start_tool(self, call: ToolRequest) -> str | None:
        if self.tasks is not None and self.tasks.owns(call):
            self._handles[call.id], error = await self.tasks.start(self.turn, call)
            return error
        raw_input = _raw_input(call.arguments)
        try:
            prepared = await self.toolbox.prepare_async(call.name, call.arguments)
        except ToolError as exc:
            handle = await self.turn.tool_call(call.name or "tool", raw_input=raw_input)
            self._handles[call.id] = handle
            return str(exc)
        locations = [ToolCallLocation(path=p) for p in prepared.locations]
        handle = await self.turn.tool_call(
            prepared.title,
            kind=prepared.kind,
            raw_input=raw_input,
            locations=locations or UNSET,
        )
        if prepared.preview is not None:
            await handle.update(content=[prepared.preview])
        elif prepared.command is not None:
            await handle.update(content=[_text(await self._confinement())])
        self._handles[call.id] = handle
        self._prepared[call.id] = prepared
        return None

    async def _ask(self, call: ToolRequest) -> PermissionAnswer:
        prepared = self._prepared[call.id]
        if prepared.command is not None:
            result = await self.turn.request_permission(
                f"Run `{prepared.command}`?",
                description=await self._confinement(),
                tool_call=self._handles[call.id],
                command=prepared.command,
                cwd=self.toolbox.sandbox.cwd,
            )
        else:
            result = await self.turn.request_permission(
                f"{prepared.title}?", tool_call=self._handles[call.id]
            )
        return PermissionAnswer(result.approved, result.always)

    async def _confinement(self) -> str:
        """How a command would run, for the user: ``sandboxed: ...`` or ``NOT sandboxed: ...``."""
        confinement = await anyio.to_thread.run_sync(choose, self.toolbox.command_policy)
        return confinement.describe()

    async def _run_tool(self, call: ToolRequest) -> ToolOutcome:
        handle = self._handles.pop(call.id)
        if self.tasks is not None and self.tasks.owns(call):
            return await self.tasks.run(self.turn, handle, call)
        prepared = self._prepared.pop(call.id)
        await handle.start()
        try:
            run = await prepared.execute(_ToolContext(self.turn, handle))
        except (ToolError, OSError) as exc:
            message = str(exc) if isinstance(exc, ToolError) else f"{prepared.title}: {exc}"
            await handle.fail(content=[_text(message)])
            return ToolOutcome(False, self._redacted(message))
        content = run.content if run.content else UNSET
        raw = UNSET if run.raw_output is None else run.raw_output
        if run.ok:
            await handle.complete(content=content, raw_output=raw)
        else:
            await handle.fail(content=content, raw_output=raw)
        return ToolOutcome(run.ok, self._redacted(run.output))

    def _redacted(self, text: str) -> str:
        """``text`` for the model: the secrets the agent knows (the provider key, the
        environment's tokens) become ``[redacted]``, however a tool came to print them."""
        return redact(text, self.toolbox.command_policy.secrets)

    async def _emit(self, event: Event) -> None:
        if isinstance(event, Say):
            await self.turn.say(event.text)
        elif isinstance(event, ShowPlan):
            entries = [PlanEntry(content=i.content, priority=i.priority, status=i.status)
                       for i in event.entries]  # fmt: skip
            await self.turn.plan(entries)
        elif isinstance(event, ReportUsage):
            await self.turn.usage(event.used, self.context_window)
        elif isinstance(event, FinishTool):
            self._prepared.pop(event.call.id, None)
            handle = self._handles.pop(event.call.id, None)
            if handle is not None:
                await handle.fail(content=[_text(event.message[:1].upper() + event.message[1:])])


def _text(text: str) -> Content:
    return Content(content=TextContent(text=text))


def _raw_input(arguments: str) -> Any:
    try:
        return json.loads(arguments or "{}")
    except json.JSONDecodeError:
        return arguments
