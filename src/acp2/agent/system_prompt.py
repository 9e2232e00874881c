"""A client's system prompt for a session (Preview, unstable; ``rfds/client-system-prompt``).

An agent with ``Agent.system_prompt`` set advertises ``session.systemPrompt`` with the
``override`` mode and takes the ``systemPrompt`` of ``session/new``, ``session/resume``
and ``session/fork``: ``append`` adds the client's text to the agent's own instructions,
``override`` replaces them. The runtime checks it (a mode other than these two, or text
that is not text blocks, is ``-32602`` and creates nothing) and keeps it with the session
(:func:`system_prompt_of`); the prompt handler decides how its model gets it (the coding
agent puts it in the model's system message). An agent without the setting ignores the
field, as the Preview asks of an agent that does not advertise it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from msgspec import UNSET

from acp2.errors import InvalidParams
from acp2.schema import SystemPrompt, TextContent

if TYPE_CHECKING:
    from acp2.agent.session import AgentSession
    from acp2.agent.settings import AgentSettings as Agent

__all__ = ["MODES", "SYSTEM_PROMPT_KEY", "check_system_prompt", "keep", "system_prompt_of"]

#: The modes acp2's agents take.
MODES: Final = ("append", "override")
#: Where the session's accepted system prompt lives in ``session.data``.
SYSTEM_PROMPT_KEY: Final = "acp2.system_prompt"


def check_system_prompt(agent: Agent, given: Any) -> SystemPrompt | None:
    """The ``systemPrompt`` of a lifecycle request, checked: None when absent or when the
    agent does not take one; ``-32602`` for an unknown mode or non-text content."""
    if given is UNSET or given is None or not agent.system_prompt:
        return None
    if not isinstance(given, SystemPrompt) or given.mode not in MODES:
        mode = getattr(given, "mode", None)
        raise InvalidParams(f"systemPrompt mode must be append or override, not {mode!r}")
    if not all(isinstance(block, TextContent) for block in given.content):
        raise InvalidParams("systemPrompt content must be text blocks")
    return given


def keep(session: AgentSession, prompt: SystemPrompt | None) -> None:
    """Remember ``prompt`` for ``session`` (a resume or fork without one keeps the last)."""
    if prompt is not None:
        session.data[SYSTEM_PROMPT_KEY] = prompt


def system_prompt_of(session: AgentSession) -> tuple[str, str] | None:
    """``(mode, text)`` of the session's client system prompt, or None."""
    prompt = session.data.get(SYSTEM_PROMPT_KEY)
    if not isinstance(prompt, SystemPrompt):
        return None
    text = "\n\n".join(b.text for b in prompt.content if isinstance(b, TextContent))
    return prompt.mode, text
