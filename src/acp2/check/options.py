"""The options of one ``acp2 check`` run (the CLI flags map onto these fields)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["DEFAULT_CANCEL_PROMPT", "DEFAULT_PERMISSION_PROMPT", "DEFAULT_PROMPT", "CheckOptions"]

DEFAULT_PROMPT = "Say hello in one short sentence."
DEFAULT_CANCEL_PROMPT = "Count slowly from 1 to 1000, one number per line."
DEFAULT_PERMISSION_PROMPT = (
    "Create a file named acp2-check.txt in the current directory containing the word hello."
)


@dataclass
class CheckOptions:
    """Everything ``acp2 check`` needs to know; the CLI flags map onto these fields.

    ``timeout`` bounds every single wait for the agent (None: scaled from the agent's
    measured start-up time, see :mod:`acp2.check.timing`); ``jobs`` is how many agent
    processes run at once (None: the CPU count); ``grace`` is how long the checker keeps
    listening for frames that must *not* come (after an idle, after notifications; it
    grows for a slow-starting agent).
    ``auth`` is the ``methodId`` to log in with after each ``initialize`` (v2
    ``auth/login``, v1 ``authenticate``); without it, a ``session/new`` refused with
    ``-32000`` skips the session rows and says which methods the agent offers.
    ``cwd`` is the session directory (absolute; a fresh temporary directory when None).
    ``url`` (with ``token``) checks the remote agent there instead of starting ``argv``
    (:mod:`acp2.check.remote`: some probes cannot run remotely).
    ``mcp_servers`` go in every ``session/new`` (v2 wire shape, as JSON values); those the
    agent does not advertise it takes are left out, and a v1 agent gets v1's shape.
    """

    argv: list[str]
    draft: str = "preview"
    timeout: float | None = None
    prompt: str = DEFAULT_PROMPT
    cancel_prompt: str = DEFAULT_CANCEL_PROMPT
    permission_prompt: str = DEFAULT_PERMISSION_PROMPT
    cwd: str | None = None
    env: dict[str, str] | None = None
    only: frozenset[str] | None = None
    jobs: int | None = None
    grace: float = 0.5
    #: An advertised auth method to log in with after every ``initialize`` (``--auth``).
    auth: str | None = None
    url: str | None = None
    token: str | None = None
    mcp_servers: list[dict[str, Any]] = field(default_factory=list)

    @property
    def remote(self) -> tuple[str, str | None] | None:
        """``(url, token)`` when checking a remote agent, else None."""
        return None if self.url is None else (self.url, self.token)
