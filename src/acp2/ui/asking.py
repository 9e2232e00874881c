"""Answering permission requests in the interactive chat.

With ``ask``, the live region is paused (stopped, so it leaves the screen), the text the
agent said so far is printed, then the request with its numbered options, and the choice
is read with a small prompt_toolkit prompt; the live region resumes afterwards. Ctrl-C
at that prompt declines and cancels the turn. With ``allow`` / ``deny`` the decision is
made at once and shown as one line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio
from prompt_toolkit import PromptSession
from rich.text import Text

from acp2.client import PermissionRequest, allow_all, deny_all
from acp2.schema import PermissionOption
from acp2.ui.blocks import permission_block
from acp2.ui.permission import choice_hint, choice_text, parse_choice

if TYPE_CHECKING:
    from acp2.ui.interactive import InteractiveChat

__all__ = ["Asker"]


class Asker:
    """The interactive chat's permission policy (:meth:`policy`); ``busy`` is True while a
    request has the screen, so the chat does not redraw its live region meanwhile."""

    def __init__(self, chat: InteractiveChat, mode: str = "ask") -> None:
        self.chat = chat
        self.mode = mode
        self.busy = False
        self._lock = anyio.Lock()

    async def policy(self, request: PermissionRequest) -> PermissionOption | None:
        """Decide ``request``: by the fixed mode, or by asking (one request at a time)."""
        if self.mode != "ask":
            option = allow_all(request) if self.mode == "allow" else deny_all(request)
            self._say(f"permission: {request.title} → {choice_text(option)}")
            return option
        async with self._lock:
            return await self._ask(request)

    async def _ask(self, request: PermissionRequest) -> PermissionOption | None:
        chat = self.chat
        live = chat.live
        if live is None:
            # Not in a turn: the main prompt owns the terminal, so no second prompt.
            self._say(f"permission: {request.title} → declined (no turn is running)")
            return None
        self.busy = True
        live.stop()
        try:
            chat.print_settled(messages_done=True)
            chat.console.print(permission_block(request))
            option = await self._read(request)
            self._say(f"→ {choice_text(option)}")
            return option
        except anyio.get_cancelled_exc_class():
            self._say("→ the request was withdrawn")
            raise
        finally:
            self.busy = False
            if chat.live is live:
                live.start()

    async def _read(self, request: PermissionRequest) -> PermissionOption | None:
        hint = choice_hint(request)
        prompts: PromptSession[str] = PromptSession()
        while True:
            try:
                # Raw mode makes Ctrl-C a key here; prompt_toolkit must not touch the
                # SIGINT handler, which the turn still needs afterwards.
                answer = await prompts.prompt_async(f"choose [{hint}] › ", handle_sigint=False)
            except KeyboardInterrupt:
                self.chat.request_cancel()
                return None
            except EOFError:
                return None
            choice = parse_choice(request, answer)
            if isinstance(choice, PermissionOption):
                return choice
            self._say(f"type {hint} (ctrl-c declines and cancels the turn)", style="yellow")

    def _say(self, text: str, style: str = "dim") -> None:
        self.chat.console.print(Text(text, style=style))
