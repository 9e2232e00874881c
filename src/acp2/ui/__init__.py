"""Terminal front-ends of acp2: what ``acp2 chat`` and ``acp2 demo`` show and read.

Rendering is kept apart from the loops that drive a session, so it can be tested with a
capture console:

- :mod:`acp2.ui.style`: glyphs, colours and number formats shared by both renderers;
- :mod:`acp2.ui.blocks` / :mod:`acp2.ui.content`: timeline entries as rich renderables;
- :mod:`acp2.ui.plain`: the same entries as plain text (the non-TTY transcript);
- :mod:`acp2.ui.settle`: which entries are final enough to print once;
- :mod:`acp2.ui.live`: the live region redrawn at a steady frame rate during a turn;
- :mod:`acp2.ui.permission`: permission requests, rendered and answered;
- :mod:`acp2.ui.prompt` / :mod:`acp2.ui.lines`: reading input (prompt_toolkit, or lines);
- :mod:`acp2.ui.interactive` / :mod:`acp2.ui.transcript`: the two chat loops;
- :mod:`acp2.ui.app`: :func:`~acp2.ui.app.run_chat`, which connects and picks a loop.

rich and prompt_toolkit are the ``cli`` extra; nothing here is imported by ``import acp2``.
"""

from __future__ import annotations

__all__: list[str] = []
