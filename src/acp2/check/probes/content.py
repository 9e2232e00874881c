"""Probe: prompt content capabilities (IN-11, PL-02, D-10).

Text and ``resource_link`` must always be accepted; ``image`` / ``audio`` / ``resource``
must be accepted when advertised. Nov also wants a block type that was *not* advertised
rejected with ``-32602``. Each accepted turn is cancelled at once to keep the probe short.
"""

from __future__ import annotations

from typing import Any

from acp2.check.driver import ClientCore
from acp2.check.probes.base import Probe, ProbeSpec, has_capability
from acp2.check.probes.turns import run_turn, text_block

__all__ = ["CONTENT_PROBES"]

# A 1x1 transparent PNG and a 44-byte silent WAV, both base64.
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA="

_BLOCKS: dict[str, tuple[str, dict[str, Any]]] = {
    "PL-02:image": (
        "session.prompt.image",
        {"type": "image", "data": PNG, "mimeType": "image/png"},
    ),
    "PL-02:audio": (
        "session.prompt.audio",
        {"type": "audio", "data": WAV, "mimeType": "audio/wav"},
    ),
    "PL-02:resource": (
        "session.prompt.embeddedContext",
        {
            "type": "resource",
            "resource": {
                "uri": "file:///acp2-check/note.txt",
                "mimeType": "text/plain",
                "text": "A note attached by acp2 check.",
            },
        },
    ),
}
ROWS = ("IN-11", *_BLOCKS, "PL-02:nov")


async def _accepted(p: Probe, link: ClientCore, sid: str, block: dict[str, Any], key: str) -> bool:
    """Prompt with text + ``block``; judge ``key`` on acceptance and a finished turn."""
    blocks = [text_block(p.options.prompt), block]
    turn = await run_turn(p, link, sid, blocks, label=key, cancel=True)
    frames = [f for f in (turn.response, turn.idle) if f is not None]
    if turn.result is None:
        p.fail(
            key,
            f"{block['type']} block not accepted: "
            f"{turn.error if turn.response else 'no response'}{link.exit_note()}",
            frames,
        )
        return False
    p.judge(
        key,
        turn.idle is not None,
        f"{block['type']} block accepted"
        if turn.idle
        else "accepted, but the turn never reported idle",
        frames,
    )
    return turn.idle is not None


async def content(p: Probe) -> None:
    """Prompt with every content type; judge acceptance against the advertised capabilities."""
    async with p.link() as link:
        caps = await p.handshake(link)
        p.require_session(caps, ROWS)
        sid = await p.new_session(link)
        link_block = {
            "type": "resource_link",
            "uri": "file:///acp2-check/readme.md",
            "name": "readme.md",
        }
        await _accepted(p, link, sid, link_block, "IN-11")
        unadvertised = []
        for key, (capability, block) in _BLOCKS.items():
            if has_capability(caps, capability):
                await _accepted(p, link, sid, block, key)
            else:
                p.skip(key, f"{capability} is not advertised")
                unadvertised.append(block)
        if not unadvertised:
            p.skip("PL-02:nov", "every prompt content type is advertised")
            return
        await _rejected(p, link, sid, unadvertised[0])


async def _rejected(p: Probe, link: ClientCore, sid: str, block: dict[str, Any]) -> None:
    turn = await run_turn(
        p, link, sid, [text_block(p.options.prompt), block], label="unadvertised", cancel=True
    )
    error = turn.error if isinstance(turn.error, dict) else {}
    frames = [turn.response] if turn.response else []
    p.judge(
        "PL-02:nov",
        error.get("code") == -32602,
        f"unadvertised {block['type']} block rejected with -32602"
        if error.get("code") == -32602
        else f"unadvertised {block['type']} block: expected -32602",
        frames,
    )


CONTENT_PROBES = (
    ProbeSpec(
        "content", content, ROWS, "text, resource_link, image, audio, resource prompts", timing=True
    ),
)
