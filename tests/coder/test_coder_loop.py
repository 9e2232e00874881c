"""The model loop generator, driven with scripted outcomes: no IO, no event loop."""

from __future__ import annotations

import ast
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import acp2.coder.loop
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
from acp2.coder.loop import Conversation, coder_loop
from acp2.coder.messages import (
    FINISH_LENGTH,
    FINISH_REFUSAL,
    ModelReply,
    ToolRequest,
    ToolSpec,
    Usage,
)

READ = ToolSpec("read_file", "read", {}, kind="read")
EDIT = ToolSpec("edit_file", "edit", {}, kind="edit", permission="edit")
RUN = ToolSpec("run_command", "run", {}, kind="execute", permission="execute")
TOOLS = (READ, EDIT, RUN)


def call(name: str, n: int = 1, **args: Any) -> ToolRequest:
    return ToolRequest(f"c{n}", name, json.dumps(args))


def calls(*requests: ToolRequest) -> ModelReply:
    return ModelReply(tool_calls=requests, finish="tool_calls")


class Script:
    """Answers effects: model replies in order, permission answers in order, tools ok."""

    def __init__(
        self,
        *replies: ModelReply,
        answers: tuple[PermissionAnswer, ...] = (),
        start_error: Callable[[ToolRequest], str | None] = lambda _: None,
    ) -> None:
        self.replies = list(replies)
        self.answers = list(answers)
        self.start_error = start_error
        self.effects: list[Effect] = []
        #: What each TakeSteering answers, in order (then nothing).
        self.steering: list[tuple[str, ...]] = []

    def __call__(self, effect: Effect) -> Any:
        self.effects.append(effect)
        if isinstance(effect, CallModel):
            return self.replies.pop(0)
        if isinstance(effect, StartTool):
            return self.start_error(effect.call)
        if isinstance(effect, AskPermission):
            return self.answers.pop(0)
        if isinstance(effect, RunTool):
            return ToolOutcome(True, f"ran {effect.call.name}")
        if isinstance(effect, TakeSteering):
            return self.steering.pop(0) if self.steering else ()
        return None

    def of(self, kind: type) -> list[Any]:
        return [e for e in self.effects if isinstance(e, kind)]

    def events(self, kind: type) -> list[Any]:
        return [e.event for e in self.of(Emit) if isinstance(e.event, kind)]


def run(
    script: Script,
    prompt: str = "go",
    conversation: Conversation | None = None,
    max_requests: int = 10,
) -> tuple[str, Conversation]:
    conversation = conversation or Conversation()
    gen = coder_loop(conversation, prompt, TOOLS, max_requests=max_requests)
    outcome: Any = None
    while True:
        try:
            effect = gen.send(outcome)
        except StopIteration as stop:
            return stop.value, conversation
        outcome = script(effect)


def test_a_reply_without_tool_calls_ends_the_turn() -> None:
    script = Script(ModelReply(text="Hello"))
    reason, conversation = run(script)
    assert reason == "end_turn"
    assert [(m.role, m.content) for m in conversation.messages] == [
        ("user", "go"),
        ("assistant", "Hello"),
    ]


def test_tool_results_go_back_to_the_model_in_the_next_request() -> None:
    script = Script(calls(call("read_file", path="a.py")), ModelReply(text="Read it."))
    reason, _ = run(script)
    assert reason == "end_turn"
    assert [type(e).__name__ for e in script.effects] == [
        "CallModel",
        "StartTool",
        "RunTool",
        "TakeSteering",
        "CallModel",
        "TakeSteering",
    ]
    second = script.of(CallModel)[1].request.messages
    assert second[-1].role == "tool"
    assert second[-1].tool_call_id == "c1"
    assert second[-1].content == "ran read_file"
    assert [t.name for t in script.of(CallModel)[0].request.tools][-1] == "update_plan"


def test_steering_goes_to_the_model_after_the_tool_results() -> None:
    script = Script(calls(call("read_file", path="a.py")), ModelReply(text="Done."))
    script.steering = [("use tabs",)]
    run(script)
    second = script.of(CallModel)[1].request.messages
    assert [(m.role, m.content) for m in second[-2:]] == [
        ("tool", "ran read_file"),
        ("user", "use tabs"),
    ]


