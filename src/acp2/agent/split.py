"""Splitting replayed entities that would not fit in one frame (issue 10, section 8).

A folded message of millions of streamed chunks is one whole-message update of tens of
megabytes -- over what peers accept (the TypeScript SDK refuses messages over 32 MiB,
acp2's own limit is 64 MiB). Replay therefore sends an entity whose content would exceed
:data:`FRAME_BUDGET` as one whole update holding the first part, then append updates with
the same id for the rest: ``*_chunk`` for messages, ``tool_call_content_chunk`` for tool
calls, ``compaction_summary_chunk`` for compactions, ``terminal_output_chunk`` for
terminal output. A receiver applying them in order (MU-04/05, TC-05, TM-06) ends with the
same content.

In a split entity, consecutive plain text blocks (no annotations, no ``_meta``) are joined
and cut into pieces of at most :data:`PIECE_CHARS` characters (fewer when escaping would
push a piece over the budget): the text is the same, the streaming boundaries are not kept.
Entities that fit are replayed exactly as before. A single non-text block, ``_meta``
object or raw input bigger than the budget is still sent whole: it cannot be split.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator, Sequence
from typing import Any

from msgspec import UNSET

from acp2.schema import TextContent
from acp2.schema.codec import encode

__all__ = ["FRAME_BUDGET", "PIECE_CHARS", "TERMINAL_PIECE", "fits", "pieces", "split_bytes"]

#: The most encoded content replay puts in one update (well under the 32 MiB TS limit).
FRAME_BUDGET = 1024 * 1024
#: Characters of text per piece of a split run of text blocks.
PIECE_CHARS = 256 * 1024
#: Raw terminal bytes per piece (base64 makes 1 MiB of it).
TERMINAL_PIECE = 768 * 1024
#: JSON escaping makes at most this many bytes of one character (``\\u001f``).
_WORST_BYTES_PER_CHAR = 6
#: Bytes a text block adds around its text, generously.
_BLOCK_OVERHEAD = 64
#: Bytes a text block adds around its text at least: ``{"type":"text","text":""},``.
_BLOCK_MIN = 26


def _plain(block: Any) -> bool:
    return (
        type(block) is TextContent
        and block.annotations in (UNSET, None)
        and (block.meta in (UNSET, None))
    )


def fits(blocks: Sequence[Any], budget: int = FRAME_BUDGET) -> bool:
    """True when ``blocks`` encode to at most ``budget`` bytes.

    Cheap for small text, and it stops early for big content: a text block encodes to at
    least its length plus its keys, at most six bytes a character plus its keys.
    """
    lower = upper = 0
    for block in blocks:
        if type(block) is TextContent:
            size = len(block.text)
            lower += size + _BLOCK_MIN
            upper += _WORST_BYTES_PER_CHAR * size + _BLOCK_OVERHEAD
        else:
            size = len(encode(block))
            lower += size
            upper += size
        if lower > budget:
            return False
    return upper <= budget or len(encode(list(blocks))) <= budget


def _text_blocks(text: str, budget: int) -> Iterator[TextContent]:
    if len(text) <= 1 or len(encode(text)) + _BLOCK_OVERHEAD <= budget:
        yield TextContent(text=text)
        return
    half = len(text) // 2
    yield from _text_blocks(text[:half], budget)
    yield from _text_blocks(text[half:], budget)


def _cut(run: list[str], budget: int, final: bool) -> tuple[list[TextContent], list[str]]:
    """Pieces of the joined run, and what is left (all of it when ``final``)."""
    text = "".join(run)
    full = len(text) if final else len(text) - len(text) % PIECE_CHARS
    out: list[TextContent] = []
    for start in range(0, full, PIECE_CHARS):
        out.extend(_text_blocks(text[start : start + PIECE_CHARS], budget))
    rest = text[full:]
    return out, [rest] if rest else []


def pieces(blocks: Sequence[Any], budget: int = FRAME_BUDGET) -> Iterator[Any]:
    """The blocks again, with each run of plain text blocks joined and re-cut into pieces
    that each fit in ``budget``; other blocks unchanged, order kept."""
    run: list[str] = []
    size = 0
    for block in blocks:
        if _plain(block):
            run.append(block.text)
            size += len(block.text)
            if size >= PIECE_CHARS:
                out, run = _cut(run, budget, final=False)
                size = len(run[0]) if run else 0
                yield from out
            continue
        if run:
            out, run = _cut(run, budget, final=True)
            size = 0
            yield from out
        yield block
    if run:
        yield from _cut(run, budget, final=True)[0]


def split_bytes(data: bytes, piece: int = TERMINAL_PIECE) -> Iterator[str]:
    """``data`` in pieces of at most ``piece`` bytes, each base64-encoded on its own."""
    view = memoryview(data)
    for start in range(0, max(len(data), 1), piece):
        yield base64.b64encode(view[start : start + piece]).decode("ascii")
