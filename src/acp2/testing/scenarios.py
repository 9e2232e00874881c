"""``acp2 test-agent``: a deterministic ACP v2 agent for testing clients (ours and anyone's).

The first word of the prompt text selects a scenario; the rest is its argument.
"""

from __future__ import annotations

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
    from acp2.agent import Turn

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
  wait            runs until cancelled (then ends idle with stopReason cancelled)
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


async def wait(turn: Turn, arg: str) -> str:
    """Work until cancelled."""
    await turn.say("Waiting until cancelled...")
    import anyio  # not at module level: the agent answers initialize before anyio loads

    await anyio.sleep_forever()
    return "end_turn"  # pragma: no cover - never reached


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
    "wait": wait,
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
