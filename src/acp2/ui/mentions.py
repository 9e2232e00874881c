"""``@path`` in a prompt: complete file names and attach the files to the prompt.

Only files inside the session's folder are offered or attached: a path is resolved
(symbolic links followed) and must stay under the resolved cwd, so ``@../secret`` or a
link pointing outside attaches nothing. An attached file is sent as embedded context
(its text in a ``resource`` block) when the agent advertises ``embeddedContext`` and the
file is UTF-8 text of at most :data:`MAX_EMBED_BYTES`; otherwise as a ``resource_link``.
The prompt's own text is always the first block, unchanged.
"""

from __future__ import annotations

import mimetypes
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from acp2.schema import EmbeddedResource, EmbeddedResourceResource, ResourceLink, TextContent

__all__ = [
    "MAX_COMPLETIONS",
    "MAX_EMBED_BYTES",
    "Attached",
    "confined",
    "mentions",
    "path_completions",
    "prompt_blocks",
]

#: Largest file embedded as text; bigger ones are sent as links.
MAX_EMBED_BYTES: Final = 256 * 1024
#: Most entries one ``@`` completion lists.
MAX_COMPLETIONS: Final = 50

_MENTION = re.compile(r"(?:(?<=\s)|^)@(\S+)")


@dataclass
class Attached:
    """A prompt's blocks, and what became of each ``@path`` (``path -> how``)."""

    blocks: list[Any]
    notes: list[tuple[str, str]] = field(default_factory=list)


def mentions(text: str) -> list[str]:
    """The ``@path`` words of ``text``, in order, each once (trailing punctuation kept
    off: ``@a.py,`` names ``a.py``)."""
    seen: list[str] = []
    for match in _MENTION.finditer(text):
        name = match.group(1).rstrip(",;:!?)")
        if name and name not in seen:
            seen.append(name)
    return seen


def confined(cwd: str, name: str) -> Path | None:
    """``name`` resolved under ``cwd`` when it stays inside it, else None."""
    root = Path(cwd).resolve()
    try:
        path = (root / name).resolve()
    except (OSError, RuntimeError):
        return None
    return path if path == root or path.is_relative_to(root) else None


def _block(path: Path, name: str, embed: bool) -> tuple[Any, str]:
    uri = path.as_uri()
    mime = mimetypes.guess_type(path.name)[0]
    size = path.stat().st_size
    if embed and size <= MAX_EMBED_BYTES:
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, ValueError):
            text = None
        if text is not None:
            resource = EmbeddedResourceResource(uri=uri, text=text, mime_type=mime or "text/plain")
            return EmbeddedResource(resource=resource), "attached"
    link = ResourceLink(name=name, uri=uri, size=size)
    if mime:
        link.mime_type = mime
    return link, "linked"


def prompt_blocks(text: str, cwd: str, *, embed: bool) -> Attached:
    """The prompt ``text`` as content blocks: the text, then one block per ``@path``
    that names a file inside ``cwd`` (others are noted as not attached)."""
    out = Attached([TextContent(text=text)])
    for name in mentions(text):
        path = confined(cwd, name)
        if path is None:
            out.notes.append((name, "outside the session folder: not attached"))
        elif not path.is_file():
            out.notes.append((name, "no such file: not attached"))
        else:
            try:
                block, how = _block(path, name, embed)
            except OSError as exc:
                out.notes.append((name, f"unreadable ({exc.strerror}): not attached"))
                continue
            out.blocks.append(block)
            out.notes.append((name, how))
    return out


def path_completions(partial: str, cwd: str) -> list[tuple[str, bool]]:
    """``(relative path, is a directory)`` for the entries that complete ``@partial``,
    inside ``cwd`` only; hidden entries only when the typed name starts with ``.``."""
    folder, _, stem = partial.rpartition("/")
    base = confined(cwd, folder or ".")
    if base is None or not base.is_dir():
        return []
    found: list[tuple[str, bool]] = []
    try:
        entries = sorted(os.scandir(base), key=lambda e: e.name)
    except OSError:
        return []
    for entry in entries:
        if not entry.name.startswith(stem) or (entry.name.startswith(".") and not stem):
            continue
        name = f"{folder}/{entry.name}" if folder else entry.name
        if confined(cwd, name) is None:
            continue
        found.append((name, entry.is_dir()))
        if len(found) >= MAX_COMPLETIONS:
            break
    return found
