"""Answering the agent's elicitations in ``acp2 chat`` (EL-05, EL-07, EL-12).

:func:`make_policy` builds the chat's elicitation policy from two front-end functions:
``say`` (print a line) and ``read`` (read one answer, prefilled; None when the user gives
up). The agent's message is shown first, sanitized (EL-07).

* Form mode: every field is asked in turn (:mod:`acp2.ui.form`), then the answers are
  shown and the user sends them (accept), or declines; giving up cancels.
* URL mode: the whole link is shown before anything is asked (EL-12); the user agrees to
  open it (accept: the agent then waits for ``elicitation/complete``) or declines. The chat
  never opens a link by itself.

:func:`interactive_policy` wraps it for the terminal chat: the live region is paused for
the time of the form, as for a permission request, and one request is asked at a time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from acp2.client import ElicitationRequest
from acp2.client.elicitation import ElicitationAnswer, ElicitationPolicy
from acp2.sanitize import line, prose
from acp2.schema import ElicitationCancelAction
from acp2.ui.form import Read, Unfillable, fill, form_fields

if TYPE_CHECKING:
    from acp2.ui.asking import Asker

__all__ = ["ask", "interactive_policy", "make_policy"]

Say = Callable[[str], None]


def make_policy(read: Read, say: Say) -> ElicitationPolicy:
    """The policy: ask the user through ``read`` / ``say`` (see the module docstring)."""

    async def policy(request: ElicitationRequest) -> ElicitationAnswer:
        return await ask(request, read, say)

    return policy


async def ask(request: ElicitationRequest, read: Read, say: Say) -> ElicitationAnswer:
    """Show ``request`` and ask the user; the answer for the policy."""
    say("the agent asks: " + (prose(request.message) or "(no message)"))
    if request.mode == "url":
        return await _url(request, read, say)
    return await _form(request, read, say)


async def _url(request: ElicitationRequest, read: Read, say: Say) -> ElicitationAnswer:
    say("  link: " + line(request.url or ""))
    answer = await read("open this link yourself and continue? [y/N] ", "")
    if answer is not None and answer.strip().lower() in ("y", "yes"):
        say("  → accepted: the agent continues once you are done there")
        return True
    say("  → declined")
    return None


async def _form(request: ElicitationRequest, read: Read, say: Say) -> ElicitationAnswer:
    schema = request.schema
    if schema is None:
        return None
    try:
        fields = form_fields(schema)
    except Unfillable as exc:
        say(f"  → declined: {exc}")
        return None
    content = await fill(fields, read, say)
    if content is None:
        say("  → cancelled")
        return ElicitationCancelAction()
    say("  " + (", ".join(f"{line(k)}={line(str(v))}" for k, v in content.items()) or "(empty)"))
    answer = await read("send this? [Y/n] ", "")
    if answer is None:
        say("  → cancelled")
        return ElicitationCancelAction()
    if answer.strip().lower() in ("n", "no"):
        say("  → declined")
        return None
    say("  → sent")
    return content


def interactive_policy(asker: Asker) -> ElicitationPolicy:
    """The terminal chat's policy: :func:`make_policy` with the live region paused while
    it asks (one request at a time, shared with permission requests), reading with a
    one-line prompt_toolkit prompt (Ctrl-C or Ctrl-D gives up)."""
    from prompt_toolkit import PromptSession
    from rich.text import Text

    chat = asker.chat

    def say(text: str) -> None:
        chat.console.print(Text(text))

    async def read(prompt: str, default: str) -> str | None:
        try:
            return await PromptSession[str]().prompt_async(prompt, default=default)
        except (KeyboardInterrupt, EOFError):
            return None

    async def policy(request: ElicitationRequest) -> ElicitationAnswer:
        async with asker.screen() as ok:
            if not ok:
                say("the agent asks for input, but no turn is running: declined")
                return None
            return await ask(request, read, say)

    return policy
