"""Probes: the agent exits when the client closes its stdin (TR-06), idle or mid-turn."""

from __future__ import annotations

from acp2.check.driver import ClientCore
from acp2.check.probes.base import Probe, ProbeSpec
from acp2.check.probes.cancel import start_running

__all__ = ["SHUTDOWN_PROBES"]


async def _judge_exit(p: Probe, link: ClientCore, key: str, when: str) -> None:
    closed_at = link.now()
    code = await link.wait_exit(p.timeout)
    if code is None:
        p.fail(key, f"still running {p.timeout:g}s after stdin was closed {when}")
    else:
        took = link.now() - closed_at
        p.ok(key, f"exited with code {code} {took:.2f}s after stdin was closed {when}")


async def shutdown_idle(p: Probe) -> None:
    """Close stdin right after initialize."""
    async with p.link() as link:
        await p.handshake(link)
        await link.close_stdin()
        await _judge_exit(p, link, "TR-06", "while idle")


async def shutdown_busy(p: Probe) -> None:
    """Close stdin while a ``--cancel-prompt`` turn is running."""
    async with p.link() as link:
        await p.handshake(link)
        sid = await p.new_session(link)
        await start_running(p, link, sid, p.options.cancel_prompt)
        await link.close_stdin()
        await _judge_exit(p, link, "TR-06:busy", "during a turn")


SHUTDOWN_PROBES = (
    ProbeSpec("shutdown-idle", shutdown_idle, ("TR-06",), "stdin closed while idle", timing=True),
    ProbeSpec(
        "shutdown-busy", shutdown_busy, ("TR-06:busy",), "stdin closed during a turn", timing=True
    ),
)
