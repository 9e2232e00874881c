"""The model loop, as a generator the runtime drives (ARCHITECTURE rule 5).

:func:`coder_loop` never does IO. It *yields* effects and receives their outcomes::

    CallModel(request)        -> ModelReply        (the driver streams text/reasoning)
    StartTool(call)           -> str | None        (report ``pending``; an error text or None)
    AskPermission(call, cat)  -> PermissionAnswer
    RunTool(call)             -> ToolOutcome       (``in_progress`` ... ``completed``/``failed``)
    Emit(event)               -> None              (Say, ShowPlan, ReportUsage, FinishTool)
    TakeSteering()            -> tuple[str, ...]   (what the user steered in; before every
                                                    model call but the first, and before
                                                    ending the turn)

and returns the stop reason: ``end_turn`` (no more tool calls), ``max_tokens`` (the
provider stopped for length), ``refusal``, or ``max_turn_requests``. Cancellation is the
driver's business: it closes the generator, and the loop then completes the conversation
so that every requested tool call has a result (providers reject dangling calls).
"""

from __future__ import annotations

import json
from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from acp2.coder.effects import (
    AskPermission,
    CallModel,
    Effect,
    Emit,
    FinishTool,
    PermissionAnswer,
    PlanItem,
    ReportUsage,
    RunTool,
    Say,
    ShowPlan,
    StartTool,
    TakeSteering,
    ToolOutcome,
)
from acp2.coder.messages import (
    FINISH_LENGTH,
    FINISH_REFUSAL,
    Message,
    ModelReply,
    ModelRequest,
    ToolRequest,
    ToolSpec,
)

__all__ = ["PLAN_TOOL", "Conversation", "LoopGen", "coder_loop", "parse_plan"]


# -- state --------------------------------------------------------------------------------


@dataclass
class Conversation:
    """Everything the loop keeps between prompts of one session.

    ``policy`` maps a permission category to ``"allow"`` or ``"reject"`` once the user
    answered "always"; ``plan`` is the last plan the model gave.
    """

    messages: list[Message] = field(default_factory=list)
    policy: dict[str, str] = field(default_factory=dict)
    plan: tuple[PlanItem, ...] = ()


PLAN_TOOL = ToolSpec(
    name="update_plan",
    description=(
        "Show the user your plan for this task. Send the complete list every time; "
        "update statuses as you make progress."
    ),
    parameters={
        "type": "object",
        "properties": {
            "entries": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string"},
                        "priority": {"type": "string", "enum": ["high", "medium", "low"]},
                        "status": {
                            "type": "string",
                            "enum": ["pending", "in_progress", "completed"],
                        },
                    },
                    "required": ["content", "status"],
                },
            }
        },
        "required": ["entries"],
    },
    kind="think",
)

LoopGen: TypeAlias = Generator[Effect, Any, str]


def coder_loop(
    conversation: Conversation,
    prompt: str,
    tools: Sequence[ToolSpec],
    *,
    max_requests: int = 50,
) -> LoopGen:
    """Work on ``prompt`` until the model stops asking for tools; return the stop reason.

    Appends the user message, every reply and every tool result to ``conversation``;
    remembers "always" permission answers in ``conversation.policy``.
    """
    conversation.messages.append(Message("user", prompt))
    offered = {spec.name: spec for spec in tools}
    request_tools = (*tools, PLAN_TOOL)
    for index in range(max_requests):
        if index:  # after tool results: the prompt itself is what the first call answers
            yield from _steered(conversation)
        request = ModelRequest(tuple(conversation.messages), request_tools)
        reply: ModelReply = yield CallModel(request)
        if reply.usage is not None:
            yield Emit(ReportUsage(reply.usage.used))
        if reply.finish == FINISH_LENGTH:
            conversation.messages.append(Message("assistant", reply.text))
            return "max_tokens"
        calls = _distinct_ids(reply.tool_calls)
        conversation.messages.append(Message("assistant", reply.text, calls))
        if reply.finish == FINISH_REFUSAL:
            _close_calls(conversation, list(calls), "Error: not run (refusal).")
            return "refusal"
        if not calls:
            if (yield from _steered(conversation)):
                continue  # the user said more while the model answered: go on with it
            return "end_turn"
        yield from _run_calls(conversation, calls, offered)
    yield Emit(Say(f"\n\nStopping here: this prompt used its {max_requests} model requests."))
    return "max_turn_requests"


