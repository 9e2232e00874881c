"""``acp2 test-agent``: a deterministic ACP v2 agent for testing clients (ours and anyone's).

The first word of the prompt text selects a scenario; the rest is its argument.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from msgspec import Raw

from acp2.agent import Agent
from acp2.schema import (
    AvailableCommand,
    Content,
    Diff,
    DiffModifyChange,
    DiffPatch,
    PlanEntry,
    SessionInfoUpdate,
    TextCommandInput,
    TextContent,
    ToolCallLocation,
)
from acp2.schema.codec import encode

if TYPE_CHECKING:
    from acp2.agent import TerminalHandle, ToolCallHandle, Turn

__all__ = ["SCENARIOS", "SCENARIO_HELP", "build_test_agent"]

Scenario = Callable[["Turn", str], Awaitable[str | None]]

SCENARIO_HELP = """\
scenarios (the first word of the prompt selects one):
  echo <text>     the text back as agent_message_chunk updates (one per word)
  stream <n>      n small agent_message_chunk updates, as fast as possible
  flood <n>       n rounds, as fast as possible, of four interleaved updates: a
                  message chunk, a thought chunk, a title patch of one tool call and
                  a terminal output chunk (round i sends "i " / "i " / "step i" / "i\\n")
  think <text>    the text as agent_thought_chunk updates, then a short reply
  plan            a three-step plan, updated as each step completes
  tools           a tool call that asks permission, then (if allowed) a diff, a
                  terminal with output and an exit status, then usage; if rejected
                  the tool call fails and nothing is changed
  permission      one permission request; the reply says what was chosen
  form            a form elicitation (name, a colour choice, an age, a yes/no); the
                  reply says the answer (or declined / cancelled; without the client's
                  elicitation capability it says so)
  link <url>      a URL elicitation for url (default https://example.com/login);
                  on accept it sends elicitation/complete and says so
  subagent <text> the tool call "Ask the helper" delegates the text to a child session
                  "helper" (Preview subagents, referenced as the call's session
                  content, the task and the report sent as messages between the
                  sessions) that says it; then the parent says "helper done".
                  "subagent wait": the child (cancellable) waits until cancelled, then
                  the parent says "helper cancelled"
  wait            runs until cancelled (then ends idle with stopReason cancelled)
  background [n]  detaches a tool call ("Watch the tests") and the terminal of another
                  one ("make build") to the background, both cancellable; ends the turn;
                  they run until cancelled (tool_call/cancel, terminal/cancel), the
                  session closes, or n seconds passed (then they complete / exit 0)
  fail            the handler raises: an agent message explains, idle with "error"
  stop <reason>   ends at once with that stop reason (e.g. max_tokens, _custom)
  ext             an unknown "_acp2/custom" update and a _meta that must pass through
  all             every update kind once
anything else is treated as echo.
extension request "_acp2/ping" answers {"pong": true} (for round-trip benchmarks).
"""


async def echo(turn: Turn, arg: str) -> str:
    """Echo the words of ``arg`` as chunks."""
    words = arg.split(" ") if arg else [""]
    for i, word in enumerate(words):
        await turn.say(word if i == 0 else " " + word)
    return "end_turn"


async def stream(turn: Turn, arg: str) -> str:
    """Send ``n`` tiny chunks as fast as the connection takes them."""
    count = int(arg or "100")
    for i in range(count):
        await turn.say(f"{i} ")
    return "end_turn"


async def flood(turn: Turn, arg: str) -> str:
    """Interleave four kinds of small updates ``n`` times (the worst case for coalescing)."""
    count = int(arg or "100")
    call = await turn.tool_call("flood", kind="other")
    terminal = await turn.terminal("flood")
    await call.show_terminal(terminal)
    for i in range(count):
        await turn.say(f"{i} ")
        await turn.think(f"{i} ")
        await call.update(title=f"step {i}")
        await terminal.write(f"{i}\n".encode())
    await terminal.exit(0)
    await call.complete()
    return "end_turn"


async def think(turn: Turn, arg: str) -> str:
    """Think out loud, then answer."""
    for word in (arg or "hmm").split(" "):
        await turn.think(word + " ")
    await turn.say("Done thinking.")
    return "end_turn"


async def plan(turn: Turn, arg: str) -> str:
    """Send a plan and move each entry to completed."""
    steps = ["Read the code", "Make the change", "Run the tests"]
    statuses = ["pending"] * len(steps)
    for i in range(len(steps) + 1):
        entries = [
            PlanEntry(content=s, priority="medium", status=statuses[j]) for j, s in enumerate(steps)
        ]
        await turn.plan(entries)
        if i < len(steps):
            statuses[i] = "completed"
    await turn.say("All steps done.")
    return "end_turn"


async def tools(turn: Turn, arg: str) -> str:
    """A permission-gated edit with a diff, a terminal and usage."""
    path = f"{turn.session.cwd.rstrip('/')}/hello.txt"
    call = await turn.tool_call(
        "Edit hello.txt",
        kind="edit",
        raw_input={"path": path},
        locations=[ToolCallLocation(path=path, line=1)],
    )
    answer = await turn.request_permission("Allow editing hello.txt?", tool_call=call)
    if not answer.approved:
        await call.fail(content=[Content(content=TextContent(text="Permission denied"))])
        await turn.say("Permission denied; nothing was changed.")
        return "end_turn"
    await call.start()
    patch = (
        f"diff --git {path} {path}\n--- {path}\n+++ {path}\n@@ -1 +1 @@\n-hello\n+hello, world\n"
    )
    diff = Diff(
        changes=[DiffModifyChange(path=path)], patch=DiffPatch(format="git_patch", text=patch)
    )
    await call.add_content(diff)
    terminal = await turn.terminal("cat hello.txt")
    await call.show_terminal(terminal)
    await terminal.write(b"hello, world\n")
    await terminal.exit(0)
    await call.complete()
    await turn.usage(1200, 200000, cost=(0.01, "USD"))
    await turn.say("Edited hello.txt.")
    return "end_turn"


async def permission(turn: Turn, arg: str) -> str:
    """Ask once and report the choice."""
    answer = await turn.request_permission(arg or "May I proceed?", description="A test question")
    picked = answer.option.option_id if answer.option else answer.outcome
    await turn.say(f"You chose: {picked}")
    return "end_turn"


#: The form of the ``form`` scenario: one field of each kind a chat must handle.
FORM = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Your name", "minLength": 1},
        "colour": {
            "type": "string",
            "title": "Colour",
            "oneOf": [{"const": "r", "title": "red"}, {"const": "g", "title": "green"}],
        },
        "age": {"type": "integer", "title": "Age", "minimum": 0, "maximum": 150},
        "subscribe": {"type": "boolean", "title": "Subscribe", "default": False},
    },
    "required": ["name", "colour"],
}


async def form(turn: Turn, arg: str) -> str:
    """Ask for :data:`FORM` and report the answer."""
    from acp2.agent import ElicitationUnsupported

    try:
        answer = await turn.elicit(arg or "Tell me about you", schema=FORM)
    except ElicitationUnsupported:
        await turn.say("The client does not take forms.")
        return "end_turn"
    if answer.action != "accept":
        await turn.say(f"The form was {'declined' if answer.action == 'decline' else 'cancelled'}.")
        return "end_turn"
    fields = ", ".join(f"{k}={v}" for k, v in sorted((answer.content or {}).items()))
    await turn.say(f"Form: {fields}")
    return "end_turn"


async def link(turn: Turn, arg: str) -> str:
    """Ask the user to open a link; complete it once accepted."""
    from acp2.agent import ElicitationUnsupported

    url = arg or "https://example.com/login"
    try:
        answer = await turn.elicit_url("Please sign in", url=url)
    except ElicitationUnsupported:
        await turn.say("The client does not take links.")
        return "end_turn"
    if answer.action == "accept" and answer.elicitation_id is not None:
        await turn.complete_elicitation(answer.elicitation_id)
        await turn.say("Link accepted and completed.")
    else:
        await turn.say(f"Link {answer.action}.")
    return "end_turn"


async def subagent(turn: Turn, arg: str) -> str:
    """Delegate ``arg`` to a child session (from a tool call) that says it and reports;
    ``wait``: the child waits until the client cancels it (it is cancellable)."""
    call = await turn.tool_call("Ask the helper", kind="other", name="delegate")
    await call.start()

    async def helper(sub: Turn, task: str) -> str:
        if task == "wait":
            await sub.say("helper waiting")
            import anyio  # not at module level: initialize is answered before anyio loads

            await anyio.sleep_forever()
        await sub.say(task or "hello from the helper")
        return f"reported: {task}"

    result = await turn.delegate(
        arg, helper, title="helper", description="a test subagent", tool_call=call
    )
    await call.complete()
    await turn.say("helper done" if result.report is not None else f"helper {result.stop_reason}")
    return "end_turn"


async def wait(turn: Turn, arg: str) -> str:
    """Work until cancelled."""
    await turn.say("Waiting until cancelled...")
    import anyio  # not at module level: the agent answers initialize before anyio loads

    await anyio.sleep_forever()
    return "end_turn"  # pragma: no cover - never reached


async def background(turn: Turn, arg: str) -> str:
    """Detach a tool call and a terminal; each runs until cancelled or ``arg`` seconds."""
    import anyio  # not at module level: the agent answers initialize before anyio loads

    seconds = float(arg) if arg else math.inf
    call = await turn.tool_call("Watch the tests", kind="execute", name="watch")
    await call.start()

    async def watching(handle: ToolCallHandle) -> None:
        """The watcher: nothing to do but wait (the runtime ends the call after it)."""
        await anyio.sleep(seconds)

    await call.detach(watching)
    # Process-backed work is listed as its terminal only: its tool call returns at once.
    build = await turn.tool_call("Start the build", kind="execute", name="build")
    term = await turn.terminal("make build")
    await build.show_terminal(term)
    await build.complete()

    async def tailing(handle: TerminalHandle) -> None:
        """The process: one line of output, then wait, then exit 0."""
        await handle.write("building...\n")
        await anyio.sleep(seconds)
        await handle.exit(0)

    await term.detach(tailing)
    await turn.say("Started 2 background items.")
    return "end_turn"


async def fail(turn: Turn, arg: str) -> str:
    """Raise from the handler."""
    await turn.say("About to fail.")
    raise RuntimeError(arg or "the test agent failed on purpose")


async def stop(turn: Turn, arg: str) -> str:
    """End with the given stop reason."""
    return arg or "end_turn"


async def ext(turn: Turn, arg: str) -> str:
    """An unknown update variant and a _meta, both to be passed through unchanged."""
    custom = {"sessionUpdate": "_acp2/custom", "payload": {"n": 1, "text": "custom"}}
    await turn.send(Raw(encode(custom)))
    await turn.send(SessionInfoUpdate(title="ext scenario", meta={"acp2.test": {"keep": True}}))
    await turn.say("ext done")
    return "end_turn"


async def everything(turn: Turn, arg: str) -> str:
    """Every update kind once."""
    await think(turn, "considering")
    turn.new_message()
    await plan(turn, "")
    turn.new_message()
    await tools(turn, "")
    turn.new_message()
    await turn.message([TextContent(text="A whole message.")])
    term = await turn.terminal("printf data")
    await term.snapshot(b"snapshot\n")
    await term.write("é".encode())
    await term.exit(0)
    test = AvailableCommand(
        name="test", description="Run tests", input=TextCommandInput(hint="args")
    )
    await turn.commands([test])
    await turn.send(SessionInfoUpdate(title="Everything"))
    await ext(turn, "")
    return "end_turn"


SCENARIOS: dict[str, Scenario] = {
    "echo": echo,
    "stream": stream,
    "flood": flood,
    "think": think,
    "plan": plan,
    "tools": tools,
    "permission": permission,
    "form": form,
    "link": link,
    "subagent": subagent,
    "wait": wait,
    "background": background,
    "fail": fail,
    "stop": stop,
    "ext": ext,
    "all": everything,
}


def build_test_agent(store: str | None = None) -> Agent:
    """Return the test agent (history in ``store``, or ``:memory:`` by default)."""
    agent = Agent(
        "acp2-test-agent",
        version="1",
        title="acp2 test agent",
        store=store or ":memory:",
        prompt_image=True,
        prompt_audio=True,
        commands=[
            AvailableCommand(
                name="echo", description="Echo the input", input=TextCommandInput(hint="text")
            )
        ],
    )

    @agent.prompt
    async def handle(turn: Turn) -> str | None:
        """Run the scenario named by the prompt's first word (a leading ``/`` is allowed);
        its argument is the rest of the first text block, so a large block after it is
        never copied."""
        first = next((b.text for b in turn.prompt if isinstance(b, TextContent)), "")
        word, _, arg = first.lstrip().removeprefix("/").partition(" ")
        scenario = SCENARIOS.get(word)
        if scenario is None:
            return await echo(turn, turn.text.strip().removeprefix("/"))
        return await scenario(turn, arg.strip())

    @agent.ext_method("_acp2/ping")
    async def ping(params: object) -> dict[str, bool]:
        """Answer ``{"pong": true}``."""
        return {"pong": True}

    return agent
