"""Probes: ``initialize``, the info and capability shapes, version negotiation (IN-*)."""

from __future__ import annotations

from typing import Any

from acp2.check.frames import Frame
from acp2.check.probes.base import Probe, ProbeSpec, has_capability

__all__ = ["HANDSHAKE_PROBES"]

_MARKERS = (
    "session",
    "session.prompt.image",
    "session.prompt.audio",
    "session.prompt.embeddedContext",
    "session.mcp.stdio",
    "session.mcp.http",
    "session.delete",
    "session.additionalDirectories",
    "auth",
)


def _result(frame: Frame | None) -> Any:
    return frame.value.get("result") if frame is not None else None


async def handshake(p: Probe) -> None:
    """initialize v2: the result's shape (IN-03, IN-15, IN-07) and the echoed version."""
    async with p.link() as link:
        frame = await p.initialize(link)
        result = _result(frame)
        if frame is None or not isinstance(result, dict):
            why = "no answer" if frame is None else "an error or a non-object result"
            p.fail("IN-03", f"initialize got {why}{link.exit_note()}", [frame] if frame else [])
            return
        version = result.get("protocolVersion")
        p.judge(
            "IN-04:2",
            version == 2 and type(version) is int,
            f"protocolVersion 2 answered with {version!r}",
            [frame],
        )
        _check_shape(p, frame, result)


def _check_shape(p: Probe, frame: Frame, result: dict[str, Any]) -> None:
    version, info, caps = (
        result.get("protocolVersion"),
        result.get("info"),
        result.get("capabilities"),
    )
    problems = []
    if type(version) is not int or not 0 <= version <= 65535:
        problems.append(f"protocolVersion {version!r} is not an integer 0..65535")
    if not isinstance(info, dict):
        problems.append("info is missing")
    if caps is not None and not isinstance(caps, dict):
        problems.append("capabilities is not an object")
    p.judge(
        "IN-03",
        not problems,
        "; ".join(problems) or "version, info and capabilities present",
        [frame],
    )
    info = info if isinstance(info, dict) else {}
    bad = [k for k in ("name", "version") if not isinstance(info.get(k), str)]
    if info.get("title") is not None and not isinstance(info.get("title"), str):
        bad.append("title")
    p.judge(
        "IN-15",
        not bad,
        f"info fields not strings: {', '.join(bad)}"
        if bad
        else f"info: {info.get('name')} {info.get('version')}",
        [frame],
    )
    caps = caps if isinstance(caps, dict) else {}
    booleans = list(_boolean_markers(caps, "capabilities"))
    p.judge(
        "IN-07",
        not booleans,
        "boolean markers (v1 style): " + ", ".join(booleans)
        if booleans
        else "all markers are objects",
        [frame],
    )
    advertised = [m for m in _MARKERS if has_capability(caps, m)]
    methods = result.get("authMethods")
    auth = f"; authMethods: {len(methods)}" if isinstance(methods, list) and methods else ""
    p.ok(
        "IN-10",
        ("advertises " + ", ".join(advertised) if advertised else "advertises nothing") + auth,
    )
    p.shared.agent.update({"info": info, "protocolVersion": version, "capabilities": caps})


def _boolean_markers(node: dict[str, Any], path: str) -> list[str]:
    found = []
    for key, value in node.items():
        if key == "_meta":
            continue
        if isinstance(value, bool):
            found.append(f"{path}.{key}")
        elif isinstance(value, dict):
            found.extend(_boolean_markers(value, f"{path}.{key}"))
    return found


async def version_one(p: Probe) -> None:
    """protocolVersion 1 from a client: Aug wants a result, Nov a version <= 1 or -32022.

    The request is valid under v1 and v2 (:func:`~acp2.check.versions.initialize_params`),
    so a dual-version agent may answer it in v1; that answer is validated against the v1
    schema (the audit), and its version judged here like any other."""
    async with p.link() as link:
        frame = await p.initialize(link, 1)
        if frame is None:
            for key in ("IN-04:1:aug", "IN-04:1:nov"):
                p.fail(key, f"no answer to initialize(protocolVersion 1){link.exit_note()}")
            return
        result, error = _result(frame), frame.value.get("error")
        got = result.get("protocolVersion") if isinstance(result, dict) else None
        if isinstance(result, dict):
            p.judge(
                "IN-04:1:aug", type(got) is int and got >= 1, f"answered version {got!r}", [frame]
            )
            p.judge(
                "IN-04:1:nov",
                type(got) is int and got <= 1,
                f"answered version {got!r} (Nov: highest supported <= 1, else -32022)",
                [frame],
            )
            return
        p.fail(
            "IN-04:1:aug", "answered with an error; Aug answers the agent's newest version", [frame]
        )
        code = error.get("code") if isinstance(error, dict) else None
        data = error.get("data") if isinstance(error, dict) else None
        shaped = (
            isinstance(data, dict)
            and data.get("requested") == 1
            and isinstance(data.get("supported"), list)
        )
        p.judge(
            "IN-04:1:nov",
            code == -32022 and shaped,
            "-32022 with data {requested, supported}"
            if code == -32022 and shaped
            else f"error {code!r} (Nov wants -32022 with data {{requested, supported}})",
            [frame],
        )


async def version_max(p: Probe) -> None:
    """protocolVersion 65535: both drafts answer the agent's newest version (IN-04)."""
    async with p.link() as link:
        frame = await p.initialize(link, 65535)
        got = _result(frame).get("protocolVersion") if isinstance(_result(frame), dict) else None
        if frame is None:
            p.fail(
                "IN-04:65535", f"no answer to initialize(protocolVersion 65535){link.exit_note()}"
            )
            return
        p.judge(
            "IN-04:65535",
            type(got) is int and 2 <= got < 65535,
            f"answered {got!r}" if got is not None else "answered with an error",
            [frame],
        )


HANDSHAKE_PROBES = (
    ProbeSpec(
        "handshake",
        handshake,
        ("IN-03", "IN-15", "IN-07", "IN-10", "IN-04:2"),
        "initialize v2: result shape, info, capability markers",
    ),
    ProbeSpec(
        "version-1",
        version_one,
        ("IN-04:1:aug", "IN-04:1:nov"),
        "initialize asking for protocolVersion 1 (D-05)",
        # A dual-version agent answers it on its v1 path, which may load more code first.
        timing=True,
    ),
    ProbeSpec(
        "version-65535",
        version_max,
        ("IN-04:65535",),
        "initialize asking for protocolVersion 65535",
    ),
)
