"""Read the JSON Lines logs written by ``tap.py``.

A log holds one record per line that crossed the agent's stdio, in the order the tap
saw them: ``{"seq", "t", "dir", "line"[, "partial"]}``. ``read_log`` turns them into
``Frame`` values with the JSON-RPC message parsed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

CLIENT_TO_AGENT = "client->agent"
AGENT_TO_CLIENT = "agent->client"

Sender = Literal["client", "agent"]


@dataclass(frozen=True)
class Frame:
    """One line on the wire."""

    seq: int
    t: float
    direction: str
    line: str
    message: Any  # the parsed JSON, or None when the line is not JSON
    partial: bool = False

    @property
    def sender(self) -> Sender:
        return "client" if self.direction == CLIENT_TO_AGENT else "agent"

    @property
    def method(self) -> str | None:
        message = self.message
        return message.get("method") if isinstance(message, dict) else None

    @property
    def kind(self) -> str:
        """``request``, ``notification``, ``response``, ``batch`` or ``invalid``."""
        message = self.message
        if isinstance(message, list):
            return "batch"
        if not isinstance(message, dict):
            return "invalid"
        if "method" in message:
            return "request" if "id" in message else "notification"
        if "id" in message:
            return "response"
        return "invalid"


def read_log(path: str | Path) -> list[Frame]:
    """All frames of a tap log, in ``seq`` order. Blank lines are skipped."""
    frames = []
    with open(path, encoding="utf-8") as handle:
        for text in handle:
            if not text.strip():
                continue
            record = json.loads(text)
            line = record["line"]
            try:
                message = json.loads(line) if line.strip() else None
            except ValueError:
                message = None
            frames.append(
                Frame(
                    seq=record["seq"],
                    t=record["t"],
                    direction=record["dir"],
                    line=line,
                    message=message,
                    partial=record.get("partial", False),
                )
            )
    frames.sort(key=lambda frame: frame.seq)
    return frames


def messages(frames: Iterable[Frame], sender: Sender | None = None) -> Iterator[dict[str, Any]]:
    """The parsed JSON-RPC objects, optionally only those sent by ``sender``."""
    for frame in frames:
        if isinstance(frame.message, dict) and (sender is None or frame.sender == sender):
            yield frame.message


def session_updates(frames: Iterable[Frame]) -> list[dict[str, Any]]:
    """The ``update`` objects of every ``session/update`` notification, in order."""
    return [
        message["params"]["update"]
        for message in messages(frames, "agent")
        if message.get("method") == "session/update" and "id" not in message
    ]


def methods(frames: Iterable[Frame], sender: Sender | None = None) -> list[str]:
    """The method of every request and notification, in order."""
    return [m["method"] for m in messages(frames, sender) if "method" in m]


def selected(option_id: str, *, implicit: bool = False) -> dict[str, Any]:
    """The result of a permission answer that selected ``option_id``; ``implicit`` for one
    an acp2 policy gave without asking anyone (``deny_all``), which says so in ``_meta``
    (acp2.schema.extensions)."""
    result: dict[str, Any] = {"outcome": {"outcome": "selected", "optionId": option_id}}
    if implicit:
        result["_meta"] = {"acp2": {"implicit": True}}
    return result
