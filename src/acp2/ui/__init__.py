"""Terminal front-ends of acp2: what ``acp2 chat`` and ``acp2 demo`` show and read.

Rendering is kept apart from the loops that drive a session, so it can be tested with a
capture console:

- :mod:`acp2.sanitize`: the one sanitizer every piece of agent text passes before it
  reaches a terminal (no escape sequence, control or bidi override of the agent's gets
  through); :mod:`acp2.ui.logs` applies it to acp2's own warnings;
- :mod:`acp2.client.describe` (in the client runtime, whose terminal permission policy
  needs it too): plain, sanitized facts about entries, shared by the renderers;
- :mod:`acp2.ui.style`: glyphs, colours and number formats shared by both renderers;
- :mod:`acp2.ui.blocks` / :mod:`acp2.ui.content`: timeline entries as rich renderables;
- :mod:`acp2.ui.plain`: the same entries as plain text (the non-TTY transcript);
- :mod:`acp2.ui.settle`: which entries are final enough to print once;
- :mod:`acp2.ui.live`: the live region redrawn at a steady frame rate during a turn;
- :mod:`acp2.client.permission_text` (also the client's): permission requests
  described (what will run, exactly) and answered; :mod:`acp2.ui.keys` answers them
  with one key, :mod:`acp2.ui.asking` in the chat;
- :mod:`acp2.ui.oneshot`: what ``acp2 run`` shows (streamed reply, the question, JSON);
- :mod:`acp2.ui.prompt` / :mod:`acp2.ui.lines`: reading input (prompt_toolkit, or lines);
- :mod:`acp2.ui.interactive` / :mod:`acp2.ui.transcript`: the two chat loops;
- :mod:`acp2.ui.app`: :func:`~acp2.ui.app.run_chat`, which connects and picks a loop.

rich and prompt_toolkit are the ``cli`` extra; nothing here is imported by ``import acp2``.
"""

from __future__ import annotations

__all__: list[str] = []
