"""The per-session prompt slot and its FIFO of held prompts, as a pure state machine.

One piece of foreground work owns a session's *slot* at a time. A prompt that arrives
while the slot is taken is *held* (Nov PL-22) as a :class:`Ticket`; when the work ends the
slot is *handed over* to the oldest held ticket, whose task then *takes* it.
``session/cancel`` withdraws every held ticket and the one the slot was just handed to
(its prompt was not inserted yet: PL-18), and marks running work as cancelling.

:data:`TRANSITIONS` is the whole table of slot states: ``free`` --acquire-->
``working`` --cancel--> ``cancelling``; either of those --release--> ``free``, or
--hand_over--> ``handoff`` (tickets were held) --take--> ``working``; ``handoff``
--cancel--> ``withdrawn`` --release / hand_over--> (the withdrawn ticket's task passes the
slot on). ``hold`` and ``abandon`` (a held ticket's task went away) keep the state.

Pure: no IO, no event loop. :class:`acp2.agent.session.AgentSession` feeds it and wakes
the tasks of the tickets it returns.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final, Literal

from acp2.errors import LocalProtocolError

__all__ = [
    "TRANSITIONS",
    "PromptQueue",
    "QueueEvent",
    "SlotState",
    "Ticket",
    "TicketStatus",
]

#: ``free``: nobody owns the slot. ``working``: foreground work owns it. ``cancelling``:
#: the same, after ``session/cancel``. ``handoff``: handed to a held ticket whose task has
#: not taken it yet. ``withdrawn``: the same ticket, withdrawn before it took the slot.
SlotState = Literal["free", "working", "cancelling", "handoff", "withdrawn"]
#: ``hold`` is an acquire while the slot is taken; ``hand_over`` a release with tickets
#: held; ``abandon`` a held ticket whose task went away.
QueueEvent = Literal["acquire", "hold", "take", "release", "hand_over", "cancel", "abandon"]
#: ``refused``: the session is closing. ``running``: the ticket's task owns the slot.
#: ``revoked``: granted, then withdrawn: its task must still take (and so pass on) the slot.
TicketStatus = Literal["refused", "held", "granted", "running", "withdrawn", "revoked"]

#: ``TRANSITIONS[state][event] -> next state``. A missing entry is an illegal transition.
TRANSITIONS: Final[Mapping[SlotState, Mapping[QueueEvent, SlotState]]] = MappingProxyType(
    {
        "free": MappingProxyType({"acquire": "working", "cancel": "free"}),
        "working": MappingProxyType(
            {
                "hold": "working",
                "abandon": "working",
                "release": "free",
                "hand_over": "handoff",
                "cancel": "cancelling",
            }
        ),
        "cancelling": MappingProxyType(
            {
                "hold": "cancelling",
                "abandon": "cancelling",
                "release": "free",
                "hand_over": "handoff",
                "cancel": "cancelling",
            }
        ),
        "handoff": MappingProxyType(
            {"hold": "handoff", "abandon": "handoff", "take": "working", "cancel": "withdrawn"}
        ),
        "withdrawn": MappingProxyType(
            {
                "hold": "withdrawn",
                "abandon": "withdrawn",
                "release": "free",
                "hand_over": "handoff",
                "cancel": "withdrawn",
            }
        ),
    }
)


class Ticket:
    """One prompt's claim on the slot; :attr:`status` says where it stands."""

    __slots__ = ("status",)

    def __init__(self, status: TicketStatus) -> None:
        self.status: TicketStatus = status

    @property
    def running(self) -> bool:
        """True while the ticket's task owns the slot."""
        return self.status == "running"

    def __repr__(self) -> str:
        return f"Ticket({self.status!r})"


class PromptQueue:
    """The slot and the FIFO of one session. Every method returns the ticket whose task
    must be woken now (or None); illegal moves raise LocalProtocolError, changing nothing."""

    __slots__ = ("_handoff", "_held", "closing", "state")

    def __init__(self) -> None:
        self.state: SlotState = "free"
        #: Set by :meth:`close`: every later :meth:`acquire` is refused.
        self.closing = False
        # A list, not a deque: a session rarely holds more than one or two prompts, and an
        # empty list is a tenth of an empty deque's size (there is one per session).
        self._held: list[Ticket] = []
        self._handoff: Ticket | None = None

    @property
    def held(self) -> int:
        """How many tickets wait for the slot."""
        return len(self._held)

    @property
    def cancel_requested(self) -> bool:
        """True once ``session/cancel`` reached the work that owns the slot."""
        return self.state == "cancelling"

    def can(self, event: QueueEvent) -> bool:
        """Return True when ``event`` is legal in the current state."""
        return event in TRANSITIONS[self.state]

    def _move(self, event: QueueEvent) -> None:
        target = TRANSITIONS[self.state].get(event)
        if target is None:
            raise LocalProtocolError(f"illegal prompt-queue move: {event!r} while {self.state!r}")
        self.state = target

    def acquire(self) -> Ticket:
        """A new prompt's ticket: ``running`` (the slot was free), ``held`` or ``refused``."""
        if self.closing:
            return Ticket("refused")
        if self.state == "free":
            self._move("acquire")
            return Ticket("running")
        self._move("hold")
        ticket = Ticket("held")
        self._held.append(ticket)
        return ticket

    def release(self) -> Ticket | None:
        """End the owner's work; hand the slot to the oldest held ticket (returned)."""
        if not self._held:
            self._move("release")
            return None
        self._move("hand_over")
        ticket = self._held.pop(0)
        ticket.status = "granted"
        self._handoff = ticket
        return ticket

    def take(self, ticket: Ticket) -> Ticket | None:
        """The woken task of ``ticket`` takes what it was given: a granted ticket becomes
        ``running``; a revoked one becomes ``withdrawn`` and passes the slot on."""
        if ticket.status == "granted":
            self._move("take")
            self._handoff = None
            ticket.status = "running"
            return None
        if ticket.status == "revoked":
            self._handoff = None
            ticket.status = "withdrawn"
            return self.release()
        return None

    def abandon(self, ticket: Ticket) -> Ticket | None:
        """The task of ``ticket`` went away (cancelled) before it took the slot: drop the
        ticket, or pass on the slot it was handed (so the slot is never lost)."""
        if ticket.status == "held":
            self._move("abandon")
            self._held.remove(ticket)
            ticket.status = "withdrawn"
            return None
        if ticket.status == "granted":
            self.take(ticket)
            return self.release()
        return self.take(ticket)

    def cancel(self) -> tuple[bool, list[Ticket]]:
        """Withdraw held tickets and a just-granted one, and mark running work cancelling.

        Returns (True if work owns the slot and must be cancelled, the withdrawn tickets
        to wake)."""
        woken = list(self._held)
        self._held.clear()
        for ticket in woken:
            ticket.status = "withdrawn"
        running = self.state in ("working", "cancelling")
        if self._handoff is not None and self.state == "handoff":
            self._handoff.status = "revoked"
        self._move("cancel")
        return running, woken

    def close(self) -> tuple[bool, list[Ticket]]:
        """Refuse every later prompt, then :meth:`cancel`."""
        self.closing = True
        return self.cancel()
