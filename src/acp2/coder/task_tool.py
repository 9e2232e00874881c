"""The coding agent's ``task`` tool: a sub-task run in a child session (Preview subagents).

The model calls ``task`` with a short ``description`` (shown to the user) and a complete
``prompt``. The call is reported like any tool call; running it spawns a child session of
the current one, named by the call's ``session`` content, hands it the prompt as a
message between the sessions, and runs the same model loop there with a context of its
own: a fresh conversation (its own system prompt, then the prompt), the same tools but
``task`` (no nesting), the same limits. The child's last reply is its report: it goes back
to the parent as a message and becomes the tool result the parent's model reads. The
client may cancel the child (it is announced cancellable): the call then fails and the
parent's model is told so; cancelling the parent cancels the child too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from acp2.coder.effects import ToolOutcome
from acp2.coder.messages import Message, ToolRequest, ToolSpec
from acp2.schema import Content, SessionReference, TextContent

if TYPE_CHECKING:
    from acp2.agent import ToolCallHandle, Turn
    from acp2.coder.providers.base import ChatModel
    from acp2.coder.tools import Toolbox

__all__ = ["TASK_TOOL", "TaskRequest", "TaskRunner", "parse_task"]

TASK_TOOL = ToolSpec(
    "task",
    "Hand a self-contained sub-task (research, a focused change) to a helper agent that "
    "works in its own context with the same tools, and get its final report back. The "
    "helper sees nothing of this conversation: the prompt must say everything it needs. "
    "description: a few words shown to the user.",
    {
        "type": "object",
        "properties": {"description": {"type": "string"}, "prompt": {"type": "string"}},
        "required": ["description", "prompt"],
    },
    kind="other",
)

#: The longest description used as the child's title.
_TITLE_LIMIT = 80


@dataclass(frozen=True)
class TaskRequest:
    """A ``task`` call's arguments: what to show the user and what the helper is told."""

    description: str
    prompt: str


def parse_task(arguments: str) -> TaskRequest:
    """Read ``task`` arguments; raise ValueError with a message the model can act on."""
    try:
        data = json.loads(arguments or "{}")
    except json.JSONDecodeError as exc:
        raise ValueError(f"the arguments are not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise ValueError("the arguments must be an object {description, prompt}")
    prompt, description = data.get("prompt"), data.get("description")
    if not isinstance(prompt, str) or not prompt.strip():
        raise ValueError("`prompt` must be a non-empty string")
    if not isinstance(description, str) or not description.strip():
        description = prompt
    return TaskRequest(" ".join(description.split())[:_TITLE_LIMIT], prompt)


def helper_prompt(turn: Turn) -> str:
    """The system prompt of a helper working in ``turn``'s session."""
    return (
        "You are a helper agent working on one sub-task in the user's project at "
        f"{turn.session.cwd}, for another agent that will read your final answer. Use the "
        "tools to look before you change anything; paths are relative to the project "
        "root. End with a short, complete report of what you found or changed."
    )


class TaskRunner:
    """Reports and runs the ``task`` calls of one turn (see the module docstring):
    ``model``, ``toolbox`` (its tools go to the helper), ``context_window`` and
    ``max_requests`` as for the parent's loop."""

    def __init__(
        self, model: ChatModel, toolbox: Toolbox, *, context_window: int, max_requests: int
    ) -> None:
        self.model = model
        self.toolbox = toolbox
        self.context_window = context_window
        self.max_requests = max_requests
        self._requests: dict[str, TaskRequest] = {}

    def owns(self, call: ToolRequest) -> bool:
        """True for a ``task`` call."""
        return call.name == TASK_TOOL.name

    async def start(self, turn: Turn, call: ToolRequest) -> tuple[ToolCallHandle, str | None]:
        """Report ``call`` (``pending``); return its handle and an error text for the
        model (bad arguments) or None when it may run."""
        try:
            request = parse_task(call.arguments)
        except ValueError as exc:
            return await turn.tool_call("Task", name=TASK_TOOL.name), str(exc)
        handle = await turn.tool_call(
            f"Task: {request.description}", kind="other", name=TASK_TOOL.name,
            raw_input={"description": request.description, "prompt": request.prompt},
        )  # fmt: skip
        self._requests[call.id] = request
        return handle, None

    async def run(self, turn: Turn, handle: ToolCallHandle, call: ToolRequest) -> ToolOutcome:
        """Run a started ``task`` call in a child session to its final status."""
        request = self._requests.pop(call.id)
        await handle.start()
        result = await turn.delegate(
            request.prompt, self._helper, title=request.description,
            description="a helper working on a sub-task", tool_call=handle,
        )  # fmt: skip
        # The content is replaced: the link to the child stays first, the outcome follows.
        link = SessionReference(session_id=result.child.id)
        if result.report is None:
            message = f"the helper stopped ({result.stop_reason}) without a report"
            await handle.fail(content=[link, _text(message)])
            return ToolOutcome(False, message)
        await handle.complete(content=[link, _text(result.report)])
        return ToolOutcome(True, result.report)

    async def _helper(self, sub: Turn, task: str) -> str:
        """The child's work: the model loop on a fresh conversation; its last reply."""
        from acp2.coder.driver import Driver  # here: the driver imports this module's users
        from acp2.coder.loop import Conversation, coder_loop

        conversation = Conversation([Message("system", helper_prompt(sub))])
        loop = coder_loop(conversation, task, self.toolbox.specs, max_requests=self.max_requests)
        driver = Driver(sub, self.model, self.toolbox, context_window=self.context_window)
        stop = await driver.run(loop)
        replies = [m.content for m in conversation.messages if m.role == "assistant"]
        report = next((text for text in reversed(replies) if text.strip()), "")
        return report or f"(the helper ended with {stop} and said nothing)"


def _text(text: str) -> Content:
    return Content(content=TextContent(text=text))
