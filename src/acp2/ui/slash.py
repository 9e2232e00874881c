"""Running the chat's own slash commands (:mod:`acp2.ui.commands` parses them).

Each handler prints its answer above the prompt; a refusal by the agent (or a capability
it lacks) is shown as one line, never raised, so the chat goes on.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Final

import anyio
from prompt_toolkit import PromptSession
from rich.text import Text

from acp2 import sanitize
from acp2.errors import Acp2Error, LocalProtocolError
from acp2.state import background_items
from acp2.ui import background, commands, options, session_surface, subagents
from acp2.ui.style import cost_text, tokens_text
from acp2.ui.tokens import token_lines

if TYPE_CHECKING:
    from acp2.client import ClientConnection
    from acp2.ui.interactive import InteractiveChat

__all__ = ["CANCEL_BG_WAIT", "KEYS_HELP", "SlashCommands"]

#: How long ``/cancel-bg`` waits for the agent to confirm the item ended (seconds).
CANCEL_BG_WAIT: Final = 5.0

#: The widest command name column of ``/help`` (longer names push their text right).
HELP_NAME_WIDTH: Final = 28

#: The keys ``/help`` lists.
KEYS_HELP = (
    ("enter", "send (while the agent works: queue)"),
    ("esc enter / alt enter", "new line"),
    ("@path", "attach a file of this folder"),
    ("!command", "run it in your shell here; its output goes with the next prompt"),
    ("esc", "interrupt the work (as one ctrl-c)"),
    ("ctrl-c", "cancel the work; twice on an empty line: exit"),
    ("ctrl-d", "exit"),
    ("ctrl-t / ctrl-o", "expand or collapse thoughts / tool output"),
    ("up / down", "this folder's prompt history"),
)


class SlashCommands:
    """The built-in commands of ``chat``; :meth:`run` dispatches one by name."""

    def __init__(self, chat: InteractiveChat) -> None:
        self.chat = chat

    @property
    def session(self) -> Any:
        """The chat's current session."""
        return self.chat.session

    def _client(self) -> ClientConnection:
        """The chat's connection (a session holds no pointer to it)."""
        client = self.chat.client
        if client is None:
            raise LocalProtocolError("this chat has no connection to open sessions with")
        return client

    def say(self, text: str, style: str = "dim") -> None:
        """Print one line above the prompt."""
        self.chat.console.print(Text(sanitize.prose(text), style=style))  # may quote the agent

    async def run(self, name: str, arg: str) -> None:
        """Run the built-in ``name`` with ``arg``; agent errors become one line."""
        handler = getattr(self, f"do_{name.replace('-', '_')}")
        try:
            await handler(arg)
        except Acp2Error as exc:
            self.say(f"/{name}: {exc}", style="red")

    async def do_help(self, arg: str) -> None:
        """List the commands (the chat's, then the agent's, one line each) and the keys;
        ``/help NAME`` shows one command in full."""
        state = self.session.state
        if arg.strip():
            self._help_one(arg.strip())
            return
        rows = commands.help_rows(state.available_commands, self._categories())
        width = min(max(len(usage) for usage, _ in [*rows, *KEYS_HELP]), HELP_NAME_WIDTH) + 2
        out = Text("commands\n", style="bold")
        for usage, description in rows:
            out.append(f"  {sanitize.line(usage):<{width}}", style="cyan")  # the agent's names
            out.append(f"{sanitize.line(description)}\n")
        out.append("keys\n", style="bold")
        for key, description in KEYS_HELP:
            out.append(f"  {key:<{width}}", style="cyan")
            out.append(f"{description}\n")
        out.append("a built-in wins over an agent command of the same name: ")
        out.append("//name runs the agent's; /help NAME shows one command in full")
        self.chat.console.print(out)

    def _help_one(self, name: str) -> None:
        found = commands.help_detail(name, self.session.state.available_commands)
        if found is None:
            self.say(f"no command {sanitize.line(name)}: /help lists them")
            return
        usage, description = found
        out = Text(sanitize.line(usage) + "\n", style="bold cyan")  # the agent's text
        out.append(sanitize.prose(description))
        self.chat.console.print(out)

    async def do_quit(self, arg: str) -> None:
        """Leave the chat once this command is done."""
        self.chat.leaving = True

    async def do_cancel(self, arg: str) -> None:
        """Nothing runs between turns (during a turn, /cancel is handled at once)."""
        self.say("nothing to cancel: the agent is idle")

    async def do_bg(self, arg: str) -> None:
        """List the background work the agent reports, numbered for ``/cancel-bg``."""
        for line in background.listing(self.session.state):
            self.chat.console.print(line)

    async def do_cancel_bg(self, arg: str) -> None:
        """Cancel background item ``arg`` (``tool_call/cancel`` / ``terminal/cancel``)
        and wait a little for the agent to confirm that it ended."""
        item, label = background.pick(self.session.state, arg)
        if item is None or item.item_id is None:
            self.say(label, style="yellow")
            return
        if item.kind == "tool_call":
            await self.session.cancel_tool_call(item.item_id)
        else:
            await self.session.cancel_terminal(item.item_id)
        self.say(f"cancelling {label}…")
        if await self._ended(item.item_id):
            self.say(f"{label} ended", style="")
        else:
            self.say(f"{label} is still running: the agent accepted the cancel", style="yellow")

    async def _ended(self, item_id: str) -> bool:
        """Wait (at most :data:`CANCEL_BG_WAIT`) until ``item_id`` left the background."""
        session = self.session
        changed = anyio.Event()

        def listed() -> bool:
            return any(i.item_id == item_id for i in background_items(session.state))

        def wake(update: Any, raw: bytes) -> None:
            changed.set()

        remove = session.add_listener(wake)
        try:
            with anyio.move_on_after(CANCEL_BG_WAIT):
                while listed():
                    await changed.wait()
                    changed = anyio.Event()
        finally:
            remove()
        return not listed()

    async def do_permissions(self, arg: str) -> None:
        """The saved permission rules (:mod:`acp2.ui.rules_view`): list, remove, trust."""
        from acp2.ui.rules_view import run

        for line in run(self.session.cwd, arg):
            self.chat.console.print(line)

    async def do_subagents(self, arg: str) -> None:
        """List the session's child sessions, numbered for ``/subagent`` and
        ``/cancel-subagent`` (:func:`acp2.ui.subagents.listing`)."""
        for text in subagents.listing(self.session):
            self.chat.console.print(Text(text, style="dim"))

    async def do_subagent(self, arg: str) -> None:
        """Expand child ``arg``: print its whole transcript (it stays folded in the chat)."""
        child, name = subagents.pick(self.session, arg, "subagent")
        if child is None:
            self.say(name, style="yellow")
            return
        self.chat.console.print(Text("\n".join(subagents.expanded(child))))

    async def do_cancel_subagent(self, arg: str) -> None:
        """Cancel child ``arg``'s work (``session/cancel`` on the child's id), when the
        agent advertised ``cancel`` for it; its parent's work goes on."""
        child, name = subagents.pick(self.session, arg, "cancel-subagent")
        if child is None:
            self.say(name, style="yellow")
            return
        if not child.may_cancel:
            self.say(f"the agent does not let {name} be cancelled", style="yellow")
            return
        self.say(f"cancelling {name}…")
        await child.cancel()
        self.say(f"{name} ended: {child.state.stop_reason or 'cancelled'}", style="")

    async def do_cost(self, arg: str) -> None:
        """The tokens of the last turn and of the session (when the agent reports them on
        its idles), then the context tokens used of the window and the cost, as last
        reported."""
        tokens = token_lines(self.session.state)  # Preview: idle usage, per turn and summed
        for line in tokens:
            self.say(line, style="")
        usage = self.session.state.usage
        if usage is None:
            if not tokens:
                self.say("the agent has not reported usage in this session")
            return
        percent = f" ({100 * usage.used / usage.size:.0f}%)" if usage.size else ""
        line = f"context {tokens_text(usage.used)} of {tokens_text(usage.size)} tokens{percent}"
        cost = cost_text(usage.cost)
        self.say(line + (f" · cost {cost}" if cost else " · no cost reported"), style="")

    async def do_info(self, arg: str) -> None:
        """The session's id, folder and this chat's role; for a remote agent, the
        command that attaches to it from another terminal."""
        from acp2.ui.watching import info_lines

        for text in info_lines(self.session, self.chat.url):
            self.chat.console.print(Text(text), soft_wrap=True)  # one line: it copies whole

    async def do_clear(self, arg: str) -> None:
        """Start a new session in the same folder; the old one is closed."""
        old = self.session
        new = await self._client().new_session(old.cwd)
        await self._leave(old)
        self.chat.attach(new)
        self.chat.console.rule(style="dim")
        self.say(f"new session {new.id}")

    async def do_sessions(self, arg: str) -> None:
        """List this folder's sessions, newest first, with title, age and folder, and
        resume the one picked (:mod:`acp2.ui.session_list`)."""
        from acp2.ui.session_list import choose_session

        found = await self._client().list_sessions(cwd=self.session.cwd)
        picked_id = await choose_session(
            found, self.chat.console.print, self._ask, current=self.session.id
        )
        if picked_id is not None and picked_id != self.session.id:
            await self.do_resume(picked_id)

    async def do_resume(self, arg: str) -> None:
        """Resume session ``arg`` of this folder, replaying it."""
        if not arg:  # pick from the list, as /sessions
            await self.do_sessions(arg)
            return
        old = self.session
        new = await self._client().resume(arg, cwd=old.cwd, replay=True)
        if new is not old and old.id != new.id:
            await self._leave(old)
        self.chat.show_resumed(new)

    async def do_model(self, arg: str) -> None:
        """Show the model choices, or choose one (by number, id or name)."""
        await self._choose("model", arg)

    async def do_mode(self, arg: str) -> None:
        """Show the mode choices, or choose one (by number, id or name)."""
        await self._choose("mode", arg)

    async def _choose(self, category: str, arg: str) -> None:
        option = options.find_select(self.session.state.config_options, category)
        if option is None:
            self.say(f"the agent offers no {category} choice")
            return
        listed = options.choices(option)
        if not arg:
            for number, (value, name) in enumerate(listed, 1):
                mark = "●" if value == option.current_value else " "
                self.chat.console.print(Text(f" {mark} {number:>2} {sanitize.line(name)}"))
            arg = await self._ask(f"{category}? [1-{len(listed)}, enter: keep] › ")
            if not arg:
                return
        picked = options.pick(option, arg)
        if picked is None:
            self.say(f"no {category} {arg!r}", style="yellow")
            return
        await options.set_select(self.session, option, picked)
        changed = options.find_select(self.session.state.config_options, category)
        self.say(f"{category}: {options.current_name(changed or option)}")

    def _categories(self) -> set[str]:
        return options.categories(self.session.state.config_options)

    async def _ask(self, message: str) -> str:
        asking: PromptSession[str] = PromptSession()
        try:
            return (await asking.prompt_async(message)).strip()
        except (KeyboardInterrupt, EOFError):
            return ""

    def client(self) -> ClientConnection:
        """The chat's connection to the agent."""
        return self._client()

    async def do_fork(self, arg: str) -> None:
        """Fork this session and go on in the fork (:mod:`acp2.ui.session_surface`)."""
        await session_surface.fork(self, arg)

    async def do_title(self, arg: str) -> None:
        """Show the session's title, or set it: ``/title NEW``."""
        await session_surface.title(self, arg)

    async def do_steer(self, arg: str) -> None:
        """Give the running work more to go on: ``/steer TEXT``."""
        await session_surface.steer(self, arg)

    async def _leave(self, old: Any) -> None:
        with contextlib.suppress(Acp2Error):
            await old.close()
