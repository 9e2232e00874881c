"""The built-in coding agent: a model loop, providers (OpenAI-compatible, scripted) and
file / search / edit / shell tools confined to the session's roots.

Start with :func:`build_coder_agent`; the loop itself is :func:`acp2.coder.loop.coder_loop`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from acp2.coder.agent import CoderSettings, build_coder_agent

__all__ = ["CoderSettings", "build_coder_agent"]


def __getattr__(name: str) -> Any:
    # Lazy: importing acp2.coder must not pull in the agent runtime.
    if name in __all__:
        from acp2.coder import agent

        return getattr(agent, name)
    raise AttributeError(f"module 'acp2.coder' has no attribute {name!r}")
