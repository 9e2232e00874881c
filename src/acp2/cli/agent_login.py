"""The terminal login of ``acp2 agent --model openai``: the auth method it advertises,
and ``acp2 agent --login``, which runs it.

The method is of type ``terminal`` (what the ACP registry requires of its agents): a
client that can run one starts ``acp2 agent ... --login`` in a terminal; the user types
the API key (not echoed); it is stored with :mod:`acp2.coder.credentials` (keyring when
installed, else a ``0600`` file) and read by every later start. An agent started without
any key refuses sessions (-32000) until then; one with a key, or pointed at a local
server by ``--base-url``, is signed in from the start.
"""

from __future__ import annotations

import sys
from typing import Any, Final

__all__ = ["METHOD_ID", "auth_methods", "terminal_login"]

#: The id of the terminal auth method.
METHOD_ID: Final = "acp2-api-key"


def auth_methods(signed_in: bool) -> list[Any]:
    """The agent's auth methods: one terminal login; ``signed_in`` when a key (or a
    local server) is there already. ``auth/login`` on it succeeds only then."""
    from acp2.agent import AuthMethodSpec
    from acp2.errors import AuthRequired

    async def login() -> None:
        """Nothing to do when signed in; otherwise only the terminal can help."""
        if not signed_in:
            raise AuthRequired(
                "no API key yet: run the terminal login (acp2 agent --login), then start "
                "the agent again"
            )

    return [
        AuthMethodSpec(
            method_id=METHOD_ID,
            name="Enter an API key in a terminal",
            description="Type the OpenAI-compatible API key once; acp2 keeps it privately.",
            login=login,
            terminal_args=["--login"],
            ready=lambda: signed_in,
        )
    ]


def terminal_login() -> int:
    """Ask for the key on the terminal (not echoed) and store it: 0 when stored, 1 when
    cancelled or empty. Messages go to stderr (stdout may be an ACP pipe)."""
    import getpass

    from acp2.coder.credentials import store_key

    print("acp2 agent: log in with an API key (OpenAI or compatible)", file=sys.stderr)
    try:
        key = getpass.getpass("API key (not shown): ", stream=sys.stderr)
    except (EOFError, KeyboardInterrupt):
        print("\nacp2 agent: login cancelled", file=sys.stderr)
        return 1
    try:
        where = store_key(key)
    except (ValueError, OSError) as exc:
        print(f"acp2 agent: login failed: {exc}", file=sys.stderr)
        return 1
    print(f"acp2 agent: the key is stored in {where}", file=sys.stderr)
    return 0
