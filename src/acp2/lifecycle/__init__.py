"""The prompt-lifecycle foreground state machine, as data (pure: no IO, no event loop).

Foreground work in a session moves between three states, driven by four events::

    idle ──start──▶ running ──block──▶ requires_action
      ▲  └──block (work starts blocked, Nov)──────▲  │
      │                │ ◀──────unblock───────────┘  │
      └──────stop──────┴─────────stop────────────────┘

:data:`TRANSITIONS` is the whole table. An agent runtime drives a
:class:`ForegroundMachine` on its own side, so every ``requires_action`` is followed by
``running`` or ``idle`` and exactly one ``idle`` ends each piece of foreground work.
A *receiving* client never uses the machine to judge its peer: unknown states and stop
reasons are recorded, never fatal (see :mod:`acp2.state`).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final, Literal, TypeAlias, get_args

from acp2.errors import LocalProtocolError
from acp2.schema.common import STOP_REASONS as _STOP_REASONS
from acp2.schema.common import ForegroundState, StopReason

__all__ = [
    "BLOCK",
    "CANCELLED",
    "END_TURN",
    "ERROR",
    "EVENTS",
    "IDLE",
    "MAX_TOKENS",
    "MAX_TURN_REQUESTS",
    "REFUSAL",
    "REQUIRES_ACTION",
    "RUNNING",
    "START",
    "STATES",
    "STOP",
    "STOP_REASONS",
    "TRANSITIONS",
    "UNBLOCK",
    "Event",
    "ForegroundMachine",
    "ForegroundState",
    "StopReason",
    "is_custom",
    "is_known_stop_reason",
]

#: The events that move foreground work between states.
Event: TypeAlias = Literal["start", "block", "unblock", "stop"]

IDLE: Final = "idle"
RUNNING: Final = "running"
REQUIRES_ACTION: Final = "requires_action"
STATES: Final[frozenset[ForegroundState]] = frozenset(get_args(ForegroundState))

START: Final = "start"
BLOCK: Final = "block"
UNBLOCK: Final = "unblock"
STOP: Final = "stop"
EVENTS: Final[frozenset[Event]] = frozenset(get_args(Event))

END_TURN: Final = "end_turn"
MAX_TOKENS: Final = "max_tokens"
MAX_TURN_REQUESTS: Final = "max_turn_requests"
REFUSAL: Final = "refusal"
#: The stop reason of work ended by ``session/cancel`` (not the cancelled permission
#: outcome of :mod:`acp2.client.permissions`).
CANCELLED: Final = "cancelled"
#: Nov only: foreground work failed after the prompt was inserted (PL-23).
ERROR: Final = "error"
#: Every stop reason either schema defines (:data:`acp2.schema.STOP_REASONS`, as a set).
#: Others are custom (``_x``) or future values.
STOP_REASONS: Final[frozenset[StopReason]] = frozenset(_STOP_REASONS)

#: ``TRANSITIONS[state][event] -> next state``. A missing entry is an illegal transition.
#: ``idle --block--> requires_action`` is Nov PL-06: work that starts already blocked.
TRANSITIONS: Final[Mapping[ForegroundState, Mapping[Event, ForegroundState]]] = MappingProxyType(
    {
        IDLE: MappingProxyType({START: RUNNING, BLOCK: REQUIRES_ACTION}),
        RUNNING: MappingProxyType({BLOCK: REQUIRES_ACTION, STOP: IDLE}),
        REQUIRES_ACTION: MappingProxyType({UNBLOCK: RUNNING, STOP: IDLE}),
    }
)


def is_custom(value: str) -> bool:
    """Return True when an open-enum ``value`` is an implementation's own (starts with ``_``).

    Unknown values that do not start with ``_`` are reserved for future ACP versions
    (EX-06); they are never custom.
    """
    return value.startswith("_")


def is_known_stop_reason(value: str) -> bool:
    """Return True when ``value`` is a stop reason defined by the Aug or Nov schema."""
    return value in STOP_REASONS


class ForegroundMachine:
    """The foreground state of one session on the side that reports it (the agent).

    Starts in ``idle`` (new sessions start idle, D-14) unless ``state`` says otherwise.
    """

    __slots__ = ("_state",)

    def __init__(self, state: ForegroundState = IDLE) -> None:
        """Create a machine in ``state``; raises ``ValueError`` for a non-standard state."""
        if state not in STATES:
            raise ValueError(f"not a foreground state: {state!r}")
        self._state: ForegroundState = state

    @property
    def state(self) -> ForegroundState:
        """The current state: ``idle``, ``running`` or ``requires_action``."""
        return self._state

    @property
    def busy(self) -> bool:
        """True while foreground work is in progress (running or blocked)."""
        return self._state != IDLE

    def can(self, event: Event) -> bool:
        """Return True when ``event`` is legal in the current state."""
        return event in TRANSITIONS[self._state]

    def apply(self, event: Event) -> ForegroundState:
        """Apply ``event`` and return the new state.

        Raises :class:`~acp2.errors.LocalProtocolError` on an illegal transition (e.g. a
        second ``stop``), leaving the state unchanged.
        """
        target = TRANSITIONS[self._state].get(event)
        if target is None:
            raise LocalProtocolError(
                f"illegal foreground transition: {event!r} while {self._state!r}"
            )
        self._state = target
        return target

    def __repr__(self) -> str:
        return f"ForegroundMachine(state={self._state!r})"