def _steered(conversation: Conversation) -> Generator[Effect, Any, bool]:
    """Add what the user steered into the work as user messages; True when there was any."""
    texts = yield TakeSteering()
    for text in texts or ():
        conversation.messages.append(Message("user", text))
    return bool(texts)


def _distinct_ids(calls: tuple[ToolRequest, ...]) -> tuple[ToolRequest, ...]:
    """Give every call of one reply its own id (some local servers repeat or omit them)."""
    seen: set[str] = set()
    result = []
    for index, call in enumerate(calls):
        if not call.id or call.id in seen:
            call = ToolRequest(f"{call.id or 'call'}_{index}", call.name, call.arguments)
        seen.add(call.id)
        result.append(call)
    return tuple(result)


def _run_calls(
    conversation: Conversation, calls: Sequence[ToolRequest], offered: dict[str, ToolSpec]
) -> Generator[Effect, Any, None]:
    pending = list(calls)
    try:
        for call in calls:
            if call.name == PLAN_TOOL.name:
                result = yield from _update_plan(conversation, call)
            else:
                result = yield from _run_call(conversation, call, offered.get(call.name))
            conversation.messages.append(Message("tool", result, tool_call_id=call.id))
            pending.remove(call)
    finally:
        # Closed mid-way (cancel, failure): every call the model made still gets a result.
        _close_calls(conversation, pending, "Error: cancelled by the user before it finished.")


def _close_calls(conversation: Conversation, calls: list[ToolRequest], text: str) -> None:
    for call in calls:
        conversation.messages.append(Message("tool", text, tool_call_id=call.id))


def _run_call(
    conversation: Conversation, call: ToolRequest, spec: ToolSpec | None
) -> Generator[Effect, Any, str]:
    error: str | None = yield StartTool(call)
    if error is None and spec is None:
        error = f"unknown tool {call.name!r}"
    if error is not None:
        yield Emit(FinishTool(call, error))
        return f"Error: {error}"
    if spec is not None and spec.permission is not None:
        refusal = yield from _permit(conversation, call, spec.permission)
        if refusal is not None:
            yield Emit(FinishTool(call, refusal))
            return f"Error: {refusal}"
    outcome: ToolOutcome = yield RunTool(call)
    return outcome.output if outcome.ok else f"Error: {outcome.output}"


def _permit(
    conversation: Conversation, call: ToolRequest, category: str
) -> Generator[Effect, Any, str | None]:
    remembered = conversation.policy.get(category)
    if remembered == "allow":
        return None
    if remembered == "reject":
        return "the user rejected this kind of action for this session."
    answer: PermissionAnswer = yield AskPermission(call, category)
    if answer.always:
        conversation.policy[category] = "allow" if answer.approved else "reject"
    return None if answer.approved else "the user rejected this action."


def _update_plan(conversation: Conversation, call: ToolRequest) -> Generator[Effect, Any, str]:
    try:
        entries = parse_plan(call.arguments)
    except ValueError as exc:
        return f"Error: {exc}"
    conversation.plan = entries
    yield Emit(ShowPlan(entries))
    return "Plan updated."


def parse_plan(arguments: str) -> tuple[PlanItem, ...]:
    """Read ``update_plan`` arguments; raise ValueError with a message the model can act on."""
    try:
        data = json.loads(arguments or "{}")
    except json.JSONDecodeError as exc:
        raise ValueError(f"the arguments are not valid JSON ({exc.msg})") from None
    raw = data.get("entries") if isinstance(data, dict) else None
    if not isinstance(raw, list):
        raise ValueError("`entries` must be a list of {content, status, priority}")
    items = []
    for entry in raw:
        if not isinstance(entry, dict) or not isinstance(entry.get("content"), str):
            raise ValueError("every entry needs a `content` string")
        items.append(
            PlanItem(
                content=entry["content"],
                priority=str(entry.get("priority") or "medium"),
                status=str(entry.get("status") or "pending"),
            )
        )
    return tuple(items)
