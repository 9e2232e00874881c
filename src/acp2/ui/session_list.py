"""The sessions a person picks from (``/sessions``, ``/resume`` and ``acp2 chat --resume``
without an id): newest first, each with its title, age and folder (rich is imported
only to draw them: the plain chat works without it).

The title is the agent's (``session_info_update``, listed by ``session/list``); for an
agent that gives none, the chat's own note of the session's first prompt, kept in
``first-prompts.json`` under the acp2 data directory (:func:`acp2.ui.history.data_dir`,
the newest :data:`KEPT` sessions), else ``(untitled)``. Every string of the agent is
sanitized before it is shown.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from acp2 import sanitize
from acp2.ui.choose import picked

if TYPE_CHECKING:
    from rich.text import Text

__all__ = [
    "KEPT",
    "age_text",
    "choose_session",
    "first_prompts",
    "folder_of",
    "newest_first",
    "note_first_prompt",
    "rows",
    "title_of",
]

#: How many sessions' first prompts are kept (the oldest are forgotten first).
KEPT: Final = 500
#: Characters of a first prompt kept as a title.
TITLE_CHARS: Final = 60


def _path() -> Path:
    from acp2.ui.history import data_dir  # prompt_toolkit: the plain chat may lack it

    return data_dir() / "first-prompts.json"


def first_prompts() -> dict[str, str]:
    """Session id -> the first prompt sent in it from this machine (empty when unreadable)."""
    try:
        value = json.loads(_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)}


def note_first_prompt(session_id: str, prompt: Any) -> None:
    """Keep ``prompt`` (its first line) as the title of ``session_id`` unless one is kept;
    a file that cannot be written is left alone (the list then shows ``(untitled)``)."""
    text = prompt if isinstance(prompt, str) else ""
    line = " ".join(text.strip().split("\n", 1)[0].split())[:TITLE_CHARS]
    known = first_prompts()
    if not line or session_id in known:
        return
    known[session_id] = line
    kept = dict(list(known.items())[-KEPT:])
    path = _path()
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_suffix(".tmp")
        temp.write_text(json.dumps(kept, ensure_ascii=False), encoding="utf-8")
        os.replace(temp, path)


def folder_of(cwd: str | None) -> str:
    """``cwd`` (default: the current folder) made absolute: the folder a list is for."""
    return os.path.abspath(cwd or os.getcwd())


def title_of(info: Any, prompts: dict[str, str]) -> str:
    """The title shown for listed session ``info``."""
    title = getattr(info, "title", None)
    if isinstance(title, str) and title.strip():
        return sanitize.line(title)
    return sanitize.line(prompts.get(str(info.session_id), "(untitled)"))


def newest_first(found: Sequence[Any]) -> list[Any]:
    """``found`` sorted by ``updatedAt``, newest first (those without one last)."""
    return sorted(found, key=lambda s: str(s.updated_at or ""), reverse=True)


def age_text(updated_at: Any, now: datetime) -> str:
    """``just now``, ``5m ago``, ``3h ago``, ``2d ago``; ``""`` for no readable time."""
    if not isinstance(updated_at, str):
        return ""
    try:
        when = datetime.fromisoformat(updated_at.replace("Z", "+00:00"))
    except ValueError:
        return ""
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    seconds = max(0, int((now - when).total_seconds()))
    for size, unit in ((86400, "d"), (3600, "h"), (60, "m")):
        if seconds >= size:
            return f"{seconds // size}{unit} ago"
    return "just now"


def rows(found: Sequence[Any], *, current: str | None = None) -> list[Text]:
    """One numbered line per session: title, age, folder, id (``(this session)``)."""
    from rich.text import Text  # only here: the plain chat runs without rich

    prompts = first_prompts()
    now = datetime.now(UTC)
    home = str(Path.home())
    out = []
    for number, info in enumerate(found, 1):
        line = Text(f" {number:>2} ", style="bold")
        line.append(title_of(info, prompts)[:TITLE_CHARS])
        age = age_text(info.updated_at, now)
        if age:
            line.append(f"  {age}", style="yellow")
        folder = str(info.cwd)
        if folder == home or folder.startswith(home + os.sep):
            folder = "~" + folder[len(home) :]
        line.append(f"  {sanitize.line(folder)}", style="dim")
        line.append(f"  {sanitize.line(str(info.session_id))}", style="dim cyan")
        if info.session_id == current:
            line.append("  (this session)", style="dim")
        out.append(line)
    return out


async def choose_session(
    found: Sequence[Any],
    show: Callable[[Text], None],
    ask: Callable[[str], Awaitable[str]],
    *,
    current: str | None = None,
) -> str | None:
    """Show ``found`` newest first and ask which to resume; the id picked, or None
    (nothing listed, or Enter). A reply that is no number of the list is said so."""
    from rich.text import Text

    listed = newest_first(found)
    if not listed:
        show(Text("the agent lists no sessions for this folder", style="dim"))
        return None
    for line in rows(listed, current=current):
        show(line)
    answer = (await ask(f"resume which? [1-{len(listed)}, enter: none] › ")).strip()
    index = picked(answer, len(listed))
    if index is not None:
        return str(listed[index].session_id)
    if answer:
        show(Text(sanitize.line(f"no session {answer!r}"), style="yellow"))
    return None
