"""An ACP v2 agent that saves your prompt to notes.txt: a plan, a tool call with a diff
preview, a permission request, and the tool call's result.

Try it:  acp2 run --permission allow "buy milk" -- python examples/notes_agent.py
"""

import os

import anyio

from acp2.agent import Agent, Turn
from acp2.schema import Diff, DiffAddChange, DiffPatch, PermissionOption

agent = Agent("notes-agent", version="1.0", title="Notes agent")

OPTIONS = [
    PermissionOption(option_id="write", name="Write the file", kind="allow_once"),
    PermissionOption(option_id="skip", name="Do not write it", kind="reject_once"),
]


@agent.prompt
async def save_note(turn: Turn) -> str:
    """Plan, ask before writing notes.txt in the session folder, write it, report."""
    steps = ["Read the prompt", "Write notes.txt", "Report what was done"]
    await turn.plan([{"content": steps[0], "status": "completed"}, *steps[1:]])

    path = os.path.join(turn.session.cwd, "notes.txt")
    text = turn.text.strip() + "\n"
    preview = Diff(
        changes=[DiffAddChange(path=path)],
        patch=DiffPatch(format="git_patch", text=f"+++ b/notes.txt\n@@ -0,0 +1 @@\n+{text}"),
    )
    call = await turn.tool_call("Write notes.txt", kind="edit", content=preview, locations=[path])

    answer = await turn.request_permission("Write notes.txt?", tool_call=call, options=OPTIONS)
    if not answer.approved:
        await call.fail(content="Not written: permission was declined.")
        await turn.say("I did not write notes.txt.")
        return "end_turn"

    await call.start()
    await anyio.Path(path).write_text(text, encoding="utf-8")
    await call.add_content(f"Wrote {len(text.encode())} bytes.")
    await call.complete()
    await turn.plan([{"content": step, "status": "completed"} for step in steps])
    await turn.say(f"Saved your note to {path}.")
    return "end_turn"


if __name__ == "__main__":
    agent.run()
