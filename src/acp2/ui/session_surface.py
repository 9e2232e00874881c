"""The chat's ``/fork``, ``/title NEW`` (Preview ``session/fork``, ``session/set_title``) and
``/steer TEXT`` (acp2's ``_acp2/session/steer``).

Both go to the agent only when it advertised the capability; otherwise the client refuses
locally and the chat shows that as one line (:meth:`acp2.ui.slash.SlashCommands.run`).
The agent's answers (ids, the stored title) are sanitized before they are printed.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from acp2 import sanitize
from acp2.errors import Acp2Error

if TYPE_CHECKING:
    from acp2.ui.slash import SlashCommands

__all__ = ["fork", "steer", "title"]


async def fork(commands: SlashCommands, arg: str) -> None:
    """Fork the chat's session and go on in the fork; the old session is left as it was
    (it can be resumed by id)."""
    chat = commands.chat
    old = commands.session
    new = await commands.client().fork(old.id, cwd=old.cwd)
    with contextlib.suppress(Acp2Error):
        await old.close()  # as /clear does: the agent frees it; it can be resumed by id
    chat.attach(new)
    chat.console.rule(style="dim")
    commands.say(
        f"forked into {sanitize.line(new.id)}; {sanitize.line(old.id)} is unchanged"
        f" (/resume {sanitize.line(old.id)})"
    )


async def title(commands: SlashCommands, arg: str) -> None:
    """``/title NEW`` names the session (the agent stores it); ``/title`` shows it."""
    session = commands.session
    if not arg.strip():
        current = session.state.title
        shown = sanitize.line(current) if isinstance(current, str) and current else None
        commands.say(f"title: {shown}" if shown else "no title (/title NEW sets one)")
        return
    stored = await commands.client().set_title(session.id, arg.strip())
    commands.say(f"title set: {sanitize.line(stored)}")


async def steer(commands: SlashCommands, arg: str) -> None:
    """``/steer TEXT`` during a turn: the text goes into the running work (the agent reads
    it at its next step, and shows it as a user message); with nothing running, or an
    agent without steering, the chat says so and sends nothing."""
    text = arg.strip()
    if not text:
        commands.say("usage: /steer TEXT (while the agent works)")
        return
    steered = await commands.client().steer(commands.session.id, text)
    if steered is None:
        commands.say("nothing is running: send it as a prompt")