def test_steering_that_came_during_the_last_answer_gets_another_model_call() -> None:
    script = Script(ModelReply(text="Working."), ModelReply(text="With tabs."))
    script.steering = [("use tabs",)]
    reason, conversation = run(script)
    assert reason == "end_turn"
    assert [(m.role, m.content) for m in conversation.messages] == [
        ("user", "go"),
        ("assistant", "Working."),
        ("user", "use tabs"),
        ("assistant", "With tabs."),
    ]


def test_reading_asks_no_permission_but_editing_does() -> None:
    script = Script(
        calls(call("read_file", 1, path="a"), call("edit_file", 2, path="a")),
        ModelReply(text="done"),
        answers=(PermissionAnswer(True),),
    )
    run(script)
    assert [e.call.name for e in script.of(AskPermission)] == ["edit_file"]
    assert script.of(AskPermission)[0].category == "edit"
    assert [e.call.name for e in script.of(RunTool)] == ["read_file", "edit_file"]


def test_a_rejected_tool_is_not_run_and_the_model_hears_why() -> None:
    script = Script(
        calls(call("edit_file", path="a")),
        ModelReply(text="ok"),
        answers=(PermissionAnswer(False),),
    )
    _, conversation = run(script)
    assert not script.of(RunTool)
    assert [e.call.id for e in script.events(FinishTool)] == ["c1"]
    result = next(m for m in conversation.messages if m.role == "tool")
    assert result.content == "Error: the user rejected this action."


def test_allow_always_is_remembered_for_the_category_across_prompts() -> None:
    conversation = Conversation()
    first = Script(
        calls(call("edit_file", 1, path="a"), call("edit_file", 2, path="b")),
        ModelReply(text="ok"),
        answers=(PermissionAnswer(True, always=True),),
    )
    run(first, conversation=conversation)
    assert len(first.of(AskPermission)) == 1
    assert len(first.of(RunTool)) == 2
    second = Script(
        calls(call("edit_file", 3, path="c"), call("run_command", 4, command="ls")),
        ModelReply(text="ok"),
        answers=(PermissionAnswer(True),),
    )
    run(second, conversation=conversation)
    assert [e.category for e in second.of(AskPermission)] == ["execute"]
    assert conversation.policy == {"edit": "allow"}


def test_reject_always_refuses_later_calls_without_asking() -> None:
    script = Script(
        calls(call("run_command", 1, command="rm -rf x"), call("run_command", 2, command="ls")),
        ModelReply(text="ok"),
        answers=(PermissionAnswer(False, always=True),),
    )
    _, conversation = run(script)
    assert len(script.of(AskPermission)) == 1
    assert not script.of(RunTool)
    assert [e.call.id for e in script.events(FinishTool)] == ["c1", "c2"]
    assert conversation.policy == {"execute": "reject"}


def test_a_tool_that_fails_its_checks_is_finished_without_asking_or_running() -> None:
    script = Script(
        calls(call("edit_file", path="../outside")),
        ModelReply(text="ok"),
        start_error=lambda c: "'../outside' is outside the workspace",
    )
    _, conversation = run(script)
    assert not script.of(AskPermission)
    assert not script.of(RunTool)
    assert script.events(FinishTool)[0].message == "'../outside' is outside the workspace"
    assert conversation.messages[-2].content.startswith("Error: '../outside' is outside")


def test_an_unknown_tool_is_reported_and_explained_to_the_model() -> None:
    script = Script(calls(call("launch_rockets")), ModelReply(text="sorry"))
    _, _conversation = run(script)
    assert script.events(FinishTool)[0].message == "unknown tool 'launch_rockets'"
    assert not script.of(RunTool)


def test_a_length_stop_ends_with_max_tokens_and_runs_no_truncated_call() -> None:
    script = Script(ModelReply(text="abc", tool_calls=(call("read_file"),), finish=FINISH_LENGTH))
    reason, conversation = run(script)
    assert reason == "max_tokens"
    assert not script.of(StartTool)
    assert conversation.messages[-1].tool_calls == ()


