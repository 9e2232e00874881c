"""The effects the model loop yields, the events it emits and the outcomes it receives.

Plain frozen values: the loop (:mod:`acp2.coder.loop`) builds them, the driver
(:mod:`acp2.coder.driver`) or a test performs them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from acp2.coder.messages import ModelRequest, ToolRequest

__all__ = [
    "AskPermission",
    "CallModel",
    "Effect",
    "Emit",
    "Event",
    "FinishTool",
    "PermissionAnswer",
    "PlanItem",
    "ReportUsage",
    "RunTool",
    "Say",
    "ShowPlan",
    "StartTool",
    "TakeSteering",
    "ToolOutcome",
]


# -- effects ------------------------------------------------------------------------


@dataclass(frozen=True)
class CallModel:
    """Run one model exchange; the outcome is its :class:`ModelReply`."""

    request: ModelRequest


@dataclass(frozen=True)
class TakeSteering:
    """Collect what the user steered into the running work since the last time
    (``_acp2/session/steer``); the outcome is a tuple of texts, oldest first (empty, or
    None from a driver that has no steering: nothing)."""


@dataclass(frozen=True)
class StartTool:
    """Report a requested tool call (``pending``) and check it; the outcome is an error
    text the model should see (unknown tool, bad arguments, path outside the roots,
    edit that cannot apply...) or None when the call may go ahead."""

    call: ToolRequest


@dataclass(frozen=True)
class AskPermission:
    """Ask the user whether ``call`` may run; the outcome is a :class:`PermissionAnswer`."""

    call: ToolRequest
    category: str


@dataclass(frozen=True)
class RunTool:
    """Run a started, permitted tool call to its final status; outcome :class:`ToolOutcome`."""

    call: ToolRequest


@dataclass(frozen=True)
class Say:
    """Agent text that did not come from the model (e.g. why the loop stopped)."""

    text: str


@dataclass(frozen=True)
class PlanItem:
    """One plan entry as the model gave it."""

    content: str
    priority: str = "medium"
    status: str = "pending"


@dataclass(frozen=True)
class ShowPlan:
    """The complete current plan."""

    entries: tuple[PlanItem, ...]


@dataclass(frozen=True)
class ReportUsage:
    """Tokens in the context after the last exchange."""

    used: int


@dataclass(frozen=True)
class FinishTool:
    """End a started tool call without running it (``failed``), showing ``message``."""

    call: ToolRequest
    message: str


Event: TypeAlias = Say | ShowPlan | ReportUsage | FinishTool


@dataclass(frozen=True)
class Emit:
    """Report ``event`` to the client; no outcome."""

    event: Event


Effect: TypeAlias = CallModel | StartTool | AskPermission | RunTool | Emit | TakeSteering


# -- outcomes -------------------------------------------------------------------------


@dataclass(frozen=True)
class PermissionAnswer:
    """The user's decision: ``approved``, and whether to remember it (``always``)."""

    approved: bool
    always: bool = False


@dataclass(frozen=True)
class ToolOutcome:
    """What a tool run produced for the model: ``ok`` and the ``output`` text."""

    ok: bool
    output: str
