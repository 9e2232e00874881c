"""Probes of a v1 agent's handshake and ``session/load`` (V1-IN-*, V1-SS-02), and the
table of every probe a v1 agent gets.

The v1 handshake is asked three ways, each on its own process: for 2 in v2's shape (what
a v2 client sends, and what made the run judge the agent as v1), for 1 in the shape valid
under both versions, and for 65535. A v1 agent answers its latest version, 1, to each
(V1-IN-02), in v1's shape (V1-IN-01). The generic JSON-RPC probes follow, with their
findings on the v1 rows (:data:`~acp2.check.requirements.V1_KEYS`).
"""

from __future__ import annotations

from typing import Any, Final

from acp2.check.frames import Frame
from acp2.check.probes.base import Probe, ProbeSpec
from acp2.check.probes.jsonrpc import jsonrpc
from acp2.check.probes.malformed import invalid_json, invalid_request, invalid_utf8
from acp2.check.probes.shutdown import shutdown_idle
from acp2.check.probes.turns import update_for
from acp2.check.probes.v1_permission import V1_PERMISSION_PROBES
from acp2.check.probes.v1_turns import V1_TURN_PROBES, run_v1_turn
from acp2.compat.v1.methods import SESSION_LOAD

__all__ = ["V1_PROBES"]

_ASKED: Final = (2, 1, 65535)
_FLAGS: Final = {
    "promptCapabilities": ("image", "audio", "embeddedContext"),
    "mcpCapabilities": ("http", "sse"),
}


async def handshake(p: Probe) -> None:
    """``initialize`` asking for 2, 1 and 65535: each answered 1, in v1's shape."""
    for asked in _ASKED:
        async with p.link(f"v{asked}") as link:
            frame = await p.initialize(link, asked)
        result = frame.value.get("result") if frame else None
        if frame is None or not isinstance(result, dict):
            why = "no answer" if frame is None else f"answered {frame.value.get('error')}"
            p.fail(
                "V1-IN-02", f"asked for {asked}: {why}{link.exit_note()}", [frame] if frame else []
            )
            continue
        got = result.get("protocolVersion")
        p.judge(
            "V1-IN-02",
            got == 1 and type(got) is int,
            f"asked for {asked}: answered {got!r}",
            [frame],
        )
        problems = _shape_problems(result)
        p.judge(
            "V1-IN-01",
            not problems,
            "; ".join(problems) or "agentCapabilities, agentInfo and authMethods in v1's shape",
            [frame],
        )
        if asked == 1:
            _advertised(p, result)


def _shape_problems(result: dict[str, Any]) -> list[str]:
    problems = []
    version = result.get("protocolVersion")
    if type(version) is not int or not 0 <= version <= 65535:
        problems.append(f"protocolVersion {version!r} is not an integer 0..65535")
    info = result.get("agentInfo")
    if info is not None and not (
        isinstance(info, dict) and all(isinstance(info.get(k), str) for k in ("name", "version"))
    ):
        problems.append("agentInfo needs a string name and version")
    if not isinstance(result.get("authMethods", []), list):
        problems.append("authMethods is not an array")
    caps = result.get("agentCapabilities", {})
    if not isinstance(caps, dict):
        return [*problems, "agentCapabilities is not an object"]
    if not isinstance(caps.get("loadSession", False), bool):
        problems.append("agentCapabilities.loadSession is not a boolean")
    for group, flags in _FLAGS.items():
        node = caps.get(group, {})
        bad = [
            f for f in flags if isinstance(node, dict) and not isinstance(node.get(f, False), bool)
        ]
        if not isinstance(node, dict) or bad:
            problems.append(f"agentCapabilities.{group} needs boolean {', '.join(flags)}")
    return problems


def _advertised(p: Probe, result: dict[str, Any]) -> None:
    caps = result.get("agentCapabilities")
    caps = caps if isinstance(caps, dict) else {}
    on = ["loadSession"] if caps.get("loadSession") is True else []
    for group, flags in _FLAGS.items():
        node = caps.get(group)
        on += [f"{group}.{f}" for f in flags if isinstance(node, dict) and node.get(f) is True]
    p.ok("V1-IN-03", "advertises " + (", ".join(on) if on else "nothing beyond the baseline"))
    info = result.get("agentInfo")
    p.shared.agent.update(
        {
            "info": info if isinstance(info, dict) else {},
            "protocolVersion": result.get("protocolVersion"),
            "capabilities": caps,
        }
    )


async def load(p: Probe) -> None:
    """With ``loadSession``: one turn, then ``session/load`` of that session replays it
    before its answer, and nothing of it follows the answer (V1-SS-02)."""
    async with p.link() as link:
        caps = await p.handshake(link)
        if caps.get("loadSession") is not True:
            p.skip("V1-SS-02", "the agent does not advertise agentCapabilities.loadSession")
            return
        sid = await p.new_session(link)
        await run_v1_turn(p, link, sid, p.options.prompt, label="turn before the load")
        since = link.step(SESSION_LOAD.name)
        params = {"sessionId": sid, "cwd": p.cwd, "mcpServers": []}
        response = await link.call(SESSION_LOAD.name, params)
        await link.settle(p.grace)
        _judge_load(p, response, [f for f in link.frames[since:] if update_for(f, sid)])


def _judge_load(p: Probe, response: Frame | None, updates: list[Frame]) -> None:
    if response is None or "result" not in response.value:
        why = "no answer" if response is None else f"answered {response.value.get('error')}"
        p.fail("V1-SS-02", f"session/load: {why}", [response] if response else [])
        return
    before = [f for f in updates if f.index < response.index]
    after = [f for f in updates if f.index > response.index]
    p.judge(
        "V1-SS-02",
        bool(before) and not after,
        f"{len(before)} update(s) replayed before the answer"
        + (f", {len(after)} after it" if after else "")
        if before
        else "nothing was replayed before the answer (the session had one turn)",
        [response, *after[:3]],
    )


#: Every probe of a v1 agent by name (the names of the v2 probes they correspond to).
V1_PROBES: Final[dict[str, ProbeSpec]] = {
    spec.name: spec
    for spec in (
        *V1_TURN_PROBES,
        *V1_PERMISSION_PROBES,
        ProbeSpec(
            "sessions", load, ("V1-SS-02",), "v1: session/load replays, then answers", timing=True
        ),
        ProbeSpec(
            "handshake",
            handshake,
            ("V1-IN-01", "V1-IN-02", "V1-IN-03"),
            "v1: initialize asking for 2, 1 and 65535",
        ),
        ProbeSpec(
            "jsonrpc",
            jsonrpc,
            ("V1-TR-09", "V1-TR-08", "V1-TR-11", "V1-EX-04"),
            "ids and their types, unknown methods, extension requests, notifications",
        ),
        ProbeSpec("invalid-json", invalid_json, ("V1-TR-13:json",), "a line that is not JSON"),
        ProbeSpec(
            "invalid-request",
            invalid_request,
            ("V1-TR-13:request",),
            "a JSON object that is not a request",
        ),
        ProbeSpec("invalid-utf8", invalid_utf8, ("V1-TR-01:utf8",), "a request with invalid UTF-8"),
        ProbeSpec(
            "shutdown-idle", shutdown_idle, ("V1-TR-06",), "stdin closed while idle", timing=True
        ),
    )
}