def test_a_refusal_ends_with_refusal() -> None:
    script = Script(
        ModelReply(text="I can't.", tool_calls=(call("read_file"),), finish=FINISH_REFUSAL)
    )
    reason, conversation = run(script)
    assert reason == "refusal"
    assert not script.of(StartTool)
    assert conversation.messages[-1].role == "tool"  # the dangling call got a result


def test_the_request_limit_ends_with_max_turn_requests() -> None:
    script = Script(*[calls(call("read_file", n)) for n in range(5)])
    reason, _ = run(script, max_requests=3)
    assert reason == "max_turn_requests"
    assert len(script.of(CallModel)) == 3
    assert "3 model requests" in script.events(Say)[0].text


def test_usage_is_reported_after_each_exchange() -> None:
    script = Script(
        ModelReply(tool_calls=(call("read_file"),), finish="tool_calls", usage=Usage(100, 20)),
        ModelReply(text="ok", usage=Usage(150, 10, 160)),
    )
    run(script)
    assert script.events(ReportUsage) == [ReportUsage(120), ReportUsage(160)]


def test_a_plan_is_shown_and_kept_without_a_tool_call() -> None:
    entries = [
        {"content": "Read", "status": "completed", "priority": "high"},
        {"content": "Fix", "status": "in_progress"},
    ]
    script = Script(calls(call("update_plan", entries=entries)), ModelReply(text="ok"))
    _, conversation = run(script)
    plan = (PlanItem("Read", "high", "completed"), PlanItem("Fix", "medium", "in_progress"))
    assert script.events(ShowPlan) == [ShowPlan(plan)]
    assert conversation.plan == plan
    assert not script.of(StartTool)
    assert conversation.messages[-2].content == "Plan updated."


def test_a_malformed_plan_is_explained_to_the_model() -> None:
    script = Script(calls(ToolRequest("c1", "update_plan", "{not json")), ModelReply(text="ok"))
    _, conversation = run(script)
    assert not script.events(ShowPlan)
    assert conversation.messages[-2].content.startswith("Error: the arguments are not valid JSON")


def test_closing_the_loop_mid_tool_gives_every_requested_call_a_result() -> None:
    conversation = Conversation()
    gen = coder_loop(conversation, "go", TOOLS)
    assert isinstance(gen.send(None), CallModel)
    reply = calls(call("read_file", 1), call("read_file", 2), call("read_file", 3))
    assert isinstance(gen.send(reply), StartTool)
    assert isinstance(gen.send(None), RunTool)
    assert isinstance(gen.send(ToolOutcome(True, "one")), StartTool)
    gen.close()  # the driver does this on cancel
    results = [(m.tool_call_id, m.content) for m in conversation.messages if m.role == "tool"]
    assert results[0] == ("c1", "one")
    assert [r[0] for r in results] == ["c1", "c2", "c3"]
    assert results[1][1].startswith("Error: cancelled")


@pytest.mark.parametrize("module", ["loop", "effects", "messages"])
def test_the_loop_modules_do_no_io(module: str) -> None:
    source = Path(acp2.coder.loop.__file__).with_name(f"{module}.py").read_text()
    imported = {
        (node.module or "") if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    allowed = {
        "__future__",
        "json",
        "collections.abc",
        "dataclasses",
        "typing",
        "acp2.coder.effects",
        "acp2.coder.messages",
    }
    assert imported <= allowed


def test_repeated_or_missing_call_ids_are_made_distinct() -> None:
    reply = calls(
        ToolRequest("x", "read_file", "{}"),
        ToolRequest("x", "read_file", "{}"),
        ToolRequest("", "read_file", "{}"),
    )
    script = Script(reply, ModelReply(text="ok"))
    _, conversation = run(script)
    ids = [c.id for c in conversation.messages[1].tool_calls]
    assert ids == ["x", "x_1", "call_2"]
    assert [m.tool_call_id for m in conversation.messages if m.role == "tool"] == ids
